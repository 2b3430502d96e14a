package workflow

import (
	"context"

	"github.com/riverbpmn/riverbpmn/bulk"
	"github.com/riverbpmn/riverbpmn/jobcontrol"
)

// Bulk returns the handle on bulk actions and bulk operations in the
// engine's schema (package bulk): run an action over a selection of jobs or
// incidents now (RetryIncidents, SuspendJobs, ActivateJobs, StopJobs,
// SetJobPriority), or record it as an operation (Create) that Run runs with
// saved progress and a heartbeat, Claim takes over when its runner died, and
// Get and List show. The console runs its bulk forms this way. On an engine
// without a pool every call fails.
func (e *Engine) Bulk() *bulk.Operations {
	return e.bulk.get(func() *bulk.Operations {
		return bulk.New(bulk.HandleConfig{
			DB:       e.db(),
			Schema:   e.config.Schema,
			Suspend:  e.Suspensions().SuspendJob,
			Activate: e.Suspensions().ActivateJob,
			Stop: func(ctx context.Context, id int64) (bool, error) {
				res, err := e.Jobs().Stop(ctx, id)
				if err != nil {
					return false, err
				}
				return res.Outcome != jobcontrol.StopAlreadyFinished, nil
			},
			SetPriority: func(ctx context.Context, id, p int64) error {
				return e.Jobs().SetPriority(ctx, id, p)
			},
			IncidentsRevived: func(ctx context.Context, n int64) { e.tel.IncidentsChanged(ctx, 0, n) },
			NotFound:         ErrNotFound,
		})
	})
}

// BulkRetryIncidents gives the jobs of the selected open incidents
// opts.Retries retries.
//
// Deprecated: use [Engine.Bulk] and [bulk.Operations.RetryIncidents].
func (e *Engine) BulkRetryIncidents(ctx context.Context, sel *bulk.Incidents, opts *bulk.RetryOpts) (*bulk.Progress, error) {
	return e.Bulk().RetryIncidents(ctx, sel, opts)
}

// BulkSuspendJobs suspends the selected jobs.
//
// Deprecated: use [Engine.Bulk] and [bulk.Operations.SuspendJobs].
func (e *Engine) BulkSuspendJobs(ctx context.Context, sel *bulk.Jobs, opts *bulk.JobOpts) (*bulk.Progress, error) {
	return e.Bulk().SuspendJobs(ctx, sel, opts)
}

// BulkActivateJobs activates the selected jobs.
//
// Deprecated: use [Engine.Bulk] and [bulk.Operations.ActivateJobs].
func (e *Engine) BulkActivateJobs(ctx context.Context, sel *bulk.Jobs, opts *bulk.JobOpts) (*bulk.Progress, error) {
	return e.Bulk().ActivateJobs(ctx, sel, opts)
}

// BulkStopJobs asks the selected jobs to stop.
//
// Deprecated: use [Engine.Bulk] and [bulk.Operations.StopJobs].
func (e *Engine) BulkStopJobs(ctx context.Context, sel *bulk.Jobs, opts *bulk.JobOpts) (*bulk.Progress, error) {
	return e.Bulk().StopJobs(ctx, sel, opts)
}

// BulkSetJobPriority sets the BPMN priority of the selected jobs.
//
// Deprecated: use [Engine.Bulk] and [bulk.Operations.SetJobPriority].
func (e *Engine) BulkSetJobPriority(ctx context.Context, sel *bulk.Jobs, p int64, opts *bulk.JobOpts) (*bulk.Progress, error) {
	return e.Bulk().SetJobPriority(ctx, sel, p, opts)
}
