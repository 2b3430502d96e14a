package workflow

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/exclusive"
	"github.com/riverbpmn/riverbpmn/internal/longtest"
	"github.com/riverbpmn/riverbpmn/priority"
)

// testBatchFetchQuery renders the fetch query of a client with acquisition
// acq on an engine enforcing scope with Config.ExclusiveBatch batch.
func testBatchFetchQuery(t testing.TB, schema string, scope exclusive.Scope, acq Acquisition, batch int) *testQuery {
	t.Helper()
	engine, err := NewEngine(nil, &Config{ExclusiveScope: scope, ExclusiveBatch: batch})
	require.NoError(t, err)
	driver, err := engine.NewDriver(acq)
	require.NoError(t, err)
	query, err := newPilot(driver).fetchStatement(schema)
	require.NoError(t, err)
	return &testQuery{Statement: query}
}

// TestExclusiveBatchOffIsTheSameQuery: ExclusiveBatch 0 and 1 render the
// very query of an engine without the option, for every combination.
func TestExclusiveBatchOffIsTheSameQuery(t *testing.T) {
	t.Parallel()
	combos := acquisitionCombinations(priority.Range{Min: -100, Max: 300}, []string{"dep-1", "dep-2"})
	for _, scope := range allScopes {
		for _, acq := range combos {
			want := testFetchQuery(t, "s", scope, acq)
			for _, batch := range []int{0, 1} {
				got := testBatchFetchQuery(t, "s", scope, acq, batch)
				require.Equal(t, want.SQL, got.SQL, "%s/%s batch %d", scopeName(scope), acquisitionName(acq), batch)
				require.Equal(t, want.Names, got.Names)
				require.False(t, got.Batch)
			}
			if scope.Enabled() {
				require.True(t, testBatchFetchQuery(t, "s", scope, acq, 2).Batch)
			} else {
				_, err := NewEngine(nil, &Config{ExclusiveScope: exclusive.None, ExclusiveBatch: 2})
				require.ErrorContains(t, err, "Config.ExclusiveBatch 2 needs an enforcing ExclusiveScope, not exclusive.None")
			}
		}
	}
	_, err := NewEngine(nil, &Config{ExclusiveScope: exclusive.ProcessInstance, ExclusiveBatch: -1})
	require.ErrorContains(t, err, "Config.ExclusiveBatch must not be negative, got -1")
}

