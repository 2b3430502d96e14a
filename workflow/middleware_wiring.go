package workflow

import (
	"log/slog"
	"slices"
	"sync"
)

// How a starting client knows it has the engine's middleware without
// sending its wiring probe through the user's insert middleware (where an
// audit or metrics middleware would count an insert nobody made).
//
// river.NewClient hands the client's archetype to every middleware that
// embeds a riverBaseService (baseservice.Init copies the archetype's
// logger into it), then to the driver and the pilot (PilotInit), in that
// order and in the same call. The engine's middleware records each base it
// hands River; the pilot claims the newest unclaimed one holding its
// archetype's logger. A claim proves that this client's config holds the
// engine's middleware, and the client starts without a probe. Without one
// the client probes as before (pilot.checkWiring). River gives each client
// built without a logger a logger of its own; clients given one logger can
// be mistaken for each other only when one of them lacks the middleware
// and is built at the same moment as one that has it, or after a client
// with the engine's middleware on another driver than the engine's (whose
// base nobody claims): it then starts without the probe, and its inserts
// are still refused (checkInsertWiring).

// maxMiddlewareBases bounds the unclaimed bases an engine keeps: bases of
// clients built on another driver are never claimed.
const maxMiddlewareBases = 64

// middlewareBases are the bases the engine's middleware handed River and no
// pilot claimed yet.
type middlewareBases struct {
	mu    sync.Mutex
	bases []*riverBaseService
}

// GetBaseService is River's hook to give a middleware its client's archetype
// (river.NewClient calls it); riverbpmn uses it to know, when a client
// starts, that the client has the engine's middleware. It returns a new base
// on each call. It is not meant to be called otherwise.
func (m *middleware) GetBaseService() *riverBaseService {
	base := &riverBaseService{}
	b := &m.engine.middlewareBases
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.bases) >= maxMiddlewareBases {
		b.bases = slices.Delete(b.bases, 0, 1)
	}
	b.bases = append(b.bases, base)
	return base
}

// claim removes and reports the newest recorded base holding logger.
func (b *middlewareBases) claim(logger *slog.Logger) bool {
	if logger == nil {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for i := len(b.bases) - 1; i >= 0; i-- {
		if b.bases[i].Logger == logger {
			b.bases = slices.Delete(b.bases, i, i+1)
			return true
		}
	}
	return false
}

var _ riverWithBaseService = (*middleware)(nil)
