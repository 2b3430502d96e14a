package workflow

import (
	"context"
	"fmt"

	"github.com/riverbpmn/riverbpmn/exclusive"
	"github.com/riverbpmn/riverbpmn/liveness"
)

// Exclusive returns the handle on the exclusive jobs of the engine's schema
// (package exclusive): Locks lists the held keys a page at a time, Wait
// says why a job waits for its key, Scope, RecordedScope, SetScope and
// ForceScope read and record the scope in force, ConfiguredScope is the
// engine's own scope, DeleteStaleLocks tidies the lock table, HeadIndexes,
// EnableHeadIndexes (for orders, Acquisition.Order) and DisableHeadIndexes
// list, build and drop the head-of-key indexes. On an engine without a pool
// every call fails.
func (e *Engine) Exclusive() *exclusive.Exclusive {
	return e.exclusiveHandle.get(func() *exclusive.Exclusive {
		return exclusive.New(exclusive.HandleConfig{
			DB:                 e.db(),
			Schema:             e.config.Schema,
			Configured:         e.config.ExclusiveScope,
			NotFound:           ErrNotFound,
			ClientsAlive:       e.clientsAlive,
			SetScope:           e.setExclusiveScope,
			HeadIndexes:        e.exclusiveHeadIndexNames,
			EnableHeadIndexes:  e.enableExclusiveHeadIndexes,
			DisableHeadIndexes: func(ctx context.Context) error { return exclusiveHeadIndexes.disable(ctx, e) },
		})
	})
}

// clientsAlive says, for each client id that records liveness sessions in
// the engine's schema, whether one of them is alive (exclusive.Lock.ClientGone).
func (e *Engine) clientsAlive(ctx context.Context) (map[string]bool, error) {
	sessions, err := liveness.Sessions(ctx, e.db(), e.config.Schema)
	if err != nil {
		return nil, fmt.Errorf("workflow: %w", err)
	}
	alive := map[string]bool{}
	for _, s := range sessions {
		alive[s.ClientID] = alive[s.ClientID] || (s.Alive && s.DeadSince == nil && s.Superseded == nil)
	}
	return alive, nil
}
