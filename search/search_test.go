package search_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river/riverdbtest"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/riverbpmntest"
	"github.com/riverbpmn/riverbpmn/search"
)

// newSchema returns a test schema with both migration lines.
func newSchema(t testing.TB) (context.Context, *pgxpool.Pool, string) {
	t.Helper()
	ctx := context.Background()
	return ctx, riverbpmntest.DBPool(t), riverdbtest.TestSchema(ctx, t, riverbpmntest.Driver(t), nil)
}

// seedSQL inserts $1 jobs in one statement: job i belongs to process
// instance order-(i/3) (three jobs an instance), of process definition
// order or invoice (alternating by instance), tenant t(i%4), job definition
// charge or ship, kind seed_a or seed_b (one job in 1000); a job in 500 is
// discarded, one in 100 scheduled, one in 10 available, the rest completed.
// Created one second apart ending now (newest highest id). The context is
// in the compact (array) form, as the library writes it.
const seedSQL = `
INSERT INTO %[1]s.river_job (state, attempt, max_attempts, created_at, scheduled_at, finalized_at, attempted_at, priority, args, kind, metadata, queue, errors)
SELECT
    s.state::%[1]s.river_job_state, 1, 5,
    now() - ($1 - i) * interval '1 second',
    CASE WHEN s.state = 'scheduled' THEN now() + interval '1 hour' ELSE now() - ($1 - i) * interval '1 second' END,
    CASE WHEN s.state IN ('completed', 'discarded') THEN now() - ($1 - i) * interval '1 second' END,
    CASE WHEN s.state IN ('completed', 'discarded') THEN now() - ($1 - i) * interval '1 second' END,
    1, '{}',
    CASE WHEN i %% 1000 = 0 THEN 'seed_b' ELSE 'seed_a' END,
    jsonb_build_object('bpmn', jsonb_build_array(
        'order-' || (i / 3),
        CASE WHEN (i / 3) %% 2 = 0 THEN 'order' ELSE 'invoice' END,
        'act',
        CASE WHEN i %% 2 = 0 THEN 'charge' ELSE 'ship' END,
        0, true, null, null, null, 't' || (i %% 4))),
    'default',
    CASE WHEN s.state = 'discarded' THEN ARRAY[jsonb_build_object('attempt', 1, 'at', now(), 'error', 'boom ' || i)] END
FROM generate_series(1, $1) AS i
CROSS JOIN LATERAL (SELECT CASE
    WHEN i %% 500 = 0 THEN 'discarded'
    WHEN i %% 100 = 0 THEN 'scheduled'
    WHEN i %% 10 = 0 THEN 'available'
    ELSE 'completed' END AS state) AS s`

func seed(t testing.TB, ctx context.Context, pool *pgxpool.Pool, schema string, n int) {
	t.Helper()
	_, err := pool.Exec(ctx, fmt.Sprintf(seedSQL, pgx.Identifier{schema}.Sanitize()), n)
	require.NoError(t, err)
	_, err = pool.Exec(ctx, "ANALYZE "+pgx.Identifier{schema, "river_job"}.Sanitize())
	require.NoError(t, err)
}

