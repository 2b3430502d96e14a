package workflow

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// conflictRecordTimeout bounds the extra statement that records a conflict
// failure in the job's errors.
const conflictRecordTimeout = 5 * time.Second

var jobAppendErrorSQL = mustReadSQL("job_append_error.sql")

// workWithRetryBookkeeping works the job and applies Camunda's rule for
// conflict failures (see ErrConflict): when the worker's error is a conflict
// and the job has a retry cycle, the failure is turned into a River snooze
// for the cycle's interval. River then gives the execution back (snoozes
// decrement attempt) and never discards the job for it, whatever its
// attempt. The error is appended to the job's errors first, as River does
// for a failure, so River UI shows why the job waited (up to 100 errors);
// River's snooze also counts it in metadata "snoozes". River's error handler
// is not called for it.
//
// Everything else is River's: success, ordinary failures (RetryPolicy
// schedules them), panics, JobSnooze and JobCancel errors, and conflicts of
// plain River jobs without a recorded cycle.
func (e *Engine) workWithRetryBookkeeping(ctx context.Context, job *rivertype.JobRow, doInner func(context.Context) error) error {
	err := doInner(ctx)
	if err == nil || !IsConflict(err) {
		return err
	}
	var (
		cancelErr *rivertype.JobCancelError
		snoozeErr *rivertype.JobSnoozeError
	)
	if errors.As(err, &cancelErr) || errors.As(err, &snoozeErr) {
		return err // the worker asked River for an outcome: keep it
	}
	cycle, ok := retryCycleOf(job)
	if !ok {
		return err // a plain River job: River's own retry behaviour
	}
	// The wait runs from the failure, not from after the bookkeeping.
	next := cycle.NextRetryAt(time.Now().UTC(), executionsLeft(job))
	e.recordConflict(ctx, job, err)
	e.tel.Conflict(ctx, job)
	return river.JobSnooze(max(time.Until(next), 0))
}

// recordConflict appends a conflict failure to the running job's errors, as
// River would for a failure (River's snooze does not record one), unless the
// job already has 100 errors. It is best effort: without a pool or on a
// database error the snooze still happens, the error is only missing from the
// job's history.
func (e *Engine) recordConflict(ctx context.Context, job *rivertype.JobRow, failure error) {
	if e.dbPool == nil {
		return
	}
	schema := e.config.Schema
	if client, err := river.ClientFromContextSafely[pgx.Tx](ctx); err == nil {
		schema = client.Schema()
	}
	at := time.Now().UTC()
	if job.AttemptedAt != nil {
		at = *job.AttemptedAt // River's AttemptError.At is the execution's start
	}
	attemptErr, err := json.Marshal(rivertype.AttemptError{At: at, Attempt: job.Attempt, Error: failure.Error()})
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), conflictRecordTimeout)
	defer cancel()
	_, _ = e.dbPool.Exec(ctx, renderSQL(jobAppendErrorSQL, schema), job.ID, job.Attempt, attemptErr)
}
