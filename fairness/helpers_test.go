package fairness_test

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdbtest"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/rivershared/riverpilot"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/exclusive"
	"github.com/riverbpmn/riverbpmn/liveness"
	"github.com/riverbpmn/riverbpmn/priority"
	"github.com/riverbpmn/riverbpmn/riverbpmntest"
	"github.com/riverbpmn/riverbpmn/workflow"
)

// setupEngine returns an engine with config on a schema of its own that
// riverdbtest made and migrated (riverbpmntest), and the test database's
// pool.
func setupEngine(ctx context.Context, t *testing.T, config *workflow.Config) *riverbpmntest.Bundle {
	t.Helper()
	schema := riverdbtest.TestSchema(ctx, t, riverbpmntest.Driver(t), nil)
	return riverbpmntest.New(ctx, t, schema, &riverbpmntest.Opts{Config: config})
}

// fetchConfig is the configuration of an engine whose fetches a test makes
// itself (fetcher), with exclusivity enforced in scope: liveness is off, so
// a fetch needs no client session (the fetch query is the same).
func fetchConfig(scope exclusive.Scope) *workflow.Config {
	return &workflow.Config{ExclusiveScope: scope, Liveness: liveness.Config{Disabled: true}}
}

// fairArgs is the job of the fairness tests: one job of a tenant, in a
// process instance of its own.
type fairArgs struct {
	Tenant string `json:"tenant"`
	Seq    int    `json:"seq"`
}

func (fairArgs) Kind() string { return "fair_test" }

func (a fairArgs) JobContext() workflow.JobContext {
	return workflow.JobContext{
		ProcessDefinitionKey: "fair_process",
		ProcessInstanceID:    a.Tenant + "/" + strconv.Itoa(a.Seq),
		TenantID:             a.Tenant,
	}
}

type fairWorker struct {
	river.WorkerDefaults[fairArgs]
}

func (fairWorker) Work(context.Context, *river.Job[fairArgs]) error { return nil }

// fetcher fetches from a schema as one client's producer does: through one
// pilot of the client's driver, so that the fetch query is rendered once and
// the turns carry from fetch to fetch (a new fetcher on a new driver is a
// client that restarted).
type fetcher struct {
	driver *workflow.Driver
	pilot  riverpilot.Pilot
	schema string
}

// newFetcher returns a fetcher of a client of acq on bundle's engine.
func newFetcher(t *testing.T, bundle *riverbpmntest.Bundle, acq workflow.Acquisition) *fetcher {
	t.Helper()
	return newEngineFetcher(t, bundle.Engine, bundle.Schema, acq)
}

// newEngineFetcher returns a fetcher of a client of acq on engine, whose
// schema is schema.
func newEngineFetcher(t *testing.T, engine *workflow.Engine, schema string, acq workflow.Acquisition) *fetcher {
	t.Helper()
	driver, err := engine.NewDriver(acq)
	require.NoError(t, err)
	return &fetcher{driver: driver, pilot: driver.PluginPilot(), schema: schema}
}

// fetch locks up to n available jobs of queue and moves them to running,
// at now (nil: the database's).
func (f *fetcher) fetch(ctx context.Context, t *testing.T, queue string, n int, now *time.Time) []*rivertype.JobRow {
	t.Helper()
	res, err := f.pilot.JobGetAvailable(ctx, f.driver.GetExecutor(), nil, &riverdriver.JobGetAvailableParams{
		ClientID: "fairness", MaxAttemptedBy: 10, MaxToLock: n, Now: now, Queue: queue, Schema: f.schema,
	})
	require.NoError(t, err)
	return res.Jobs
}

// complete marks jobs completed, as River's completer would after they ran
// (a completed job's exclusive key is free: its lock names no running
// attempt).
func complete(ctx context.Context, t *testing.T, pool *pgxpool.Pool, schema string, jobs []*rivertype.JobRow) {
	t.Helper()
	_, err := pool.Exec(ctx, fmt.Sprintf(`UPDATE %s.river_job SET state = 'completed', finalized_at = now() WHERE id = ANY($1)`,
		pgx.Identifier{schema}.Sanitize()), jobIDs(jobs))
	require.NoError(t, err)
}

