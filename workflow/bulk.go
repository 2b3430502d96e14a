package workflow

import (
	"context"
	"errors"

	"github.com/riverbpmn/riverbpmn/bulk"
	"github.com/riverbpmn/riverbpmn/jobcontrol"
)

// BulkRetryIncidents gives the jobs of the selected open incidents
// opts.Retries retries (Cockpit's batch "set retries"), in batches of short
// transactions, reporting progress after each; repeating or resuming it
// revives each job once (package bulk).
func (e *Engine) BulkRetryIncidents(ctx context.Context, sel *bulk.Incidents, opts *bulk.RetryOpts) (*bulk.Progress, error) {
	if e.dbPool == nil {
		return nil, errNoPool
	}
	var before int
	if opts != nil && opts.Resume != nil {
		before = opts.Resume.Changed // revived by the run being resumed
	}
	progress, err := bulk.RetryIncidents(ctx, e.dbPool, e.config.Schema, sel, opts)
	if progress != nil {
		e.tel.IncidentsChanged(ctx, 0, int64(progress.Changed-before))
	}
	return progress, err
}

// BulkSuspendJobs suspends the selected jobs (SuspendJob on each), batch
// after batch (package bulk).
func (e *Engine) BulkSuspendJobs(ctx context.Context, sel *bulk.Jobs, opts *bulk.JobOpts) (*bulk.Progress, error) {
	return e.forEachJob(ctx, sel, opts, "suspend", e.SuspendJob)
}

// BulkActivateJobs activates the selected jobs (ActivateJob on each).
func (e *Engine) BulkActivateJobs(ctx context.Context, sel *bulk.Jobs, opts *bulk.JobOpts) (*bulk.Progress, error) {
	return e.forEachJob(ctx, sel, opts, "activate", e.ActivateJob)
}

// BulkStopJobs asks the selected jobs to stop (StopJob on each); a job that
// already finished is left as it is and not counted as changed.
func (e *Engine) BulkStopJobs(ctx context.Context, sel *bulk.Jobs, opts *bulk.JobOpts) (*bulk.Progress, error) {
	return e.forEachJob(ctx, sel, opts, "stop", func(ctx context.Context, id int64) (bool, error) {
		res, err := e.StopJob(ctx, id)
		if err != nil {
			return false, err
		}
		return res.Outcome != jobcontrol.StopAlreadyFinished, nil
	})
}

// BulkSetJobPriority sets the BPMN priority of the selected jobs
// (SetJobPriority on each).
func (e *Engine) BulkSetJobPriority(ctx context.Context, sel *bulk.Jobs, p int64, opts *bulk.JobOpts) (*bulk.Progress, error) {
	return e.forEachJob(ctx, sel, opts, "priority", func(ctx context.Context, id int64) (bool, error) {
		return true, e.SetJobPriority(ctx, id, p)
	})
}

func (e *Engine) forEachJob(ctx context.Context, sel *bulk.Jobs, opts *bulk.JobOpts, action string, apply func(context.Context, int64) (bool, error)) (*bulk.Progress, error) {
	if e.dbPool == nil {
		return nil, errNoPool
	}
	o := bulk.JobOpts{}
	if opts != nil {
		o = *opts
	}
	o.Action = action
	return bulk.ForEachJob(ctx, e.dbPool, e.config.Schema, sel, &o, func(ctx context.Context, id int64) (bool, error) {
		changed, err := apply(ctx, id)
		if errors.Is(err, ErrNotFound) {
			// Deleted since it was selected (River's cleaner): nothing to do.
			return false, nil
		}
		return changed, err
	})
}
