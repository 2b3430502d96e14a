package bulk

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/riverbpmn/riverbpmn/internal/listpage"
	"github.com/riverbpmn/riverbpmn/internal/notfound"
)

// HandleConfig configures an Operations handle. The per-job actions come
// from the engine, which owns them (suspension, stop, priority); a job
// action whose error wraps NotFound is a job deleted since it was selected
// (River's cleaner), counted as unchanged.
type HandleConfig struct {
	// DB is the database; *pgxpool.Pool has what it needs.
	DB DB
	// Schema is the schema of the tables; empty means the search_path.
	Schema string
	// Suspend, Activate and Stop change one job and say whether it
	// changed; SetPriority sets one job's BPMN priority.
	Suspend, Activate, Stop func(ctx context.Context, jobID int64) (bool, error)
	SetPriority             func(ctx context.Context, jobID int64, priority int64) error
	// IncidentsRevived, if set, is told how many incidents a retry revived
	// (the engine's telemetry counts them).
	IncidentsRevived func(ctx context.Context, n int64)
	// NotFound, if set, is wrapped by Get's error for an unknown id beside
	// ErrNoOperation, and marks a job action's error as a job gone; nil
	// means ErrNotFound.
	NotFound error
}

// Operations is the handle on bulk actions and the bulk operations recorded
// in a schema (workflow.Engine.Bulk): run an action over a selection of
// jobs or incidents now (RetryIncidents, SuspendJobs, ActivateJobs,
// StopJobs, SetJobPriority), or record it as an operation (Create) that Run
// runs with saved progress and a heartbeat, Claim takes over when its
// runner died, and Get and List show.
type Operations struct {
	config HandleConfig
}

// ErrNotFound is wrapped by the handle's errors for an id or a name that
// names nothing: the one not-found error of every riverbpmn package
// (workflow.ErrNotFound, job.ErrNotFound, ... are this same value).
var ErrNotFound = notfound.Err

// New returns an Operations handle.
func New(config HandleConfig) *Operations {
	if config.NotFound == nil {
		config.NotFound = ErrNotFound
	}
	return &Operations{config: config}
}

// RetryIncidents gives the jobs of the selected open incidents
// opts.Retries retries (Cockpit's batch "set retries"), in batches of short
// transactions, reporting progress after each; repeating or resuming it
// revives each job once.
func (o *Operations) RetryIncidents(ctx context.Context, sel *Incidents, opts *RetryOpts) (*Progress, error) {
	var before int
	if opts != nil && opts.Resume != nil {
		before = opts.Resume.Changed // revived by the run being resumed
	}
	progress, err := RetryIncidents(ctx, o.config.DB, o.config.Schema, sel, opts)
	if progress != nil && o.config.IncidentsRevived != nil {
		o.config.IncidentsRevived(ctx, int64(progress.Changed-before))
	}
	return progress, err
}

// SuspendJobs suspends the selected jobs, one at a time, batch after batch.
func (o *Operations) SuspendJobs(ctx context.Context, sel *Jobs, opts *JobOpts) (*Progress, error) {
	return o.forEachJob(ctx, sel, opts, "suspend", o.config.Suspend)
}

// ActivateJobs activates the selected jobs.
func (o *Operations) ActivateJobs(ctx context.Context, sel *Jobs, opts *JobOpts) (*Progress, error) {
	return o.forEachJob(ctx, sel, opts, "activate", o.config.Activate)
}

// StopJobs asks the selected jobs to stop; a job that already finished is
// left as it is and not counted as changed.
func (o *Operations) StopJobs(ctx context.Context, sel *Jobs, opts *JobOpts) (*Progress, error) {
	return o.forEachJob(ctx, sel, opts, "stop", o.config.Stop)
}

// SetJobPriority sets the BPMN priority of the selected jobs.
func (o *Operations) SetJobPriority(ctx context.Context, sel *Jobs, priority int64, opts *JobOpts) (*Progress, error) {
	return o.forEachJob(ctx, sel, opts, "priority", func(ctx context.Context, id int64) (bool, error) {
		return true, o.config.SetPriority(ctx, id, priority)
	})
}

func (o *Operations) forEachJob(ctx context.Context, sel *Jobs, opts *JobOpts, action string, apply func(context.Context, int64) (bool, error)) (*Progress, error) {
	if apply == nil {
		return nil, fmt.Errorf("bulk: the handle has no %s action (HandleConfig)", action)
	}
	jo := JobOpts{}
	if opts != nil {
		jo = *opts
	}
	jo.Action = action
	return ForEachJob(ctx, o.config.DB, o.config.Schema, sel, &jo, func(ctx context.Context, id int64) (bool, error) {
		changed, err := apply(ctx, id)
		if o.config.NotFound != nil && errors.Is(err, o.config.NotFound) {
			// Deleted since it was selected (River's cleaner): nothing to do.
			return false, nil
		}
		return changed, err
	})
}

// Create records spec as a bulk operation run by owner (a name unique to
// the calling process); Run then runs it.
func (o *Operations) Create(ctx context.Context, spec *Spec, description, owner string) (*Operation, error) {
	return CreateOperation(ctx, o.config.DB, o.config.Schema, spec, description, owner)
}

