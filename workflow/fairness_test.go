package workflow

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/exclusive"
	"github.com/riverbpmn/riverbpmn/index"
	"github.com/riverbpmn/riverbpmn/internal/longtest"
	"github.com/riverbpmn/riverbpmn/priority"
)

// fairArgs is the job of the fairness tests: one job of a tenant, in a
// process instance of its own.
type fairArgs struct {
	Tenant string `json:"tenant"`
	Seq    int    `json:"seq"`
}

func (fairArgs) Kind() string { return "fair_test" }

func (a fairArgs) JobContext() JobContext {
	return JobContext{
		ProcessDefinitionKey: "fair_process",
		ProcessInstanceID:    a.Tenant + "/" + strconv.Itoa(a.Seq),
		TenantID:             a.Tenant,
	}
}

type fairWorker struct {
	river.WorkerDefaults[fairArgs]
}

func (fairWorker) Work(context.Context, *river.Job[fairArgs]) error { return nil }

// fairFetch is one fetch cycle of the recorded timeline: the jobs one fetch
// took, by tenant. Jobs one fetch takes share their attempted_at (the
// fetch's transaction time), so the timeline is read back from the table.
type fairFetch struct {
	at       time.Time
	byTenant map[string]int
	total    int
}

// fairTimeline returns the fetch cycles of the schema's jobs, in order.
func fairTimeline(ctx context.Context, t *testing.T, schema string) []*fairFetch {
	t.Helper()
	rows, err := testPool(t).Query(ctx, fmt.Sprintf(`
SELECT attempted_at, coalesce(%[1]s.river_bpmn_ctx_tenant(metadata), ''), count(*)
FROM %[1]s.river_job WHERE attempted_at IS NOT NULL
GROUP BY 1, 2 ORDER BY 1, 2`, pgx.Identifier{schema}.Sanitize()))
	require.NoError(t, err)
	defer rows.Close()
	var fetches []*fairFetch
	for rows.Next() {
		var (
			at     time.Time
			tenant string
			n      int
		)
		require.NoError(t, rows.Scan(&at, &tenant, &n))
		if len(fetches) == 0 || !fetches[len(fetches)-1].at.Equal(at) {
			fetches = append(fetches, &fairFetch{at: at, byTenant: map[string]int{}})
		}
		f := fetches[len(fetches)-1]
		f.byTenant[tenant] += n
		f.total += n
	}
	require.NoError(t, rows.Err())
	return fetches
}

// fairClient builds a client of acq on schema with maxWorkers, and inserts
// jobs (not yet started).
func fairClient(ctx context.Context, t *testing.T, schema string, scope exclusive.Scope, acq Acquisition, maxWorkers int, jobs []fairArgs) *river.Client[pgx.Tx] {
	t.Helper()
	engine, err := NewEngine(testPool(t), &Config{Schema: schema, ExclusiveScope: scope})
	require.NoError(t, err)
	driver, err := engine.NewDriver(acq)
	require.NoError(t, err)
	workers := river.NewWorkers()
	river.AddWorker(workers, fairWorker{})
	client, err := river.NewClient(driver, &river.Config{
		Logger:     slog.New(slog.DiscardHandler),
		Middleware: []rivertype.Middleware{engine.Middleware()},
		Queues:     map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: maxWorkers}},
		Schema:     schema,
		TestOnly:   true,
		Workers:    workers,
	})
	require.NoError(t, err)
	t.Cleanup(func() {
		stopCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = client.StopAndCancel(stopCtx)
	})
	params := make([]river.InsertManyParams, len(jobs))
	for i, args := range jobs {
		params[i] = river.InsertManyParams{Args: args}
	}
	for start := 0; start < len(params); start += 2000 {
		_, err := client.InsertMany(ctx, params[start:min(start+2000, len(params))])
		require.NoError(t, err)
	}
	return client
}