// TestExclusiveBatchFetchPlansUseIndexes is TestFetchPlansUseIndexes for
// the batching fetch (Config.ExclusiveBatch 10): every combination of
// acquisition options under both scopes, custom and generic plans, on
// 100,000 available jobs. Each reads the queue through its order's index,
// probes the head-of-key index and the lock's primary key, never scans
// river_job; a run's jobs (the scans named later) are read off the
// head-of-key index of the order (migration 005's in River's order, 010's
// by priority), and, with an order the head-of-key index has (River's, or
// by priority alone), without any sort.
func TestExclusiveBatchFetchPlansUseIndexes(t *testing.T) {
	longtest.Skip(t)
	t.Parallel()
	ctx := context.Background()
	schema := exclSchema(t)
	pool := testPool(t)
	combos := acquisitionCombinations(priority.Range{Min: -100, Max: 300}, []string{"dep-1", "dep-2"})
	// The fetch-order indexes these clients create when they start, before
	// the backlog's ANALYZE (as in TestFetchPlansUseIndexes).
	engine, err := NewEngine(pool, &Config{Schema: schema})
	require.NoError(t, err)
	require.NoError(t, engine.EnableFetchOrderIndexes(ctx, combos...))
	require.NoError(t, exclusiveHeadIndexes.enable(ctx, engine, exclusiveHeadIndexNames))
	_, err = pool.Exec(ctx, fmt.Sprintf(planBacklogSQL, pgx.Identifier{schema}.Sanitize()))
	require.NoError(t, err)
	conn, err := pool.Acquire(ctx)
	require.NoError(t, err)
	defer conn.Release()

	for _, scope := range []exclusive.Scope{exclusive.ProcessInstance, exclusive.RootProcessInstance} {
		for _, acq := range combos {
			for _, generic := range []bool{false, true} {
				name := fmt.Sprintf("%s/%s/generic=%t", scopeName(scope), acquisitionName(acq), generic)
				query := testBatchFetchQuery(t, schema, scope, acq, 10)
				require.True(t, query.Batch)
				types, args, literals := query.explainArgs(t)
				plan := explainPlan(ctx, t, conn, query.SQL, types, args, literals, generic)
				headIndex := headIndex(scope, acq)
				t.Run(name, func(t *testing.T) {
					requireBatchIndexedPlan(t, plan, true, orderIndex(acq), headIndex, "river_bpmn_exclusive_lock_pkey")
					requireScanUses(t, plan, orderIndex(acq))
					if !acq.FairByTenant {
						requireProbesUse(t, plan, headIndex)
						requireProbesSeek(t, plan)
					}
					indexOrder := true
					runScans := 0
					plan.walk(func(node planNode, ancestors []planNode) {
						if node.RelationName != "river_job" || !strings.HasPrefix(node.Alias, "later") {
							return
						}
						runScans++
						require.Equal(t, headIndex, node.IndexName, "a run is read off the head-of-key index:\n%s", plan)
						if indexOrder {
							for _, a := range ancestors {
								if a.Relationship == "SubPlan" || a.Relationship == "InitPlan" {
									// The run's subplan: nothing in it sorts.
									a.walk(func(n planNode, _ []planNode) {
										require.NotContains(t, []string{"Sort", "Incremental Sort"}, n.NodeType, "a run in index order is not sorted:\n%s", plan)
									})
								}
							}
						}
					})
					require.NotZero(t, runScans, "the plan reads runs:\n%s", plan)
					if os.Getenv("SHOW_PLANS") != "" {
						t.Logf("%s", plan)
					}
				})
			}
		}
	}
}

// requireBatchIndexedPlan is requireIndexedPlan for the batching fetch:
// river_job is read only through indexes, every index in wantIndexes is
// used, and no rows of river_job are sorted, except, when !indexOrder (an
// order led by timers first or due date, which no head-of-key index has),
// one key's waiting jobs read for a run (the scan named later), as the head
// probe reads them for such an order.
func requireBatchIndexedPlan(t *testing.T, plan planNode, indexOrder bool, wantIndexes ...string) {
	t.Helper()
	used := map[string]bool{}
	plan.walk(func(node planNode, _ []planNode) {
		if node.IndexName != "" {
			used[node.IndexName] = true
		}
		if node.RelationName == "river_job" {
			require.NotContains(t, []string{"Seq Scan", "Bitmap Heap Scan"}, node.NodeType,
				"river_job is read without an index:\n%s", plan)
		}
		if node.NodeType == "Sort" || node.NodeType == "Incremental Sort" {
			if !indexOrder && sortsOnlyRunScan(node) {
				return
			}
			require.False(t, readsRiverJob(node), "river_job rows are sorted (%s):\n%s", node.NodeType, plan)
		}
	})
	for _, index := range wantIndexes {
		require.True(t, used[index], "index %s is not used:\n%s", index, plan)
	}
}

// sortsOnlyRunScan reports whether a sort's input is the scan of one key's
// waiting jobs for a run (alias later), directly.
func sortsOnlyRunScan(node planNode) bool {
	return len(node.Plans) == 1 && node.Plans[0].RelationName == "river_job" && strings.HasPrefix(node.Plans[0].Alias, "later")
}

// runStaleArgs is the job of TestExclusiveBatchStalenessNamesTheRun.
type runStaleArgs struct {
	Instance string `json:"instance"`
	// Step: "complete" completes the job in its own transaction
	// (river.JobCompleteTx) and returns; "block" waits for the test; other
	// values return at once.
	Step string `json:"step"`
}

func (runStaleArgs) Kind() string { return "run_stale" }

