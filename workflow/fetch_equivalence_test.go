package workflow

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/exclusive"
	"github.com/riverbpmn/riverbpmn/liveness"
)

// seedEquivalenceJobs writes the same deterministic, varied set of jobs into
// schema: mixed River priorities, scheduled_at in the past, now and future,
// three queues, five kinds, states other than available, attempted_by arrays
// shorter than, at and over the cap, errors, tags, metadata and unique keys.
// Ids are explicit so both twins hold identical rows.
const seedEquivalenceJobsSQL = `
INSERT INTO %[1]s.river_job (
    id, args, attempt, attempted_at, attempted_by, created_at, errors, kind,
    finalized_at, max_attempts, metadata, priority, queue, state, scheduled_at,
    tags, unique_key, unique_states
)
SELECT
    i,
    jsonb_build_object('n', i),
    i %% 3,
    CASE WHEN i %% 3 = 0 THEN NULL ELSE $1::timestamptz - interval '1 hour' END,
    CASE i %% 4
        WHEN 0 THEN NULL
        WHEN 1 THEN ARRAY['a']
        WHEN 2 THEN ARRAY['a', 'b', 'c']
        ELSE ARRAY['a', 'b', 'c', 'd', 'e']
    END,
    $1::timestamptz - interval '2 hours',
    CASE WHEN i %% 7 = 0 THEN ARRAY[jsonb_build_object('at', '2026-01-01T00:00:00Z', 'attempt', 1, 'error', 'boom ' || i, 'trace', '')] END,
    'kind_' || (i * 7 %% 5),
    CASE WHEN i %% 19 = 0 AND i %% 17 <> 0 THEN $1::timestamptz - interval '1 minute' END,
    25,
    jsonb_build_object('seq', i),
    1 + (i * 13 %% 4),
    CASE i %% 3 WHEN 0 THEN 'default' WHEN 1 THEN 'q_one' ELSE 'q_two' END,
    (CASE
        WHEN i %% 17 = 0 THEN 'scheduled'
        WHEN i %% 19 = 0 THEN 'completed'
        WHEN i %% 23 = 0 THEN 'retryable'
        ELSE 'available'
    END)::%[1]s.river_job_state,
    -- Clustered times make ties on (priority, scheduled_at), so the id tie
    -- break is exercised; some jobs are due only after $1.
    $1::timestamptz + ((i * 31 %% 40) - 30) * interval '1 minute',
    ARRAY['t' || (i %% 2)],
    CASE WHEN i %% 11 = 0 THEN ('unique-' || i)::bytea END,
    CASE WHEN i %% 11 = 0 THEN B'11110101' END
FROM generate_series(1, $2::int) AS i`

func seedEquivalenceJobs(ctx context.Context, t *testing.T, exec riverdriver.Executor, schema string, now time.Time, count int) {
	t.Helper()
	quotedSchema := pgx.Identifier{schema}.Sanitize()
	require.NoError(t, exec.Exec(ctx, fmt.Sprintf(seedEquivalenceJobsSQL, quotedSchema), now, count))
	// The planner's statistics must describe these rows in both twins: a
	// reused test schema keeps those of the rows an earlier test left
	// (truncation does not reset them), and the order in which the fetch's
	// UPDATE ... RETURNING gives rows back follows its plan.
	require.NoError(t, exec.Exec(ctx, fmt.Sprintf("ANALYZE %s.river_job", quotedSchema)))
}

// allJobs reads every row of schema's river_job in id order with River's own
// executor, so the final table states can be compared.
func allJobs(ctx context.Context, t *testing.T, exec riverdriver.Executor, schema string, count int) []*rivertype.JobRow {
	t.Helper()
	ids := make([]int64, count)
	for i := range ids {
		ids[i] = int64(i + 1)
	}
	jobs, err := exec.JobGetByIDMany(ctx, &riverdriver.JobGetByIDManyParams{ID: ids, Schema: schema})
	require.NoError(t, err)
	require.Len(t, jobs, count)
	return jobs
}