// fairWaitFetched waits until every job of tenants has been fetched.
func fairWaitFetched(ctx context.Context, t *testing.T, schema string, tenants []string) {
	t.Helper()
	require.Eventually(t, func() bool {
		var waiting int
		require.NoError(t, testPool(t).QueryRow(ctx, fmt.Sprintf(`
SELECT count(*) FROM %[1]s.river_job
WHERE attempted_at IS NULL AND %[1]s.river_bpmn_ctx_tenant(metadata) = ANY($1)`, pgx.Identifier{schema}.Sanitize()), tenants).Scan(&waiting))
		return waiting == 0
	}, 2*time.Minute, 50*time.Millisecond)
}

// TestFairByTenantStarvation is the starvation scenario: one tenant with a
// backlog (20,000 jobs, inserted first, so River's order puts all of them
// ahead), then 50 tenants with 20 jobs each, on a real client fetching up to
// 100 jobs at a time, without and with exclusivity. From the recorded
// timeline: in every fetch cycle, every small tenant with jobs waiting got
// one (big never takes a job in a fetch that skips a waiting tenant), and a
// small tenant left with jobs after the fetch got at least big's count less
// one (round-robin); the 1,000 small jobs are all fetched while the big
// tenant has run fewer than 200 of its 20,000 (it takes the slots the small
// tenants leave when they run out), in the first few cycles (at most 30;
// 1,000 jobs at up to 100 per fetch need 11 at least; fetches are smaller
// when few workers are free). Stock River would run the 20,000 first.
func TestFairByTenantStarvation(t *testing.T) {
	longtest.Skip(t)
	const (
		bigJobs     = 20000
		smallCount  = 50
		smallJobs   = 20
		maxWorkers  = 100
		maxCycles   = 30
		maxBigSteal = 200
	)
	for _, scope := range []exclusive.Scope{exclusive.None, exclusive.ProcessInstance} {
		t.Run(scopeName(scope), func(t *testing.T) {
			ctx := context.Background()
			schema := exclSchema(t)
			var jobs []fairArgs
			for i := range bigJobs {
				jobs = append(jobs, fairArgs{Tenant: "big", Seq: i})
			}
			var small []string
			for s := range smallCount {
				tenant := fmt.Sprintf("small-%02d", s)
				small = append(small, tenant)
				for i := range smallJobs {
					jobs = append(jobs, fairArgs{Tenant: tenant, Seq: i})
				}
			}
			client := fairClient(ctx, t, schema, scope, Acquisition{FairByTenant: true}, maxWorkers, jobs)
			require.NoError(t, client.Start(ctx))
			fairWaitFetched(ctx, t, schema, small)
			require.NoError(t, client.Stop(ctx))

			fetches := fairTimeline(ctx, t, schema)
			left := map[string]int{}
			for _, tenant := range small {
				left[tenant] = smallJobs
			}
			bigBefore, lastCycle := 0, 0
			for i, f := range fetches {
				if len(left) == 0 {
					break
				}
				// Round-robin: a small tenant that still has jobs after the
				// fetch got its turn in every round big got one.
				for tenant, n := range f.byTenant {
					if tenant != "big" && left[tenant] > n {
						require.LessOrEqual(t, f.byTenant["big"], n+1,
							"fetch %d took %d of big's jobs but only %d of %s's, which had %d waiting", i+1, f.byTenant["big"], n, tenant, left[tenant])
					}
				}
				// A fetch with room for a round over every tenant still
				// waiting serves them all before big gets a job. A smaller
				// fetch (the producer asks only for its free slots) serves as
				// many tenants as it has room for, and the next fetch starts
				// its turns after the last one served.
				if f.total > len(left) {
					for tenant := range left {
						if f.byTenant[tenant] == 0 {
							require.Zero(t, f.byTenant["big"], "fetch %d (%d jobs) took big's jobs but none of %s's", i+1, f.total, tenant)
						}
					}
				}
				bigBefore += f.byTenant["big"]
				for tenant, n := range f.byTenant {
					if tenant == "big" {
						continue
					}
					left[tenant] -= n
					if left[tenant] == 0 {
						delete(left, tenant)
					}
				}
				lastCycle = i + 1
			}
			require.Empty(t, left)
			t.Logf("the %d small jobs were all fetched by fetch cycle %d, while big ran %d of its %d", smallCount*smallJobs, lastCycle, bigBefore, bigJobs)
			require.LessOrEqual(t, lastCycle, maxCycles)
			require.Less(t, bigBefore, maxBigSteal)
		})
	}
}

