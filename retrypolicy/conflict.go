package retrypolicy

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/riverbpmn/riverbpmn/internal/sqltemplate"
)

// ErrConflict marks a failure caused by a concurrency conflict (Camunda's
// optimistic locking exception). A worker whose error wraps it, as in
//
//	return fmt.Errorf("joining branch: %w", retrypolicy.ErrConflict)
//
// does not use up one of the job's executions, but the job still waits its
// cycle's interval before it runs again (and runs again at once without a
// cycle). A *pgconn.PgError with code 40001 (serialization failure) or 40P01
// (deadlock detected) anywhere in the error's chain counts as a conflict too.
// See IsConflict and SnoozeConflicts. Its text, which job errors and
// incident messages show, is the one it always had.
var ErrConflict = errors.New("workflow: concurrency conflict")

// IsConflict reports whether err is a conflict failure: it wraps ErrConflict,
// or a *pgconn.PgError with code 40001 or 40P01, anywhere in its chain
// (including every branch of errors.Join).
func IsConflict(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, ErrConflict) {
		return true
	}
	// errors.As would stop at the first PgError; a chain may hold several.
	const maxNodes = 1000 // a guard against pathological Unwrap cycles
	stack := []error{err}
	for visited := 0; len(stack) > 0 && visited < maxNodes; visited++ {
		e := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if pgErr, ok := e.(*pgconn.PgError); ok && (pgErr.Code == "40001" || pgErr.Code == "40P01") {
			return true
		}
		switch u := e.(type) {
		case interface{ Unwrap() error }:
			if next := u.Unwrap(); next != nil {
				stack = append(stack, next)
			}
		case interface{ Unwrap() []error }:
			for _, next := range u.Unwrap() {
				if next != nil {
					stack = append(stack, next)
				}
			}
		}
	}
	return false
}

// SnoozeConflicts works the job (doInner) and applies Camunda's rule for
// conflict failures (see ErrConflict): when the worker's error is a conflict
// and the job has a retry cycle (CycleOf with contextCycle), the failure is
// turned into a River snooze for the cycle's interval, counted from the
// failure. River then gives the execution back (snoozes decrement attempt)
// and never discards the job for it, whatever its attempt. onConflict is
// called first, with the failure (the engine records it in the job's errors
// with RecordConflict, as River does for a failure, so River UI shows why
// the job waited; River's snooze also counts it in metadata "snoozes").
// River's error handler is not called for it.
//
// Everything else is River's: success, ordinary failures (NextRetry
// schedules them), panics, JobSnooze and JobCancel errors, and conflicts of
// plain River jobs without a recorded cycle.
func SnoozeConflicts(ctx context.Context, job *rivertype.JobRow, contextCycle ContextCycleFunc, doInner func(context.Context) error, onConflict func(ctx context.Context, job *rivertype.JobRow, failure error)) error {
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
	cycle, ok := CycleOf(job, contextCycle)
	if !ok {
		return err // a plain River job: River's own retry behaviour
	}
	// The wait runs from the failure, not from after the bookkeeping.
	next := cycle.NextRetryAt(time.Now().UTC(), ExecutionsLeft(job))
	if onConflict != nil {
		onConflict(ctx, job, err)
	}
	return river.JobSnooze(max(time.Until(next), 0))
}

//go:embed sql/*.sql
var sqlFS embed.FS

var jobAppendErrorSQL = sqltemplate.MustRead(sqlFS, "sql/job_append_error.sql")

// conflictRecordTimeout bounds the extra statement that records a conflict
// failure in the job's errors.
const conflictRecordTimeout = 5 * time.Second

// RecordConflict appends a conflict failure to the running job's errors, as
// River would for a failure (River's snooze does not record one), unless the
// job already has 100 errors or has moved on from the attempt it ran. The
// statement runs on dbPool, in the schema of the River client working the
// job (from ctx), else in schema. It is best effort: without a pool or on a
// database error the snooze still happens, the error is only missing from the
// job's history.
func RecordConflict(ctx context.Context, dbPool *pgxpool.Pool, schema string, job *rivertype.JobRow, failure error) {
	if dbPool == nil {
		return
	}
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
	_, _ = dbPool.Exec(ctx, sqltemplate.Render(jobAppendErrorSQL, schema), job.ID, job.Attempt, attemptErr)
}