func TestJobsFiltersAndPaging(t *testing.T) {
	ctx, pool, schema := newSchema(t)
	seed(t, ctx, pool, schema, 3000)

	// Every filter, checked against the rule the seed follows.
	cases := []struct {
		name  string
		f     search.Filter
		check func(j *search.Job) bool
		want  int
	}{
		{"all", search.Filter{}, func(*search.Job) bool { return true }, 3000},
		{"discarded", search.Filter{States: []rivertype.JobState{rivertype.JobStateDiscarded}}, func(j *search.Job) bool { return j.State == rivertype.JobStateDiscarded && j.ID%500 == 0 }, 6},
		{"scheduled+discarded", search.Filter{States: []rivertype.JobState{rivertype.JobStateScheduled, rivertype.JobStateDiscarded}}, func(j *search.Job) bool { return j.ID%100 == 0 }, 30},
		{"kind", search.Filter{Kind: "seed_b"}, func(j *search.Job) bool { return j.Kind == "seed_b" }, 3},
		{"job definition", search.Filter{JobDefinitionID: "charge"}, func(j *search.Job) bool { return j.JobDefinitionID == "charge" && j.ID%2 == 0 }, 1500},
		{"process definition", search.Filter{ProcessDefinitionKey: "invoice"}, func(j *search.Job) bool { return j.ProcessDefinitionKey == "invoice" }, 1500},
		{"tenant", search.Filter{TenantID: "t3"}, func(j *search.Job) bool { return j.TenantID == "t3" && j.ID%4 == 3 }, 750},
		{"instance prefix", search.Filter{InstancePrefix: "order-99"}, func(j *search.Job) bool { return strings.HasPrefix(j.ProcessInstanceID, "order-99") }, 33},
		{"combined", search.Filter{States: []rivertype.JobState{rivertype.JobStateAvailable}, TenantID: "t2", ProcessDefinitionKey: "order"}, func(j *search.Job) bool {
			return j.State == rivertype.JobStateAvailable && j.TenantID == "t2" && j.ProcessDefinitionKey == "order"
		}, -1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, oldest := range []bool{false, true} {
				f := c.f
				f.Oldest = oldest
				var all []*search.Job
				cursor := int64(0)
				for range 1000 {
					page, err := search.Jobs(ctx, pool, schema, &f, cursor, 50)
					require.NoError(t, err)
					all = append(all, page...)
					if len(page) < 50 {
						break
					}
					cursor = page[len(page)-1].ID
				}
				if c.want >= 0 {
					require.Len(t, all, c.want)
				} else {
					require.NotEmpty(t, all)
				}
				for i, j := range all {
					require.True(t, c.check(j), "%+v", j)
					if i > 0 {
						if oldest {
							require.Greater(t, j.ID, all[i-1].ID)
						} else {
							require.Less(t, j.ID, all[i-1].ID)
						}
					}
				}
			}
		})
	}

	// The time range, from the seed's clock: job i was created 3000-i
	// seconds before the newest.
	var newest time.Time
	require.NoError(t, pool.QueryRow(ctx, fmt.Sprintf("SELECT max(created_at) FROM %s.river_job", pgx.Identifier{schema}.Sanitize())).Scan(&newest))
	f := search.Filter{CreatedFrom: newest.Add(-100 * time.Second)}
	page, err := search.Jobs(ctx, pool, schema, &f, 0, 1000)
	require.NoError(t, err)
	require.Len(t, page, 101)
	require.Equal(t, int64(3000), page[0].ID-page[len(page)-1].ID+2900)
	f = search.Filter{CreatedTo: newest.Add(-2990 * time.Second), Oldest: true}
	page, err = search.Jobs(ctx, pool, schema, &f, 0, 1000)
	require.NoError(t, err)
	require.Len(t, page, 9)
	f = search.Filter{CreatedFrom: newest.Add(-20 * time.Second), CreatedTo: newest.Add(-10 * time.Second)}
	page, err = search.Jobs(ctx, pool, schema, &f, 0, 1000)
	require.NoError(t, err)
	require.Len(t, page, 10)

	_, err = search.Jobs(ctx, pool, schema, &search.Filter{States: []rivertype.JobState{"stuck"}}, 0, 10)
	require.ErrorContains(t, err, `state "stuck" is not a job state`)
	_, err = search.Jobs(ctx, pool, schema, nil, 0, 0)
	require.ErrorContains(t, err, "limit 0 is out of range")
}

// TestInstancesPageNext: a page of instances names the next page when it is
// full, or when it walked its whole window of jobs while holding fewer
// instances (one instance's many jobs filled the window); otherwise it is
// the last. Following Next lists every instance.
func TestInstancesPageNext(t *testing.T) {
	ctx, pool, schema := newSchema(t)
	// Instance a: one job, the oldest; then instance b: 50 jobs.
	_, err := pool.Exec(ctx, fmt.Sprintf(`INSERT INTO %[1]s.river_job (state, max_attempts, args, kind, metadata, queue)
		SELECT 'available', 1, '{}', 'k', jsonb_build_object('bpmn', jsonb_build_array(CASE WHEN i = 0 THEN 'a' ELSE 'b' END, 'order', 'act', 'charge')), 'default'
		FROM generate_series(0, 50) AS i ORDER BY i`, pgx.Identifier{schema}.Sanitize()))
	require.NoError(t, err)

	// Two instances a page walk 2*InstanceWindow = 40 jobs: all b's.
	page, err := search.InstancesPage(ctx, pool, schema, nil, 0, 2)
	require.NoError(t, err)
	require.Len(t, page.Instances, 1)
	require.Equal(t, "b", page.Instances[0].ID)
	require.NotZero(t, page.Next, "the window ran out: more may follow")
	page, err = search.InstancesPage(ctx, pool, schema, nil, page.Next, 2)
	require.NoError(t, err)
	require.Len(t, page.Instances, 2, "b's older jobs, then a")
	require.Equal(t, "a", page.Instances[1].ID)
	require.Equal(t, page.Instances[1].JobID, page.Next, "a full page names the next")
	page, err = search.InstancesPage(ctx, pool, schema, nil, page.Next, 2)
	require.NoError(t, err)
	require.Empty(t, page.Instances)
	require.Zero(t, page.Next)

	// Ten a page: the window (200 jobs) holds every job: one page, the last.
	page, err = search.InstancesPage(ctx, pool, schema, nil, 0, 10)
	require.NoError(t, err)
	require.Len(t, page.Instances, 2)
	require.Zero(t, page.Next, "not full, and every job walked")
	page, err = search.InstancesPage(ctx, pool, schema, &search.Filter{Oldest: true}, 0, 1)
	require.NoError(t, err)
	require.Equal(t, "a", page.Instances[0].ID)
	require.Equal(t, page.Instances[0].JobID, page.Next)
}

