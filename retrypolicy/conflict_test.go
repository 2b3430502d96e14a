package retrypolicy_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/retrypolicy"
	"github.com/riverbpmn/riverbpmn/riverbpmntest"
)

// TestIsConflict: ErrConflict, a serialization failure or a deadlock
// anywhere in an error's chain (every branch of errors.Join included) is a
// conflict; other errors, and the codes' text alone, are not.
func TestIsConflict(t *testing.T) {
	t.Parallel()
	serialization := &pgconn.PgError{Code: "40001", Message: "could not serialize access"}
	deadlock := &pgconn.PgError{Code: "40P01", Message: "deadlock detected"}
	unique := &pgconn.PgError{Code: "23505", Message: "duplicate key"}

	for name, err := range map[string]error{
		"Sentinel":                 retrypolicy.ErrConflict,
		"WrappedSentinel":          fmt.Errorf("joining: %w", retrypolicy.ErrConflict),
		"Serialization":            serialization,
		"WrappedDeadlock":          fmt.Errorf("tx: %w", fmt.Errorf("update: %w", deadlock)),
		"JoinedSecondBranch":       errors.Join(errors.New("first"), fmt.Errorf("x: %w", deadlock)),
		"SecondPgErrorInTheChain":  fmt.Errorf("%w; then %w", unique, serialization),
		"SentinelBehindOtherError": fmt.Errorf("%w: %w", errors.New("a"), retrypolicy.ErrConflict),
	} {
		require.True(t, retrypolicy.IsConflict(err), name)
	}
	for name, err := range map[string]error{
		"Nil":         nil,
		"Plain":       errors.New("boom"),
		"OtherPgCode": fmt.Errorf("insert: %w", unique),
		"Text":        errors.New("40001"),
	} {
		require.False(t, retrypolicy.IsConflict(err), name)
	}
}

// TestSnoozeConflicts: a conflict of a job with a recorded cycle becomes a
// River snooze for the cycle's interval, after onConflict was given the
// failure; every other outcome is the worker's, untouched.
func TestSnoozeConflicts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	type testBundle struct {
		recorded []error // the failures onConflict was given
	}
	setup := func(t *testing.T) (func(job *rivertype.JobRow, workErr error) error, *testBundle) {
		t.Helper()
		bundle := &testBundle{}
		work := func(job *rivertype.JobRow, workErr error) error {
			return retrypolicy.SnoozeConflicts(ctx, job, nil, func(context.Context) error { return workErr },
				func(_ context.Context, _ *rivertype.JobRow, failure error) {
					bundle.recorded = append(bundle.recorded, failure)
				})
		}
		return work, bundle
	}
	// withCycle is a running plain job inserted under a default cycle of
	// PT10M,PT20M (3 executions), at its first execution.
	withCycle := &rivertype.JobRow{Attempt: 1, MaxAttempts: 3, Metadata: []byte(`{"bpmn_retry_cycle": "PT10M,PT20M"}`)}
	conflict := fmt.Errorf("joining: %w", retrypolicy.ErrConflict)

	t.Run("ConflictWithCycleSnoozes", func(t *testing.T) {
		t.Parallel()
		work, bundle := setup(t)
		err := work(withCycle, conflict)
		var snoozeErr *rivertype.JobSnoozeError
		require.ErrorAs(t, err, &snoozeErr)
		require.InDelta(t, float64(10*time.Minute), float64(snoozeErr.Duration), float64(time.Second), "the first interval: 3 executions left")
		require.Equal(t, []error{conflict}, bundle.recorded)
	})

	t.Run("PlainJobWithoutCycle", func(t *testing.T) {
		t.Parallel()
		work, bundle := setup(t)
		require.Same(t, conflict, work(&rivertype.JobRow{Attempt: 1, MaxAttempts: 25, Metadata: []byte(`{}`)}, conflict))
		require.Empty(t, bundle.recorded)
	})

	t.Run("OtherOutcomesAreTheWorkers", func(t *testing.T) {
		t.Parallel()
		work, bundle := setup(t)
		require.NoError(t, work(withCycle, nil))
		boom := errors.New("boom")
		require.Same(t, boom, work(withCycle, boom))
		cancel := river.JobCancel(conflict)
		require.Equal(t, cancel, work(withCycle, cancel), "JobCancel wrapping a conflict: kept")
		require.Empty(t, bundle.recorded)
	})
}

// TestRecordConflict: conflicts are recorded in the job's errors while it
// runs, but never past 100 entries (a job may conflict forever), and not
// once the job has moved on to another attempt.
func TestRecordConflict(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	type testBundle struct {
		*riverbpmntest.Bundle
		running rivertype.JobRow // the job, as at its first execution
	}
	setup := func(t *testing.T) *testBundle {
		t.Helper()
		bundle := testEngine(t, retryConfig("", map[string]string{"ship-async": "R3/PT1M"}))
		res, err := bundle.Client.Insert(ctx, retryArgs{Name: "conflicting"}, &river.InsertOpts{Metadata: mustMetadata(t, jobOf("ship-async", "pi-1"))})
		require.NoError(t, err)
		running := *res.Job
		running.Attempt = 1
		return &testBundle{Bundle: bundle, running: running}
	}
	// setErrors makes the job run its first attempt, with n errors.
	setErrors := func(t *testing.T, bundle *testBundle, n int) {
		t.Helper()
		_, err := bundle.DBPool.Exec(ctx, fmt.Sprintf(`UPDATE %s.river_job
			SET state = 'running', attempt = 1, attempted_at = now(),
				errors = array(SELECT jsonb_build_object('at', now(), 'attempt', 1, 'error', 'old') FROM generate_series(1, $2) AS i)
			WHERE id = $1`, pgx.Identifier{bundle.Schema}.Sanitize()), bundle.running.ID, n)
		require.NoError(t, err)
	}
	jobErrors := func(t *testing.T, bundle *testBundle) []rivertype.AttemptError {
		t.Helper()
		job, err := bundle.Client.JobGet(ctx, bundle.running.ID)
		require.NoError(t, err)
		return job.Errors
	}
	conflict := fmt.Errorf("x: %w", retrypolicy.ErrConflict)

	t.Run("CappedAt100", func(t *testing.T) {
		t.Parallel()
		bundle := setup(t)
		setErrors(t, bundle, 98)
		retrypolicy.RecordConflict(ctx, bundle.DBPool, bundle.Schema, &bundle.running, conflict)
		require.Len(t, jobErrors(t, bundle), 99)
		retrypolicy.RecordConflict(ctx, bundle.DBPool, bundle.Schema, &bundle.running, conflict)
		retrypolicy.RecordConflict(ctx, bundle.DBPool, bundle.Schema, &bundle.running, conflict)
		errs := jobErrors(t, bundle)
		require.Len(t, errs, 100)
		require.Equal(t, "x: workflow: concurrency conflict", errs[99].Error)
		require.Equal(t, 1, errs[99].Attempt)
	})

	t.Run("AnotherAttempt", func(t *testing.T) {
		t.Parallel()
		bundle := setup(t)
		setErrors(t, bundle, 0)
		moved := bundle.running
		moved.Attempt = 2 // the job moved on: nothing is recorded
		retrypolicy.RecordConflict(ctx, bundle.DBPool, bundle.Schema, &moved, conflict)
		require.Empty(t, jobErrors(t, bundle))
	})

	t.Run("WithoutAPool", func(t *testing.T) {
		t.Parallel()
		// Best effort: no pool, no statement, no panic.
		retrypolicy.RecordConflict(ctx, nil, "", &rivertype.JobRow{ID: 1, Attempt: 1}, conflict)
	})
}