// TestFairByTenantWeighted: tenants with weights 3 and 1 (600 jobs each, and
// a client fetching up to 40 at a time) share the fetches about 3:1 while
// both have work: over the fetch cycles before heavy's last, heavy's jobs
// number between 2.5 and 3.5 times light's (tolerance +-1/6: a fetch of n
// gives heavy 3*ceil(n/4) at most, rounding in heavy's favour).
func TestFairByTenantWeighted(t *testing.T) {
	ctx := context.Background()
	schema := exclSchema(t)
	var jobs []fairArgs
	for i := range 600 {
		jobs = append(jobs, fairArgs{Tenant: "heavy", Seq: i}, fairArgs{Tenant: "light", Seq: i})
	}
	acq := Acquisition{FairByTenant: true, TenantWeights: map[string]int{"heavy": 3}}
	client := fairClient(ctx, t, schema, exclusive.None, acq, 40, jobs)
	require.NoError(t, client.Start(ctx))
	fairWaitFetched(ctx, t, schema, []string{"heavy"})
	require.NoError(t, client.Stop(ctx))

	fetches := fairTimeline(ctx, t, schema)
	heavy, light, cycles := 0, 0, 0
	for _, f := range fetches {
		heavy += f.byTenant["heavy"]
		if heavy >= 600 { // heavy's last cycle: it ran out of work in it
			break
		}
		light += f.byTenant["light"]
		cycles++
	}
	heavy = 0
	for _, f := range fetches[:cycles] {
		heavy += f.byTenant["heavy"]
	}
	require.Greater(t, cycles, 5)
	ratio := float64(heavy) / float64(light)
	t.Logf("over %d fetch cycles while both had work: heavy %d, light %d jobs, ratio %.2f", cycles, heavy, light, ratio)
	require.InDelta(t, 3.0, ratio, 0.5)
	if os.Getenv("SHOW_TIMELINE") != "" {
		for i, f := range fetches {
			t.Logf("fetch %d: %v", i+1, f.byTenant)
		}
	}
}