func TestInstances(t *testing.T) {
	ctx, pool, schema := newSchema(t)
	seed(t, ctx, pool, schema, 3000)
	for _, oldest := range []bool{false, true} {
		seen := map[string]bool{}
		cursor := int64(0)
		for {
			page, err := search.Instances(ctx, pool, schema, &search.Filter{Oldest: oldest, ProcessDefinitionKey: "order"}, cursor, 50)
			require.NoError(t, err)
			if len(page) == 0 {
				break
			}
			onPage := map[string]bool{}
			for i, in := range page {
				require.False(t, onPage[in.ID], "instance %s twice on one page", in.ID)
				onPage[in.ID] = true
				seen[in.ID] = true
				require.Equal(t, "order", in.ProcessDefinitionKey)
				if i > 0 {
					require.Equal(t, oldest, in.JobID > page[i-1].JobID)
				}
			}
			cursor = page[len(page)-1].JobID
		}
		require.Len(t, seen, 501) // order-0 .. order-1000, the even ones
	}
	// Instances with an incident: those with a discarded job, newest first.
	page, err := search.Instances(ctx, pool, schema, &search.Filter{States: []rivertype.JobState{rivertype.JobStateDiscarded}}, 0, 50)
	require.NoError(t, err)
	require.Len(t, page, 6)
	require.Equal(t, "order-1000", page[0].ID)
	require.Equal(t, rivertype.JobStateDiscarded, page[0].JobState)
	page, err = search.Instances(ctx, pool, schema, &search.Filter{InstancePrefix: "order-99"}, 0, 50)
	require.NoError(t, err)
	require.Len(t, page, 11)
}

// TestPlansUseIndexes runs EXPLAIN on each listing's page with sequential
// scans discouraged, on a small table, and requires the index that serves
// it: no listing reads the whole table.
func TestPlansUseIndexes(t *testing.T) {
	ctx, pool, schema := newSchema(t)
	seed(t, ctx, pool, schema, 3000)
	conn, err := pool.Acquire(ctx)
	require.NoError(t, err)
	defer conn.Release()
	_, err = conn.Exec(ctx, "SET enable_seqscan = off")
	require.NoError(t, err)
	for _, c := range []struct {
		name      string
		f         search.Filter
		instances bool
		index     string
	}{
		{"all newest", search.Filter{}, false, "river_job_pkey"},
		{"all oldest", search.Filter{Oldest: true}, false, "river_job_pkey"},
		{"discarded", search.Filter{States: []rivertype.JobState{rivertype.JobStateDiscarded}}, false, "river_bpmn_job_state_sparse"},
		{"discarded oldest", search.Filter{States: []rivertype.JobState{rivertype.JobStateDiscarded}, Oldest: true}, false, "river_bpmn_job_state_sparse"},
		{"job definition", search.Filter{JobDefinitionID: "charge"}, false, "river_job"},
		{"instances", search.Filter{}, true, "river_job_pkey"},
		{"discarded of a tenant", search.Filter{States: []rivertype.JobState{rivertype.JobStateDiscarded}, TenantID: "t0"}, false, "river_bpmn_job_state_sparse"},
		{"instances with incidents", search.Filter{States: []rivertype.JobState{rivertype.JobStateDiscarded}}, true, "river_bpmn_job_state_sparse"},
	} {
		t.Run(c.name, func(t *testing.T) {
			sql, args, err := search.SQL(schema, &c.f, 0, 51, c.instances)
			require.NoError(t, err)
			plan := explain(t, ctx, conn, sql, args)
			require.NotContains(t, plan, "Seq Scan", plan)
			require.Contains(t, plan, c.index, plan)
		})
	}
}

func explain(t *testing.T, ctx context.Context, conn *pgxpool.Conn, sql string, args []any) string {
	t.Helper()
	rows, err := conn.Query(ctx, "EXPLAIN "+sql, args...)
	require.NoError(t, err)
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	return strings.Join(lines, "\n")
}
