package workflow

import (
	"context"
	"time"

	"github.com/riverbpmn/riverbpmn/exclusive"
	"github.com/riverbpmn/riverbpmn/overview"
)

// Overview reads the schema's overview (package overview): the unfinished
// jobs per process definition and job definition by state, held by reason
// and waiting on an exclusive key, open incidents, River's queues and
// whether a client works them, and jobs completed and failed and incidents
// opened per step over the window up to now.
func (e *Engine) Overview(ctx context.Context, window, step time.Duration) (*overview.Overview, error) {
	if e.dbPool == nil {
		return nil, errNoPool
	}
	scope, err := e.ExclusiveScopeInForce(ctx)
	if err != nil {
		return nil, err
	}
	since := time.Now().UTC().Add(-window).Truncate(step)
	return overview.Read(ctx, e.dbPool, e.config.Schema, &overview.Options{
		Since: since, Step: step, RootScope: scope == exclusive.RootProcessInstance, WorkedWithin: QueueWorkedWithin,
	})
}
