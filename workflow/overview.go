package workflow

import (
	"context"
	"time"

	"github.com/riverbpmn/riverbpmn/exclusive"
	"github.com/riverbpmn/riverbpmn/overview"
)

// Overviews returns the handle on the schema's overview (package
// overview): Read reads the unfinished jobs per process definition and job
// definition by state, held by reason and waiting on an exclusive key, open
// incidents, River's queues and whether a client works them (a report
// within QueueWorkedWithin), and jobs completed and failed and incidents
// opened per step over a window up to now, judging exclusive keys by the
// scope in force in the schema. On an engine without a pool every call
// fails.
func (e *Engine) Overviews() *overview.Overviews {
	return e.overviews.get(func() *overview.Overviews {
		return overview.New(overview.HandleConfig{
			DB:     e.db(),
			Schema: e.config.Schema,
			RootScope: func(ctx context.Context) (bool, error) {
				if e.dbPool == nil {
					return false, errNoPool
				}
				scope, err := e.Exclusive().Scope(ctx)
				return scope == exclusive.RootProcessInstance, err
			},
			WorkedWithin: QueueWorkedWithin,
		})
	})
}

// Overview reads the schema's overview (package overview): the unfinished
// jobs per process definition and job definition by state, held by reason
// and waiting on an exclusive key, open incidents, River's queues and
// whether a client works them, and jobs completed and failed and incidents
// opened per step over the window up to now.
//
// Deprecated: use [Engine.Overviews] and [overview.Overviews.Read].
func (e *Engine) Overview(ctx context.Context, window, step time.Duration) (*overview.Overview, error) {
	return e.Overviews().Read(ctx, window, step)
}