// TestFetchEquivalentToStockRiver fetches a varied backlog of 1,500 jobs in
// batches through stock River's driver and through riverbpmn's pilot of an
// engine that opts out of everything on by default (exclusive.None,
// Config.Liveness.Disabled), in twin schemas, and requires at every batch
// the same jobs with identical columns, and identical tables at the end.
//
// Equivalence is the set of jobs a fetch takes and every column of each, not
// the order of the returned rows. Both statements take the first MaxToLock
// available, due jobs of the queue and kinds in River's order (priority,
// scheduled_at, id), a total order, so the set is determined; but both
// return them with UPDATE ... RETURNING, which gives rows back in its plan's
// order (a join's, which statistics and load decide), and neither statement
// promises one: River's own query, run twice on identical twins, can return
// one set in two orders. River's producer starts every job of a fetch and
// relies on no order among them. So each batch is compared in id order.
func TestFetchEquivalentToStockRiver(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	const jobCount = 1500
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

	stockDriver, stockSchema := testStockSchema(t)
	engine, ourSchema := testEngineWithConfig(t, &Config{ExclusiveScope: exclusive.None, Liveness: liveness.Config{Disabled: true}})
	stockExec := stockDriver.GetExecutor()
	ourExec := engine.Driver().GetExecutor()
	ourPilot := newPilot(engine.Driver())

	seedEquivalenceJobs(ctx, t, stockExec, stockSchema, now, jobCount)
	seedEquivalenceJobs(ctx, t, ourExec, ourSchema, now, jobCount)

	// Rounds cycle through queues, kind filters (nil = all kinds, empty = no
	// kind), batch sizes and clock positions; later rounds move the clock
	// forward so future jobs become due.
	// Five filters against three queues: every (queue, filter) pair occurs.
	kindFilters := [][]string{nil, {"kind_1", "kind_3"}, {}, {"kind_0"}, {"kind_2", "kind_4", "kind_0"}}
	queues := []string{"default", "q_one", "q_two"}
	var fetched, fetchedSinceIdle int
	for round := 0; round < 5000; round++ {
		fetchNow := now.Add(time.Duration(round/15) * 5 * time.Minute)
		params := riverdriver.JobGetAvailableParams{
			ClientID:       fmt.Sprintf("client_%d", round%4),
			Kind:           kindFilters[round%len(kindFilters)],
			MaxAttemptedBy: 3,
			MaxToLock:      []int{1, 17, 50, 100}[round%4],
			Now:            &fetchNow,
			Queue:          queues[round%len(queues)],
		}

		stockParams, ourParams := params, params
		stockParams.Schema, ourParams.Schema = stockSchema, ourSchema
		stockRes, err := stockExec.JobGetAvailable(ctx, &stockParams)
		require.NoError(t, err)
		ourRes, err := ourPilot.JobGetAvailable(ctx, ourExec, nil, &ourParams)
		require.NoError(t, err)

		byID := func(a, b *rivertype.JobRow) int { return cmp.Compare(a.ID, b.ID) }
		slices.SortFunc(stockRes.Jobs, byID)
		slices.SortFunc(ourRes.Jobs, byID)
		require.Equal(t, jobIDs(stockRes.Jobs), jobIDs(ourRes.Jobs), "round %d: ids", round)
		require.Equal(t, stockRes.Jobs, ourRes.Jobs, "round %d: fetched rows", round)
		require.Equal(t, stockRes.DecodeErrors, ourRes.DecodeErrors, "round %d: decode errors", round)
		if params.Kind != nil && len(params.Kind) == 0 {
			require.Empty(t, ourRes.Jobs, "an empty kind filter fetches nothing")
		}
		fetched += len(ourRes.Jobs)
		fetchedSinceIdle += len(ourRes.Jobs)

		// Stop after a full cycle of rounds (every queue and filter) that
		// fetched nothing, once the clock is past every scheduled_at.
		if round%15 == 14 {
			if round > 15*3 && fetchedSinceIdle == 0 {
				break
			}
			fetchedSinceIdle = 0
		}
	}

	require.Greater(t, fetched, 1000, "the rounds must drain the available backlog")
	require.Equal(t, allJobs(ctx, t, stockExec, stockSchema, jobCount), allJobs(ctx, t, ourExec, ourSchema, jobCount))

	// Everything that was available and due has been fetched exactly once.
	var left int
	require.NoError(t, ourExec.QueryRow(ctx, fmt.Sprintf(
		"SELECT count(*) FROM %s.river_job WHERE state = 'available'", pgx.Identifier{ourSchema}.Sanitize()),
	).Scan(&left))
	require.Zero(t, left)
}

func jobIDs(jobs []*rivertype.JobRow) []int64 {
	ids := make([]int64, len(jobs))
	for i, job := range jobs {
		ids[i] = job.ID
	}
	return ids
}
