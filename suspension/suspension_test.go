package suspension_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river/riverdbtest"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/riverbpmntest"
	"github.com/riverbpmn/riverbpmn/suspension"
)

func setup(t *testing.T) (*pgxpool.Pool, string) {
	t.Helper()
	return riverbpmntest.DBPool(t), riverdbtest.TestSchema(context.Background(), t, riverbpmntest.Driver(t), nil)
}

// insertJobs writes n available jobs of job definition jd.
func insertJobs(t *testing.T, pool *pgxpool.Pool, schema, jd string, n int) {
	t.Helper()
	_, err := pool.Exec(context.Background(), fmt.Sprintf(`
		INSERT INTO %q.river_job (args, kind, max_attempts, metadata, priority, queue, state)
		SELECT '{}', 'k', 3, jsonb_build_object('bpmn', jsonb_build_object('process_definition_key', 'p', 'job_definition_id', $1::text)),
			1, 'default', 'available'
		FROM generate_series(1, $2::integer)`, schema), jd, n)
	require.NoError(t, err)
}

func countState(t *testing.T, pool *pgxpool.Pool, schema, state string) int {
	t.Helper()
	var n int
	require.NoError(t, pool.QueryRow(context.Background(), fmt.Sprintf(`SELECT count(*) FROM %q.river_job WHERE state = $1`, schema), state).Scan(&n))
	return n
}

// TestCascadeStopsWhenOverruled: a cascade whose target changed state since
// (a later call) changes nothing: the later call wins.
func TestCascadeStopsWhenOverruled(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, schema := setup(t)
	insertJobs(t, pool, schema, "jd", 25)

	changed, err := suspension.Set(ctx, pool, schema, suspension.JobDefinition, "jd", true)
	require.NoError(t, err)
	require.True(t, changed)
	res, err := suspension.Cascade(ctx, pool, schema, suspension.JobDefinition, "jd", true, 10)
	require.NoError(t, err)
	require.EqualValues(t, 25, res.Jobs)
	require.Equal(t, 3, res.Batches)
	require.False(t, res.Stopped)

	changed, err = suspension.Set(ctx, pool, schema, suspension.JobDefinition, "jd", false)
	require.NoError(t, err)
	require.True(t, changed)
	// An older suspension's cascade that runs now does nothing.
	res, err = suspension.Cascade(ctx, pool, schema, suspension.JobDefinition, "jd", true, 10)
	require.NoError(t, err)
	require.True(t, res.Stopped)
	require.Zero(t, res.Jobs)
	require.Equal(t, 25, countState(t, pool, schema, "pending"), "the first cascade's jobs stay until activated with their jobs")
	res, err = suspension.Cascade(ctx, pool, schema, suspension.JobDefinition, "jd", false, 10)
	require.NoError(t, err)
	require.EqualValues(t, 25, res.Jobs)
	require.Equal(t, 25, countState(t, pool, schema, "available"))
}

// TestScheduleAndApplyDue: only definitions can be scheduled; a due change is
// applied once and recorded; one not due waits.
func TestScheduleAndApplyDue(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, schema := setup(t)
	insertJobs(t, pool, schema, "jd", 3)

	_, err := suspension.Schedule(ctx, pool, schema, suspension.Change{Type: suspension.ProcessInstance, ID: "pi"}, time.Now())
	require.ErrorContains(t, err, "only job definitions and process definitions")

	_, err = suspension.Schedule(ctx, pool, schema, suspension.Change{Type: suspension.JobDefinition, ID: "jd", Suspend: true, IncludeJobs: true}, time.Now().Add(-time.Second))
	require.NoError(t, err)
	later := time.Now().Add(time.Hour)
	_, err = suspension.Schedule(ctx, pool, schema, suspension.Change{Type: suspension.JobDefinition, ID: "jd", Suspend: false, IncludeJobs: true}, later)
	require.NoError(t, err)

	applied, next, err := suspension.ApplyDue(ctx, pool, schema, "test-client")
	require.NoError(t, err)
	require.Equal(t, 1, applied)
	require.WithinDuration(t, later, next, time.Millisecond)
	require.Equal(t, 3, countState(t, pool, schema, "pending"))
	applied, _, err = suspension.ApplyDue(ctx, pool, schema, "test-client")
	require.NoError(t, err)
	require.Zero(t, applied, "applied once")
	pending, err := suspension.Pending(ctx, pool, schema, 10)
	require.NoError(t, err)
	require.Len(t, pending, 1)
	require.False(t, pending[0].Change.Suspend)
	var appliedBy string
	require.NoError(t, pool.QueryRow(ctx, fmt.Sprintf(`SELECT applied_by FROM %q.river_bpmn_suspension_schedule WHERE applied_at IS NOT NULL`, schema)).Scan(&appliedBy))
	require.Equal(t, "test-client", appliedBy)
}

// TestServiceRestarts: the service applies due changes, and starts again
// after a stop (River restarts its maintenance services on every election).
func TestServiceRestarts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, schema := setup(t)
	insertJobs(t, pool, schema, "jd", 2)
	service := suspension.NewService(pool, suspension.ServiceConfig{Schema: schema, ClientID: "svc", Interval: 50 * time.Millisecond})
	for round, suspend := range []bool{true, false} {
		require.NoError(t, service.Start(ctx))
		_, err := suspension.Schedule(ctx, pool, schema, suspension.Change{Type: suspension.JobDefinition, ID: "jd", Suspend: suspend, IncludeJobs: true}, time.Now().Add(100*time.Millisecond))
		require.NoError(t, err)
		want := map[bool]string{true: "pending", false: "available"}[suspend]
		require.Eventually(t, func() bool { return countState(t, pool, schema, want) == 2 }, 10*time.Second, 10*time.Millisecond, "round %d", round)
		service.Stop()
	}
}