func (a runStaleArgs) JobContext() JobContext {
	return JobContext{ProcessInstanceID: a.Instance, ProcessDefinitionKey: "run_stale"}
}

type runStaleWorker struct {
	river.WorkerDefaults[runStaleArgs]
	pool     *pgxpool.Pool
	timeline *exclusive.Timeline
	blocked  chan struct{}
	release  chan struct{}
}

func (w *runStaleWorker) Work(ctx context.Context, job *river.Job[runStaleArgs]) error {
	defer w.timeline.Begin(job.Args.Instance, job.ID, job.Attempt)()
	switch job.Args.Step {
	case "complete":
		tx, err := w.pool.Begin(ctx)
		if err != nil {
			return err
		}
		defer func() { _ = tx.Rollback(ctx) }()
		if _, err := river.JobCompleteTx[*Driver](ctx, tx, job); err != nil {
			return err
		}
		return tx.Commit(ctx)
	case "block":
		close(w.blocked)
		select {
		case <-w.release:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// TestExclusiveBatchStalenessNamesTheRun: a client takes the run [j1, j2, j3]
// of instance pi (Config.ExclusiveBatch 3). j1 completes itself in the
// database (river.JobCompleteTx), so the lock's head no longer runs; j2 then
// works (blocked by the test) and j3 waits its turn. A new job j4 of pi is
// inserted. Were staleness judged by the head alone, the lock would be stale
// now and another client's fetch would take pi over and start j4 beside j2.
// It must not: the fetch of a client without batching takes nothing, the
// sweeper deletes nothing, ExclusiveLocks shows the lock live with its run,
// and ExclusiveWait says j4 waits. Once j2 is let go, j3 then j4 run, and no
// two of the four overlap.
func TestExclusiveBatchStalenessNamesTheRun(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	schema := exclSchema(t)
	pool := exclNodePool(t, 6)
	engine, err := NewEngine(pool, &Config{Schema: schema, ExclusiveScope: exclusive.ProcessInstance, ExclusiveBatch: 3})
	require.NoError(t, err)
	w := &runStaleWorker{pool: pool, timeline: &exclusive.Timeline{}, blocked: make(chan struct{}), release: make(chan struct{})}
	workers := river.NewWorkers()
	river.AddWorker(workers, w)
	client, err := river.NewClient(engine.Driver(), &river.Config{
		FetchCooldown: 5 * time.Millisecond, FetchPollInterval: 50 * time.Millisecond,
		Logger:     slog.New(slog.DiscardHandler),
		Middleware: []rivertype.Middleware{engine.Middleware()},
		Queues:     map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 3}},
		Schema:     schema, TestOnly: true, Workers: workers,
	})
	require.NoError(t, err)
	var ids []int64
	for _, step := range []string{"complete", "block", "quick"} {
		res, err := client.Insert(ctx, runStaleArgs{Instance: "pi", Step: step}, nil)
		require.NoError(t, err)
		ids = append(ids, res.Job.ID)
	}
	require.NoError(t, client.Start(ctx))
	t.Cleanup(func() { _ = client.StopAndCancel(context.WithoutCancel(ctx)) })
	select {
	case <-w.blocked:
	case <-time.After(10 * time.Second):
		t.Fatal("j2 did not start")
	}
	j4, err := client.Insert(ctx, runStaleArgs{Instance: "pi", Step: "quick"}, nil)
	require.NoError(t, err)

	head, err := client.JobGet(ctx, ids[0])
	require.NoError(t, err)
	require.Equal(t, rivertype.JobStateCompleted, head.State, "the head completed in the database")
	third, err := client.JobGet(ctx, ids[2])
	require.NoError(t, err)
	require.Equal(t, rivertype.JobStateRunning, third.State, "j3 was fetched with the run and waits its turn")

	// Another client's fetch (no batching), rolled back: nothing of pi.
	fetch := testFetchQuery(t, schema, exclusive.ProcessInstance, Acquisition{})
	_, args, _ := fetch.explainArgs(t)
	tx, err := testPool(t).Begin(ctx)
	require.NoError(t, err)
	rows, err := tx.Query(ctx, fetch.SQL, args...)
	require.NoError(t, err)
	taken := scanExclusiveFetchRows(t, rows)
	require.NoError(t, tx.Rollback(ctx))
	require.Empty(t, taken, "no client takes the key of a run still at work")
	// Client A fetches again (a slot freed when j1 ended, and its poll):
	// it must not take j4 either.
	time.Sleep(200 * time.Millisecond)
	j4Now, err := client.JobGet(ctx, j4.Job.ID)
	require.NoError(t, err)
	require.Equal(t, rivertype.JobStateAvailable, j4Now.State, "j4 waits while the run works")

	locks, err := engine.ExclusiveLocks(ctx)
	require.NoError(t, err)
	require.Len(t, locks, 1)
	require.Equal(t, ids[0], locks[0].JobID)
	require.Equal(t, ids, locks[0].RunJobIDs)
	require.False(t, locks[0].Stale, "the lock of a run is live while a job of the run runs")

	wait, err := engine.ExclusiveWait(ctx, j4.Job.ID)
	require.NoError(t, err)
	require.True(t, wait.Waiting, "j4 waits for the run")

	deleted, err := exclusive.SweepLocks(ctx, testPool(t), schema, 0)
	require.NoError(t, err)
	require.Zero(t, deleted, "the sweeper leaves a live run's lock alone")

	close(w.release)
	require.Eventually(t, func() bool {
		states := exclJobStates(ctx, t, schema)
		return states["completed"] == 4
	}, 10*time.Second, 10*time.Millisecond)
	spans := w.timeline.Spans()
	require.Len(t, spans, 4)
	require.Empty(t, exclusive.Overlaps(spans))
	slices.SortFunc(spans, func(a, b exclusive.Span) int { return a.Start.Compare(b.Start) })
	order := make([]int64, len(spans))
	for i, s := range spans {
		order[i] = s.JobID
	}
	require.Equal(t, append(slices.Clone(ids), j4.Job.ID), order, "the run in order, then j4")
	require.Eventually(t, func() bool { return exclHeldLockCount(ctx, t, schema) == 0 }, 5*time.Second, 10*time.Millisecond)
}

// fairBatchArgs is a job of a tenant's process instance.
type fairBatchArgs struct {
	Instance string `json:"instance"`
	Tenant   string `json:"tenant"`
}

func (fairBatchArgs) Kind() string { return "fair_batch" }

func (a fairBatchArgs) JobContext() JobContext {
	return JobContext{ProcessInstanceID: a.Instance, ProcessDefinitionKey: "fair_batch", TenantID: a.Tenant}
}

// TestExclusiveBatchFairCountsRunsAgainstTurns: a fair client
// (Acquisition.FairByTenant) with batching (ExclusiveBatch 3) fetches 4
// jobs; tenants x-a and x-b each have one instance of 5 waiting jobs. A run's
// jobs count against its tenant's turn, so the fetch takes two jobs of each
// (a run of 2 per instance), not x-a's run of 3 and x-b's head; without
// batching it takes one job per instance. Each run is its instance's first
// jobs in River's order, and the lock names them.
func TestExclusiveBatchFairCountsRunsAgainstTurns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	schema := exclSchema(t)
	engine, err := NewEngine(testPool(t), &Config{Schema: schema})
	require.NoError(t, err)
	inserter, err := river.NewClient(engine.Driver(), &river.Config{Middleware: []rivertype.Middleware{engine.Middleware()}, Schema: schema, TestOnly: true})
	require.NoError(t, err)
	ids := map[string][]int64{}
	for range 5 {
		for _, tenant := range []string{"x-a", "x-b"} {
			res, err := inserter.Insert(ctx, fairBatchArgs{Instance: "pi-" + tenant, Tenant: tenant}, nil)
			require.NoError(t, err)
			ids[tenant] = append(ids[tenant], res.Job.ID)
		}
	}
	fetch := func(batch int) (map[string][]int64, map[string][2]int64) {
		q := testBatchFetchQuery(t, schema, exclusive.ProcessInstance, Acquisition{FairByTenant: true}, batch)
		_, args, _ := q.explainArgs(t)
		for i, name := range q.Names {
			if name == "max_to_lock" {
				args[i] = 4
			}
		}
		tx, err := testPool(t).Begin(ctx)
		require.NoError(t, err)
		defer func() { require.NoError(t, tx.Rollback(ctx)) }()
		rows, err := tx.Query(ctx, q.SQL, args...)
		require.NoError(t, err)
		got := map[string][]int64{}
		places := map[string][2]int64{}
		for rows.Next() {
			var (
				key           *string
				token, runPos *int64
				runLen        *int32
				suffix        = []any{&key, &token}
			)
			if q.Batch {
				suffix = append(suffix, &runPos, &runLen)
			}
			job, _, err := scanJobRow(suffixedTestRow{rows: rows, suffix: suffix})
			require.NoError(t, err)
			jc, err := JobContextOf(job)
			require.NoError(t, err)
			got[jc.TenantID] = append(got[jc.TenantID], job.ID)
			if runPos != nil {
				places[fmt.Sprint(job.ID)] = [2]int64{*runPos, int64(*runLen)}
			}
		}
		require.NoError(t, rows.Err())
		for _, tenant := range []string{"x-a", "x-b"} {
			slices.Sort(got[tenant])
		}
		if q.Batch {
			var runs [][]int64
			lockRows, err := tx.Query(ctx, fmt.Sprintf(`SELECT run_job_ids FROM %s.river_bpmn_exclusive_lock WHERE job_id IS NOT NULL ORDER BY key`, pgx.Identifier{schema}.Sanitize()))
			require.NoError(t, err)
			for lockRows.Next() {
				var run []int64
				require.NoError(t, lockRows.Scan(&run))
				runs = append(runs, run)
			}
			require.NoError(t, lockRows.Err())
			require.Equal(t, [][]int64{got["x-a"], got["x-b"]}, runs, "each lock names its run, in order")
		}
		return got, places
	}

	got, places := fetch(3)
	require.Equal(t, map[string][]int64{"x-a": ids["x-a"][:2], "x-b": ids["x-b"][:2]}, got, "two jobs of each tenant")
	for _, tenant := range []string{"x-a", "x-b"} {
		require.Equal(t, [2]int64{1, 2}, places[fmt.Sprint(ids[tenant][0])])
		require.Equal(t, [2]int64{2, 2}, places[fmt.Sprint(ids[tenant][1])])
	}
	got, _ = fetch(0)
	require.Equal(t, map[string][]int64{"x-a": ids["x-a"][:1], "x-b": ids["x-b"][:1]}, got, "without batching, one job per key")
}

