package workflow

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/riverbpmn/riverbpmn/bulk"
)

// Bulk operations as rows (package bulk): recorded before they run, their
// progress saved after each batch, taken over and resumed by another
// process when the one running them dies. The console runs its bulk forms
// this way.

// CreateBulkOperation records spec as a bulk operation run by owner (a name
// unique to the calling process); RunBulkOperation then runs it.
func (e *Engine) CreateBulkOperation(ctx context.Context, spec *bulk.Spec, description, owner string) (*bulk.Operation, error) {
	if e.dbPool == nil {
		return nil, errNoPool
	}
	return bulk.CreateOperation(ctx, e.dbPool, e.config.Schema, spec, description, owner)
}

// ClaimStaleBulkOperations makes owner the runner of the running bulk
// operations whose runner died (no heartbeat for bulk.StaleAfter) or gave
// them up, at most limit; RunBulkOperation resumes each.
func (e *Engine) ClaimStaleBulkOperations(ctx context.Context, owner string, limit int) ([]*bulk.Operation, error) {
	if e.dbPool == nil {
		return nil, errNoPool
	}
	return bulk.ClaimStaleOperations(ctx, e.dbPool, e.config.Schema, owner, bulk.StaleAfter, limit)
}

// BulkOperation returns bulk operation id (bulk.ErrNoOperation when none).
func (e *Engine) BulkOperation(ctx context.Context, id int64) (*bulk.Operation, error) {
	if e.dbPool == nil {
		return nil, errNoPool
	}
	op, err := bulk.GetOperation(ctx, e.dbPool, e.config.Schema, id)
	if errors.Is(err, bulk.ErrNoOperation) {
		return nil, fmt.Errorf("%w: bulk operation %d", ErrNotFound, id)
	}
	return op, err
}

// BulkOperations returns the bulk operations before id before (0: from the
// newest), newest first, at most limit (1 to MaxPageSize).
func (e *Engine) BulkOperations(ctx context.Context, before int64, limit int) ([]*bulk.Operation, error) {
	if err := checkPageLimit(limit); err != nil {
		return nil, err
	}
	if e.dbPool == nil {
		return nil, errNoPool
	}
	return bulk.Operations(ctx, e.dbPool, e.config.Schema, before, limit)
}

// RunBulkOperation runs op as owner until it ends, from its saved progress
// (a new operation from the start; one taken over where its last runner
// stopped): each batch's progress is saved, and a heartbeat proves every
// bulk.HeartbeatInterval that owner still runs it. It records the outcome
// and returns the run's error. When ctx ends first (the process stops), the
// operation is given up, still running, for the next ClaimStaleBulkOperations
// of any process to resume at once. When another process took it over
// (owner missed its heartbeats), the run stops with bulk.ErrNotOwner.
func (e *Engine) RunBulkOperation(ctx context.Context, op *bulk.Operation, owner string) error {
	if e.dbPool == nil {
		return errNoPool
	}
	db, schema := e.dbPool, e.config.Schema
	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)

	// The heartbeat and the batches' saves go through one lock, so that
	// the last progress saved is the newest.
	var (
		mu   sync.Mutex
		last *bulk.Progress
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
		if err := bulk.SaveProgress(saveCtx, db, schema, op.ID, owner, last); errors.Is(err, bulk.ErrNotOwner) {
			cancel(err)
		}
	}
	report := func(p bulk.Progress) {
		mu.Lock()
		last = &p
		mu.Unlock()
		save()
	}
	beat := make(chan struct{})
	go func() {
		defer close(beat)
		t := time.NewTicker(bulk.HeartbeatInterval)
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

	p, err := e.runBulkSpec(runCtx, &op.Spec, last, report)
	cancel(nil)
	<-beat
	if cause := context.Cause(runCtx); errors.Is(cause, bulk.ErrNotOwner) {
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
			_ = bulk.SaveProgress(endCtx, db, schema, op.ID, owner, p)
		}
		if relErr := bulk.ReleaseOperation(endCtx, db, schema, op.ID, owner); relErr != nil {
			return errors.Join(ctx.Err(), relErr)
		}
		return ctx.Err()
	}
	if p == nil {
		p = last
	}
	if finErr := bulk.FinishOperation(endCtx, db, schema, op.ID, owner, p, err); finErr != nil {
		return errors.Join(err, finErr)
	}
	return err
}

// runBulkSpec runs spec's action on its selection, resuming from resume.
func (e *Engine) runBulkSpec(ctx context.Context, spec *bulk.Spec, resume *bulk.Progress, report func(bulk.Progress)) (*bulk.Progress, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	opts := &bulk.JobOpts{Resume: resume, OnProgress: report}
	switch spec.Action {
	case bulk.ActionSuspend:
		return e.BulkSuspendJobs(ctx, spec.Jobs, opts)
	case bulk.ActionActivate:
		return e.BulkActivateJobs(ctx, spec.Jobs, opts)
	case bulk.ActionStop:
		return e.BulkStopJobs(ctx, spec.Jobs, opts)
	case bulk.ActionPriority:
		return e.BulkSetJobPriority(ctx, spec.Jobs, spec.Priority, opts)
	default: // bulk.ActionRetry (validated)
		return e.BulkRetryIncidents(ctx, spec.Incidents, &bulk.RetryOpts{Retries: spec.Retries, Resume: resume, OnProgress: report})
	}
}