// TestTenantFairnessIndexesOnlyWhenEnabled: a migrated schema has no tenant
// indexes (inserts pay nothing for fairness until a fair client starts);
// EnableTenantFairness creates the index of River's order, or those of the
// orders it is given, only those, idempotently; DisableTenantFairness drops
// every order's; a fair client's start creates its own order's index only.
func TestTenantFairnessIndexesOnlyWhenEnabled(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	schema := exclSchema(t)
	engine, err := NewEngine(testPool(t), &Config{Schema: schema})
	require.NoError(t, err)
	requireIndexes := func(t *testing.T, want ...string) {
		t.Helper()
		got, err := engine.TenantFairnessIndexes(ctx)
		require.NoError(t, err)
		require.ElementsMatch(t, want, got)
		on, err := engine.TenantFairnessEnabled(ctx)
		require.NoError(t, err)
		require.Equal(t, len(want) > 0, on)
	}
	// riverdbtest may hand out a schema another test enabled: start clean.
	require.NoError(t, engine.DisableTenantFairness(ctx))
	requireIndexes(t)

	require.NoError(t, engine.EnableTenantFairness(ctx))
	require.NoError(t, engine.EnableTenantFairness(ctx), "idempotent")
	requireIndexes(t, "river_bpmn_fetch_tenant")
	on, err := engine.TenantFairnessEnabled(ctx, Acquisition{ByPriority: true})
	require.NoError(t, err)
	require.False(t, on, "River's order's index does not serve a fair client by priority")

	byDue := Acquisition{TimersFirst: true, ByDueDate: true}
	require.NoError(t, engine.EnableTenantFairness(ctx, byDue, Acquisition{ByPriority: true, DeploymentAware: true}))
	requireIndexes(t, "river_bpmn_fetch_tenant", "river_bpmn_fetch_tenant_td", "river_bpmn_fetch_tenant_p")
	on, err = engine.TenantFairnessEnabled(ctx, Acquisition{}, byDue)
	require.NoError(t, err)
	require.True(t, on)

	require.NoError(t, engine.EnableTenantFairness(ctx, acquisitionCombinations(priority.Range{Min: 0, Max: 1}, nil)...))
	requireIndexes(t, index.TenantFairness.Names()...)

	require.NoError(t, engine.DisableTenantFairness(ctx))
	requireIndexes(t)

	// An index left invalid (as by an interrupted concurrent build) is not
	// counted, and is built again.
	require.NoError(t, engine.EnableTenantFairness(ctx, Acquisition{ByDueDate: true}))
	_, err = testPool(t).Exec(ctx, `UPDATE pg_index SET indisvalid = false WHERE indexrelid = $1::regclass`,
		pgx.Identifier{schema, "river_bpmn_fetch_tenant_d"}.Sanitize())
	require.NoError(t, err)
	requireIndexes(t)
	require.NoError(t, engine.EnableTenantFairness(ctx, Acquisition{ByDueDate: true}))
	requireIndexes(t, "river_bpmn_fetch_tenant_d")
	require.NoError(t, engine.DisableTenantFairness(ctx))
	requireIndexes(t)

	driver, err := engine.NewDriver(Acquisition{FairByTenant: true, ByPriority: true, ByDueDate: true})
	require.NoError(t, err)
	workers := river.NewWorkers()
	river.AddWorker(workers, fairWorker{})
	client, err := river.NewClient(driver, &river.Config{
		Logger:     slog.New(slog.DiscardHandler),
		Middleware: []rivertype.Middleware{engine.Middleware()},
		Queues:     map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 1}},
		Schema:     schema,
		TestOnly:   true,
		Workers:    workers,
	})
	require.NoError(t, err)
	require.NoError(t, client.Start(ctx))
	t.Cleanup(func() { require.NoError(t, client.Stop(ctx)) })
	requireIndexes(t, "river_bpmn_fetch_tenant_pd") // a fair client creates its order's index when it starts, only that
}

// TestMigrateDownWithTenantIndexes: the tenant indexes are created at run
// time, outside the migration line, and those by priority or timers first
// read functions of migration 003; migrating down through 003 drops them
// with it rather than failing on their dependency.
func TestMigrateDownWithTenantIndexes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testPool(t)
	schema := emptySchema(t)
	_, err := MigrateUp(ctx, pool, &MigrateOpts{Schema: schema})
	require.NoError(t, err)
	engine, err := NewEngine(pool, &Config{Schema: schema})
	require.NoError(t, err)
	require.NoError(t, engine.EnableTenantFairness(ctx, acquisitionCombinations(priority.Range{Min: 0, Max: 1}, nil)...))
	present, err := engine.TenantFairnessIndexes(ctx)
	require.NoError(t, err)
	require.ElementsMatch(t, index.TenantFairness.Names(), present)

	_, err = MigrateDown(ctx, pool, &MigrateOpts{Schema: schema, TargetVersion: 2})
	require.NoError(t, err)
	present, err = engine.TenantFairnessIndexes(ctx)
	require.NoError(t, err)
	require.Empty(t, present)
	_, err = MigrateUp(ctx, pool, &MigrateOpts{Schema: schema})
	require.NoError(t, err, "and up again")
}