// tenantOf is a fetched job's tenant, as its job context gives it ("" for
// none).
func tenantOf(t *testing.T, job *rivertype.JobRow) string {
	t.Helper()
	jc, err := workflow.JobContextOf(job)
	require.NoError(t, err)
	return jc.TenantID
}

func jobIDs(jobs []*rivertype.JobRow) []int64 {
	ids := make([]int64, len(jobs))
	for i, job := range jobs {
		ids[i] = job.ID
	}
	return ids
}

// fairClient builds a client of acq on bundle's engine with maxWorkers, and
// inserts jobs (not yet started). It is stopped when the test ends.
func fairClient(ctx context.Context, t *testing.T, bundle *riverbpmntest.Bundle, acq workflow.Acquisition, maxWorkers int, jobs []fairArgs) *river.Client[pgx.Tx] {
	t.Helper()
	driver, err := bundle.Engine.NewDriver(acq)
	require.NoError(t, err)
	workers := river.NewWorkers()
	river.AddWorker(workers, fairWorker{})
	client, err := driver.NewClient(&river.Config{
		Logger:   slog.New(slog.DiscardHandler),
		Queues:   map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: maxWorkers}},
		TestOnly: true,
		Workers:  workers,
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

// fairFetch is one fetch cycle of the recorded timeline: the jobs one fetch
// took, by tenant. Jobs one fetch takes share their attempted_at (the
// fetch's transaction time), so the timeline is read back from the table.
type fairFetch struct {
	at       time.Time
	byTenant map[string]int
	total    int
}

// fairTimeline returns the fetch cycles of the schema's jobs, in order.
func fairTimeline(ctx context.Context, t *testing.T, pool *pgxpool.Pool, schema string) []*fairFetch {
	t.Helper()
	rows, err := pool.Query(ctx, fmt.Sprintf(`
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

// fairWaitFetched waits until every job of tenants has been fetched.
func fairWaitFetched(ctx context.Context, t *testing.T, pool *pgxpool.Pool, schema string, tenants []string) {
	t.Helper()
	require.Eventually(t, func() bool {
		var waiting int
		require.NoError(t, pool.QueryRow(ctx, fmt.Sprintf(`
SELECT count(*) FROM %[1]s.river_job
WHERE attempted_at IS NULL AND %[1]s.river_bpmn_ctx_tenant(metadata) = ANY($1)`, pgx.Identifier{schema}.Sanitize()), tenants).Scan(&waiting))
		return waiting == 0
	}, 2*time.Minute, 50*time.Millisecond)
}

// acquisitionCombinations returns every valid Acquisition: each ordering
// option on or off, a priority range (which needs ByPriority) on or off,
// deployment awareness on or off (24).
func acquisitionCombinations(rng priority.Range, deployments []string) []workflow.Acquisition {
	var combos []workflow.Acquisition
	for bits := range 32 {
		acq := workflow.Acquisition{ByPriority: bits&1 != 0, TimersFirst: bits&2 != 0, ByDueDate: bits&4 != 0}
		if bits&8 != 0 {
			if !acq.ByPriority {
				continue
			}
			r := rng
			acq.PriorityRange = &r
		}
		if bits&16 != 0 {
			acq.DeploymentAware, acq.Deployments = true, deployments
		}
		combos = append(combos, acq)
	}
	return combos
}

// acquisitionName names acq's options, "ByPriority+TimersFirst" ("River":
// none).
func acquisitionName(acq workflow.Acquisition) string {
	var parts []string
	for _, opt := range []struct {
		on   bool
		name string
	}{
		{acq.ByPriority, "ByPriority"}, {acq.TimersFirst, "TimersFirst"}, {acq.ByDueDate, "ByDueDate"},
		{acq.PriorityRange != nil, "PriorityRange"}, {acq.DeploymentAware, "DeploymentAware"},
	} {
		if opt.on {
			parts = append(parts, opt.name)
		}
	}
	if len(parts) == 0 {
		return "River"
	}
	return strings.Join(parts, "+")
}

// allScopes are the exclusive scopes, none included.
var allScopes = []exclusive.Scope{exclusive.None, exclusive.ProcessInstance, exclusive.RootProcessInstance}

// scopeName names scope as a subtest.
func scopeName(scope exclusive.Scope) string { return strings.ReplaceAll(scope.String(), " ", "_") }
