package workflow

import (
	"context"
	"time"

	"github.com/riverqueue/river/rivershared/startstop"

	"github.com/riverbpmn/riverbpmn/events"
)

// Defaults of EventsConfig.
//
// Deprecated: use [events.DefaultRetention] and [events.DefaultPruneInterval].
const (
	DefaultEventsRetention     = events.DefaultRetention
	DefaultEventsPruneInterval = events.DefaultPruneInterval
)

// EventsConfig is the former name of [events.Config] (Config.Events).
//
// Deprecated: use [events.Config].
type EventsConfig = events.Config

// Events returns the handle on the job status events of the engine's schema
// (package events): Enable, Disable and Enabled switch them, List pages
// through them newest first, Read and Subscribe follow them, Count and
// Prune keep the outbox in check, Subscription and Subscriptions show how
// far named subscriptions are behind. On an engine without a pool every call
// fails.
func (e *Engine) Events() *events.Events {
	return e.events.get(func() *events.Events {
		return events.New(events.HandleConfig{DB: e.db(), Schema: e.config.Schema, NotFound: ErrNotFound})
	})
}

// startEvents runs when a client starts: with Config.Events, it switches
// events on.
func (e *Engine) startEvents(ctx context.Context) error {
	if e.config.Events == nil || e.dbPool == nil {
		return nil
	}
	return e.Events().Enable(ctx)
}

// eventsMaintenanceServices is the leader's outbox pruner, with
// Config.Events.
func (e *Engine) eventsMaintenanceServices() []startstop.Service {
	if e == nil || e.config.Events == nil || e.dbPool == nil {
		return nil
	}
	return []startstop.Service{e.Events().Pruner(*e.config.Events, e.logger())}
}

// EnableEvents switches job status events on in the engine's schema.
//
// Deprecated: use [Engine.Events] and [events.Events.Enable].
func (e *Engine) EnableEvents(ctx context.Context) error { return e.Events().Enable(ctx) }

// DisableEvents switches job status events off in the engine's schema.
//
// Deprecated: use [Engine.Events] and [events.Events.Disable].
func (e *Engine) DisableEvents(ctx context.Context) error { return e.Events().Disable(ctx) }

// EventsEnabled says whether job status events are on in the engine's schema.
//
// Deprecated: use [Engine.Events] and [events.Events.Enabled].
func (e *Engine) EventsEnabled(ctx context.Context) (bool, error) { return e.Events().Enabled(ctx) }

// SubscribeEvents follows job status events.
//
// Deprecated: use [Engine.Events] and [events.Events.Subscribe].
func (e *Engine) SubscribeEvents(ctx context.Context, cfg *events.SubscribeConfig, handle func(context.Context, []events.Event) error) error {
	return e.Events().Subscribe(ctx, cfg, handle)
}

// ReadEvents returns at most limit job status events after cursor.
//
// Deprecated: use [Engine.Events] and [events.Events.Read].
func (e *Engine) ReadEvents(ctx context.Context, after events.Cursor, limit int) ([]events.Event, error) {
	return e.Events().Read(ctx, after, limit)
}

// EventsPage returns at most limit job status events before the cursor
// before (nil: from the newest), newest first.
//
// Deprecated: use [Engine.Events] and [events.Events.List].
func (e *Engine) EventsPage(ctx context.Context, before *events.Cursor, processInstanceID string, limit int) (*events.Page, error) {
	if err := checkPageLimit(limit); err != nil {
		return nil, err
	}
	p := &events.ListParams{ProcessInstanceID: processInstanceID, Limit: limit}
	if before != nil {
		p.After = before.String()
	}
	res, err := e.Events().List(ctx, p)
	if err != nil {
		return nil, err
	}
	page := &events.Page{Events: res.Items, More: res.Next != ""}
	if page.More {
		page.Older, _ = events.ParseCursor(res.Next) // List made it
	}
	return page, nil
}

// CountEvents returns how many job status events are recorded.
//
// Deprecated: use [Engine.Events] and [events.Events.Count].
func (e *Engine) CountEvents(ctx context.Context, processInstanceID string) (n int64, atLeast bool, err error) {
	return e.Events().Count(ctx, processInstanceID)
}

// LastEvent returns the cursor of the last event written.
//
// Deprecated: use [Engine.Events] and [events.Events.Last].
func (e *Engine) LastEvent(ctx context.Context) (c events.Cursor, ok bool, err error) {
	return e.Events().Last(ctx)
}

// EventsNow returns the cursor of "from now on".
//
// Deprecated: use [Engine.Events] and [events.Events.Now].
func (e *Engine) EventsNow(ctx context.Context) (events.Cursor, error) { return e.Events().Now(ctx) }

// PruneEvents deletes the events written before olderThan.
//
// Deprecated: use [Engine.Events] and [events.Events.Prune].
func (e *Engine) PruneEvents(ctx context.Context, olderThan time.Time) (int64, error) {
	return e.Events().Prune(ctx, olderThan)
}

// PruneEventsCount returns how many events PruneEvents would delete now.
//
// Deprecated: use [Engine.Events] and [events.Events.PruneCount].
func (e *Engine) PruneEventsCount(ctx context.Context, olderThan time.Time) (int64, error) {
	return e.Events().PruneCount(ctx, olderThan)
}

// EventSubscription returns a named event subscription's saved position.
//
// Deprecated: use [Engine.Events] and [events.Events.Subscription].
func (e *Engine) EventSubscription(ctx context.Context, name string) (*events.Subscription, error) {
	return e.Events().Subscription(ctx, name)
}

// EventSubscriptions returns every named event subscription.
//
// Deprecated: use [Engine.Events] and [events.Events.Subscriptions].
func (e *Engine) EventSubscriptions(ctx context.Context) ([]events.Subscription, error) {
	return e.Events().Subscriptions(ctx)
}
