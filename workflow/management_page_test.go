package workflow

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/riverbpmn/riverbpmn/internal/longtest"
	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"
)

// bulkInstanceJobs inserts n scheduled jobs of process instance pi straight
// into river_job (much faster than the client for 10,000 rows).
func bulkInstanceJobs(ctx context.Context, t *testing.T, engine *Engine, pi string, n int) {
	t.Helper()
	_, err := engine.dbPool.Exec(ctx, engine.sql(`
INSERT INTO /* TEMPLATE: schema */river_job (args, kind, max_attempts, metadata, priority, queue, state, scheduled_at)
SELECT '{}', 'bulk', 25, jsonb_build_object('bpmn', jsonb_build_object('process_instance_id', $1::text, 'process_definition_key', 'bulk')),
    1, 'default', 'scheduled', now() + interval '1 day'
FROM generate_series(1, $2::integer)`), pi, n)
	require.NoError(t, err)
}

func TestProcessInstanceJobsPage(t *testing.T) {
	longtest.Skip(t)
	ctx := context.Background()
	engine, schema := testEngine(t)
	bulkInstanceJobs(ctx, t, engine, "other", 5_000)
	// 100,000 jobs of 10,000 other instances, in the compact form (the
	// instances' own are in the object form): a table where reading it whole
	// costs what it would in production.
	_, err := engine.dbPool.Exec(ctx, engine.sql(`
INSERT INTO /* TEMPLATE: schema */river_job (args, kind, max_attempts, metadata, priority, queue, state, finalized_at)
SELECT '{}', 'bulk', 25, jsonb_build_object('bpmn', jsonb_build_array('done-' || (i % 10000), 'bulk')),
    1, 'default', 'completed', now()
FROM generate_series(1, 100000) AS i`))
	require.NoError(t, err)
	bulkInstanceJobs(ctx, t, engine, "big", 10_000)
	bulkInstanceJobs(ctx, t, engine, "small", 3)
	_, err = engine.dbPool.Exec(ctx, "ANALYZE "+pgx.Identifier{schema, "river_job"}.Sanitize())
	require.NoError(t, err)

	// Walking the pages lists every job of the instance once, in id order.
	var ids []int64
	after := int64(0)
	for pages := 0; ; pages++ {
		require.Less(t, pages, 20)
		page, err := engine.ProcessInstanceJobsPage(ctx, "big", after, 1000)
		require.NoError(t, err)
		for _, job := range page {
			ids = append(ids, job.ID)
			require.Equal(t, "bulk", job.Kind)
		}
		if len(page) < 1000 {
			break
		}
		after = page[len(page)-1].ID
	}
	require.Len(t, ids, 10_000)
	for i := 1; i < len(ids); i++ {
		require.Greater(t, ids[i], ids[i-1])
	}
	small, err := engine.ProcessInstanceJobsPage(ctx, "small", 0, 50)
	require.NoError(t, err)
	require.Len(t, small, 3)

	// Pages are never found by a sequential scan: a small instance's jobs
	// come through River's GIN index on metadata (migrations riverbpmn/012, 014);
	// for a deep page the planner may walk the primary key after the cursor
	// instead, when few jobs follow it.
	for _, args := range [][]any{{"big", ids[9_900], 51}, {"small", int64(0), 51}, {"big", int64(0), 51}} {
		rows, err := engine.dbPool.Query(ctx, "EXPLAIN "+engine.sql(processInstanceJobsPageSQL), args...)
		require.NoError(t, err)
		var plan []string
		for rows.Next() {
			var line string
			require.NoError(t, rows.Scan(&line))
			plan = append(plan, line)
		}
		require.NoError(t, rows.Err())
		text := strings.Join(plan, "\n")
		require.NotContains(t, text, "Seq Scan", text)
		if args[0] == "small" {
			// Containment on both forms of the job context (river_bpmn_ctx_has,
			// migration riverbpmn/016): two scans of the GIN index, or'ed.
			require.Contains(t, text, "BitmapOr", text)
			require.Equal(t, 2, strings.Count(text, "river_job_metadata_index"), text)
		}
	}

	_, err = engine.ProcessInstanceJobsPage(ctx, "big", 0, 0)
	require.ErrorContains(t, err, "limit 0 is out of range: a page holds 1 to 1000 rows")
	_, err = engine.ProcessInstanceJobsPage(ctx, "", 0, 10)
	require.ErrorContains(t, err, "process_instance_id")
}

func TestManagementPages(t *testing.T) {
	ctx := context.Background()
	engine, schema := testEngineWithConfig(t, &Config{
		ProcessDefinitions: []ProcessDefinition{{Key: "p"}, {Key: "excl_process"}},
		JobDefinitions: []JobDefinition{
			{ID: "def-a", ProcessDefinitionKey: "p", ActivityID: "act_a", Kind: "page_a"},
			{ID: "def-b", ProcessDefinitionKey: "p", ActivityID: "act_b", Kind: "page_b"},
			{ID: "def-c", ProcessDefinitionKey: "p", ActivityID: "act_c", Kind: "page_c"},
		},
	})
	require.NoError(t, engine.SyncJobDefinitions(ctx))
	client, err := NewClient(engine, &river.Config{Schema: schema, TestOnly: true})
	require.NoError(t, err)

	var discarded []int64
	for _, pi := range []string{"pi-1", "pi-2", "pi-3"} {
		res, err := client.Insert(ctx, exclArgs{Instance: pi}, nil)
		require.NoError(t, err)
		require.NoError(t, engine.SetJobRetries(ctx, res.Job.ID, 0))
		discarded = append(discarded, res.Job.ID)
	}
	first, err := engine.OpenIncidentsPage(ctx, 0, 2)
	require.NoError(t, err)
	require.Len(t, first, 2)
	require.Equal(t, discarded[0], first[0].JobID)
	rest, err := engine.OpenIncidentsPage(ctx, first[1].ID, 2)
	require.NoError(t, err)
	require.Len(t, rest, 1)
	require.Equal(t, discarded[2], rest[0].JobID)

	defs, err := engine.JobDefinitionsPage(ctx, "", 2)
	require.NoError(t, err)
	require.Len(t, defs, 2)
	require.Equal(t, []string{"def-a", "def-b"}, []string{defs[0].ID, defs[1].ID})
	defs, err = engine.JobDefinitionsPage(ctx, "def-b", 2)
	require.NoError(t, err)
	require.Len(t, defs, 1)
	require.Equal(t, "def-c", defs[0].ID)

	locks, err := engine.ExclusiveLocksPage(ctx, "", 10)
	require.NoError(t, err)
	require.Empty(t, locks)
	_, err = engine.OpenIncidentsPage(ctx, 0, MaxPageSize+1)
	require.ErrorContains(t, err, "ListParams.Limit must be 0 (default 100) to 1000, got 1001")

	timers, err := engine.ProcessInstanceTimersPage(ctx, "pi-1", 0, 10)
	require.NoError(t, err)
	require.Empty(t, timers)
}