// Claim makes owner the runner of the running bulk operations whose runner
// died (no heartbeat for StaleAfter) or gave them up, at most limit; Run
// resumes each.
func (o *Operations) Claim(ctx context.Context, owner string, limit int) ([]*Operation, error) {
	return ClaimStaleOperations(ctx, o.config.DB, o.config.Schema, owner, StaleAfter, limit)
}

// Get returns bulk operation id; an unknown id gives an error wrapping
// ErrNoOperation (and the handle's NotFound).
func (o *Operations) Get(ctx context.Context, id int64) (*Operation, error) {
	op, err := GetOperation(ctx, o.config.DB, o.config.Schema, id)
	if errors.Is(err, ErrNoOperation) && o.config.NotFound != nil {
		return nil, fmt.Errorf("bulk: operation %d: %w (%w)", id, ErrNoOperation, o.config.NotFound)
	}
	return op, err
}

// ListParams selects a page of bulk operations for List.
type ListParams struct {
	// Limit is the page size: 0 means 100, at most 1,000.
	Limit int
	// After is where the page starts: "" for the newest operation, else the
	// Next of the previous page.
	After string
}

// ListResult is a page of bulk operations, newest first.
type ListResult struct {
	Items []*Operation `json:"items"`
	// Next is the After of the next, older page; "" when there is none.
	Next string `json:"next,omitempty"`
}

// List returns a page of the recorded bulk operations, newest first. Next
// is empty exactly when no older operation is left.
func (o *Operations) List(ctx context.Context, params *ListParams) (*ListResult, error) {
	if params == nil {
		params = &ListParams{}
	}
	limit, err := listpage.Limit("bulk", params.Limit)
	if err != nil {
		return nil, err
	}
	before, err := listpage.ParseID("bulk", params.After)
	if err != nil {
		return nil, err
	}
	ops, err := ListOperations(ctx, o.config.DB, o.config.Schema, before, listpage.Fetch(limit))
	if err != nil {
		return nil, err
	}
	res := &ListResult{}
	res.Items, res.Next = listpage.Trim(ops, limit, func(op *Operation) string { return listpage.ID(op.ID) })
	return res, nil
}

// Run runs op as owner until it ends, from its saved progress (a new
// operation from the start; one taken over where its last runner stopped):
// each batch's progress is saved, and a heartbeat proves every
// HeartbeatInterval that owner still runs it. It records the outcome and
// returns the run's error. When ctx ends first (the process stops), the
// operation is given up, still running, for the next Claim of any process
// to resume at once. When another process took it over (owner missed its
// heartbeats), the run stops with ErrNotOwner.
func (o *Operations) Run(ctx context.Context, op *Operation, owner string) error {
	db, schema := o.config.DB, o.config.Schema
	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)

	// The heartbeat and the batches' saves go through one lock, so that
	// the last progress saved is the newest.
	var (
		mu   sync.Mutex
		last *Progress
	)
	if op.Progress.Batches > 0 || op.Progress.Cursor > 0 {
		p := op.Progress
		last = &p
	}
	save := func() {
		mu.Lock()
		defer mu.Unlock()
		// A save outlives ctx's end: the progress made so far counts.
		saveCtx, done := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer done()
		if err := SaveProgress(saveCtx, db, schema, op.ID, owner, last); errors.Is(err, ErrNotOwner) {
			cancel(err)
		}
	}
	report := func(p Progress) {
		mu.Lock()
		last = &p
		mu.Unlock()
		save()
	}
	beat := make(chan struct{})
	go func() {
		defer close(beat)
		t := time.NewTicker(HeartbeatInterval)
		defer t.Stop()
		for {
			select {
			case <-runCtx.Done():
				return
			case <-t.C:
				save()
			}
		}
	}()

	p, err := o.runSpec(runCtx, &op.Spec, last, report)
	cancel(nil)
	<-beat
	if cause := context.Cause(runCtx); errors.Is(cause, ErrNotOwner) {
		return cause
	}
	endCtx, done := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer done()
	if ctx.Err() != nil {
		// The returned progress is exact to the job (its cursor is the
		// last job the run did), the last report to the batch.
		if p == nil {
			p = last
		}
		if p != nil {
			_ = SaveProgress(endCtx, db, schema, op.ID, owner, p)
		}
		if relErr := ReleaseOperation(endCtx, db, schema, op.ID, owner); relErr != nil {
			return errors.Join(ctx.Err(), relErr)
		}
		return ctx.Err()
	}
	if p == nil {
		p = last
	}
	if finErr := FinishOperation(endCtx, db, schema, op.ID, owner, p, err); finErr != nil {
		return errors.Join(err, finErr)
	}
	return err
}

// runSpec runs spec's action on its selection, resuming from resume.
func (o *Operations) runSpec(ctx context.Context, spec *Spec, resume *Progress, report func(Progress)) (*Progress, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	opts := &JobOpts{Resume: resume, OnProgress: report}
	switch spec.Action {
	case ActionSuspend:
		return o.SuspendJobs(ctx, spec.Jobs, opts)
	case ActionActivate:
		return o.ActivateJobs(ctx, spec.Jobs, opts)
	case ActionStop:
		return o.StopJobs(ctx, spec.Jobs, opts)
	case ActionPriority:
		return o.SetJobPriority(ctx, spec.Jobs, spec.Priority, opts)
	default: // ActionRetry (validated)
		return o.RetryIncidents(ctx, spec.Incidents, &RetryOpts{Retries: spec.Retries, Resume: resume, OnProgress: report})
	}
}