// unknownKindArgs is a job of pi whose kind no client works.
type unknownKindArgs struct {
	Instance string `json:"instance"`
}

func (unknownKindArgs) Kind() string { return "nobody_works_this" }

func (a unknownKindArgs) JobContext() JobContext {
	return JobContext{ProcessInstanceID: a.Instance, ProcessDefinitionKey: "run_stale"}
}

// TestExclusiveBatchRunEndsWithoutWork: a client takes the run [j1, j2, j3,
// j4] of instance pi (ExclusiveBatch 4). j1 works (blocked by the test); j2
// is of a kind the client does not work, so River fails it without running
// the middleware; j3 is stopped (StopJob) while it waits its turn; j4 waits.
// j2 and j3 end at once without running, and do not stall the run: when j1
// is let go, j4 runs right after it, and the key is given back after j4.
func TestExclusiveBatchRunEndsWithoutWork(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	schema := exclSchema(t)
	pool := exclNodePool(t, 6)
	engine, err := NewEngine(pool, &Config{Schema: schema, ExclusiveScope: exclusive.ProcessInstance, ExclusiveBatch: 4})
	require.NoError(t, err)
	w := &runStaleWorker{pool: pool, timeline: &exclusive.Timeline{}, blocked: make(chan struct{}), release: make(chan struct{})}
	workers := river.NewWorkers()
	river.AddWorker(workers, w)
	inserter, err := river.NewClient(engine.Driver(), &river.Config{Middleware: []rivertype.Middleware{engine.Middleware()}, Schema: schema, TestOnly: true})
	require.NoError(t, err)
	var ids []int64
	for _, args := range []river.JobArgs{
		runStaleArgs{Instance: "pi", Step: "block"},
		unknownKindArgs{Instance: "pi"},
		runStaleArgs{Instance: "pi", Step: "quick"},
		runStaleArgs{Instance: "pi", Step: "quick"},
	} {
		res, err := inserter.Insert(ctx, args, nil)
		require.NoError(t, err)
		ids = append(ids, res.Job.ID)
	}
	client, err := river.NewClient(engine.Driver(), &river.Config{
		FetchCooldown: 5 * time.Millisecond, FetchPollInterval: 50 * time.Millisecond,
		Logger:     slog.New(slog.DiscardHandler),
		Middleware: []rivertype.Middleware{engine.Middleware()},
		Queues:     map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 4}},
		Schema:     schema, TestOnly: true, Workers: workers,
	})
	require.NoError(t, err)
	require.NoError(t, client.Start(ctx))
	t.Cleanup(func() { _ = client.StopAndCancel(context.WithoutCancel(ctx)) })
	select {
	case <-w.blocked:
	case <-time.After(10 * time.Second):
		t.Fatal("j1 did not start")
	}
	locks, err := engine.ExclusiveLocks(ctx)
	require.NoError(t, err)
	require.Len(t, locks, 1)
	require.Equal(t, ids, locks[0].RunJobIDs, "one run of all four")

	_, err = engine.StopJob(ctx, ids[2])
	require.NoError(t, err)
	state := func(id int64) rivertype.JobState {
		job, err := client.JobGet(ctx, id)
		require.NoError(t, err)
		return job.State
	}
	require.Eventually(t, func() bool { return state(ids[2]) == rivertype.JobStateCancelled }, 5*time.Second, 10*time.Millisecond,
		"j3 ends cancelled while it waits")
	require.Eventually(t, func() bool { return state(ids[1]) != rivertype.JobStateRunning }, 5*time.Second, 10*time.Millisecond,
		"j2 (unknown kind) ends without running")
	require.Equal(t, rivertype.JobStateRunning, state(ids[0]), "j1 still works")
	require.Equal(t, rivertype.JobStateRunning, state(ids[3]), "j4 still waits its turn")
	locks, err = engine.ExclusiveLocks(ctx)
	require.NoError(t, err)
	require.Len(t, locks, 1)
	require.False(t, locks[0].Stale)

	close(w.release)
	require.Eventually(t, func() bool { return state(ids[3]) == rivertype.JobStateCompleted }, 5*time.Second, 10*time.Millisecond)
	spans := w.timeline.Spans()
	require.Len(t, spans, 2, "only j1 and j4 ran their work")
	slices.SortFunc(spans, func(a, b exclusive.Span) int { return a.Start.Compare(b.Start) })
	require.Equal(t, []int64{ids[0], ids[3]}, []int64{spans[0].JobID, spans[1].JobID})
	require.Empty(t, exclusive.Overlaps(spans))
	require.Eventually(t, func() bool { return exclHeldLockCount(ctx, t, schema) == 0 }, 5*time.Second, 10*time.Millisecond)
}

// suffixedTestRow scans the current row of rows into the destinations given
// to Scan followed by suffix (the exclusive fetch's key and token columns
// after the job's).
type suffixedTestRow struct {
	rows   pgx.Rows
	suffix []any
}

func (r suffixedTestRow) Scan(dest ...any) error {
	return r.rows.Scan(append(dest[:len(dest):len(dest)], r.suffix...)...)
}
