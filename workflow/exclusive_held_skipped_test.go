package workflow

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/exclusive"
	"github.com/riverbpmn/riverbpmn/fetchplan"
	"github.com/riverbpmn/riverbpmn/telemetry"
)

// TestExclusiveFetchCountsHeldKeys runs the exclusive fetch statement with
// the count of held keys rendered in (as with a meter provider) on the
// explain backlog: 9,000 instances of 10 jobs each in River's order, the
// keys of the first 100 held by running jobs. A fetch of 100 passes over
// exactly the 100 heads of held keys before it takes 100 free ones; a fetch
// whose lookahead reaches only held keys takes nothing and still returns
// its count.
func TestExclusiveFetchCountsHeldKeys(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	schema := exclSchema(t)
	pool := testPool(t)
	_, err := pool.Exec(ctx, fmt.Sprintf(explainBacklogSQL, pgx.Identifier{schema}.Sanitize()))
	require.NoError(t, err)

	engine, err := NewEngine(nil, &Config{ExclusiveScope: exclusive.ProcessInstance})
	require.NoError(t, err)
	driver, err := engine.NewDriver(Acquisition{})
	require.NoError(t, err)
	query, err := renderFetchStatement(driver.plan, schema, exclusive.ProcessInstance, false, "", true)
	require.NoError(t, err)
	require.True(t, query.CountHeld)

	fetch := func(lookahead int32) (jobs []*rivertype.JobRow, held int64) {
		t.Helper()
		args := explainValues()
		args["lookahead"] = lookahead
		tx, err := pool.Begin(ctx)
		require.NoError(t, err)
		defer func() { require.NoError(t, tx.Rollback(ctx)) }()
		keeper := exclusive.NewKeeper(exclusive.KeeperConfig{})
		jobs, _, err = keeper.Fetch(ctx, exclusive.FetchParams{
			Querier: tx, InTx: true, Schema: schema, Queue: "default", MaxToLock: 100, Producer: t,
			Statement: query, HeldSkipped: &held, Args: args, ScanJob: scanJobRow,
		})
		require.NoError(t, err)
		return jobs, held
	}

	jobs, held := fetch(exclusive.DefaultLookahead)
	require.Len(t, jobs, 100)
	require.Equal(t, int64(100), held, "the heads of the 100 held keys come first in River's order")

	jobs, held = fetch(50) // pi-0 to pi-4: five heads, all held
	require.Empty(t, jobs)
	require.Equal(t, int64(5), held)

	// The count reads no candidate further than the fetch does: the scan
	// of the queue in River's order returns as many rows with it as
	// without. Times logged for the record (EXPLAIN ANALYZE without JIT,
	// rolled back).
	plain, err := renderFetchStatement(driver.plan, schema, exclusive.ProcessInstance, false, "", false)
	require.NoError(t, err)
	require.NotContains(t, plain.SQL, "exclusive_held_skipped")
	scanned := func(stmt *fetchplan.Statement) (rows float64, ms float64) {
		t.Helper()
		_, args, _ := (&testQuery{Statement: stmt}).explainArgs(t)
		tx, err := pool.Begin(ctx)
		require.NoError(t, err)
		defer func() { require.NoError(t, tx.Rollback(ctx)) }()
		// Both timed without JIT, whatever the server's settings
		// (TestExclusiveFetchCountStaysBelowJITCost shows neither is
		// estimated to need it).
		_, err = tx.Exec(ctx, "SET LOCAL jit = off")
		require.NoError(t, err)
		var raw []byte
		require.NoError(t, tx.QueryRow(ctx, "EXPLAIN (ANALYZE, FORMAT JSON) "+stmt.SQL, args...).Scan(&raw))
		var plans []struct {
			Plan planNode `json:"Plan"`
			Time float64  `json:"Execution Time"`
		}
		require.NoError(t, json.Unmarshal(raw, &plans))
		plans[0].Plan.walk(func(node planNode, _ []planNode) {
			if node.IndexName == "river_job_prioritized_fetching_index" {
				rows += node.ActualRows
			}
		})
		return rows, plans[0].Time
	}
	for round := range 3 {
		plainRows, plainMs := scanned(plain)
		countRows, countMs := scanned(query)
		require.Positive(t, plainRows)
		require.Equal(t, plainRows, countRows, "the count reads as many candidates as the fetch")
		t.Logf("round %d: fetch of 100 jobs of 100,000: %.2f ms without the count, %.2f ms with it (%.0f candidates read)", round, plainMs, countMs, countRows)
	}
}

// TestTelemetryKeysHeldSkipped reads riverbpmn.acquisition.keys_held_skipped
// back through the SDK's in-memory reader after a scenario with a held key:
// one instance's first job works for 600 ms while its second waits, and the
// client fetches every few milliseconds meanwhile; and checks that an
// engine without a meter provider leaves the count out of its statement.
func TestTelemetryKeysHeldSkipped(t *testing.T) {
	ctx := context.Background()
	tr := newTelReader(t)
	engine, _ := testEngineWithConfig(t, &Config{
		Telemetry:          telemetry.Config{MeterProvider: tr.provider, FiguresInterval: -1},
		ProcessDefinitions: []ProcessDefinition{{Key: "telemetry"}},
	})
	driver, err := engine.NewDriver(Acquisition{ByPriority: true})
	require.NoError(t, err)
	workers := river.NewWorkers()
	river.AddWorker(workers, telWorker{})
	client, err := driver.NewClient(&river.Config{
		Queues:            map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 4}},
		Workers:           workers,
		FetchCooldown:     2 * time.Millisecond,
		FetchPollInterval: 10 * time.Millisecond,
	})
	require.NoError(t, err)
	require.NoError(t, client.Start(ctx))
	t.Cleanup(func() {
		stopCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = client.Stop(stopCtx)
	})
	_, err = client.InsertMany(ctx, []river.InsertManyParams{
		{Args: telArgs{Instance: "pi-held", Mode: "ok", SleepMillis: 600}},
		{Args: telArgs{Instance: "pi-held", Mode: "ok"}},
	})
	require.NoError(t, err)

	order := telemetry.AttrOrder.String(telemetry.OrderPriority)
	queue := telemetry.AttrQueue.String(river.QueueDefault)
	require.Eventually(t, func() bool {
		metrics := tr.collect(t)
		return sum(metrics[telemetry.NameJobsTaken], order) == 2 && sum(metrics[telemetry.NameKeysHeldSkipped], order, queue) >= 1
	}, 30*time.Second, 50*time.Millisecond, "the waiting job of pi-held is counted as passed over while its key is held")

	query, err := newPilot(driver).fetchStatement(engine.config.Schema)
	require.NoError(t, err)
	require.True(t, query.CountHeld)
	require.Contains(t, query.SQL, "exclusive_held_skipped")

	// Without a meter provider (the global one, a no-op): not rendered.
	off, err := NewEngine(nil, &Config{Schema: engine.config.Schema})
	require.NoError(t, err)
	offDriver, err := off.NewDriver(Acquisition{ByPriority: true})
	require.NoError(t, err)
	offQuery, err := newPilot(offDriver).fetchStatement(engine.config.Schema)
	require.NoError(t, err)
	require.False(t, offQuery.CountHeld)
	require.NotContains(t, offQuery.SQL, "exclusive_held_skipped")
}

// TestExclusiveCountingBesideNotCounting runs a client whose fetch counts
// the held keys it passes over (a meter provider) beside one whose fetch
// does not, as in a rolling upgrade from a release without the count: they
// take and give back keys through the same lock rows, so no two jobs of a
// key overlap, every job finishes once, and the counting client counted.
func TestExclusiveCountingBesideNotCounting(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	schema := exclSchema(t)
	rec := newExclRecorder(exclusive.ProcessInstance)
	tr := newTelReader(t)
	nodes := []*exclNode{
		newExclNode(t, schema, rec, exclNodeOpts{
			scope: exclusive.ProcessInstance, maxWorkers: 8, poolConns: 4, poll: 20 * time.Millisecond, cooldown: time.Millisecond,
			telemetry: telemetry.Config{MeterProvider: tr.provider, FiguresInterval: -1},
		}),
		newExclNode(t, schema, rec, exclNodeOpts{
			scope: exclusive.ProcessInstance, maxWorkers: 8, poolConns: 4, poll: 20 * time.Millisecond, cooldown: time.Millisecond,
		}),
	}
	var jobs []exclArgs
	for i := range 400 {
		jobs = append(jobs, exclArgs{Instance: fmt.Sprintf("pi-%02d", i%8), SleepMicros: 500 + (i*7919)%1500})
	}
	insertExcl(ctx, t, nodes[0].client, jobs)
	for _, node := range nodes {
		require.NoError(t, node.client.Start(ctx))
	}
	require.Eventually(t, func() bool { return rec.finishedCount.Load() >= int64(len(jobs)) }, 2*time.Minute, 10*time.Millisecond)
	for _, node := range nodes {
		require.NoError(t, node.client.Stop(ctx))
	}
	require.Empty(t, exclusive.Overlaps(rec.timeline.Spans()), "no two jobs of a key overlap")
	rec.mu.Lock()
	require.Len(t, rec.finished, len(jobs))
	for id, n := range rec.finished {
		require.Equal(t, 1, n, "job %d finished %d times", id, n)
	}
	rec.mu.Unlock()
	require.Positive(t, sum(tr.collect(t)[telemetry.NameKeysHeldSkipped]), "8 keys among 16 workers: the counting client passed held keys over")
}

// jitAboveCost is PostgreSQL's default jit_above_cost: with jit on (the
// default where the server has LLVM), a statement estimated above it is
// JIT-compiled, and a client's prepared fetch is planned for its values
// (a custom plan, compiled anew) on each of its first five executions.
const jitAboveCost = 100_000

// TestExclusiveFetchCountStaysBelowJITCost EXPLAINs (FORMAT JSON) the
// exclusive fetch with the count of held keys on the explain backlog
// (100,000 available jobs, the first 100 keys held), in River's order, by
// priority and timers first, with and without batching: estimated for the
// fetch's values and generic, it costs what the fetch without the count
// does (its candidate step is bounded by max_to_lock in both), far below
// jitAboveCost, and EXPLAIN ANALYZE with jit on shows no JIT. It logs the
// first executions of the prepared counting fetch on a new connection.
func TestExclusiveFetchCountStaysBelowJITCost(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	schema := exclSchema(t)
	pool := testPool(t)
	_, err := pool.Exec(ctx, fmt.Sprintf(explainBacklogSQL, pgx.Identifier{schema}.Sanitize()))
	require.NoError(t, err)
	conn, err := pool.Acquire(ctx)
	require.NoError(t, err)
	defer conn.Release()
	var jitAvailable bool
	require.NoError(t, conn.QueryRow(ctx, "SELECT pg_jit_available()").Scan(&jitAvailable))

	// explainAnalyze runs EXPLAIN (ANALYZE, FORMAT JSON) of sql with jit
	// on (and jit_above_cost at above, when given), rolled back, and
	// returns whether JIT compiled it.
	explainAnalyze := func(sql string, args []any, above float64) (jitted bool) {
		t.Helper()
		tx, err := conn.Begin(ctx)
		require.NoError(t, err)
		defer func() { require.NoError(t, tx.Rollback(ctx)) }()
		_, err = tx.Exec(ctx, "SET LOCAL jit = on")
		require.NoError(t, err)
		if above > 0 {
			_, err = tx.Exec(ctx, fmt.Sprintf("SET LOCAL jit_above_cost = %f", above))
			require.NoError(t, err)
		}
		var raw []byte
		require.NoError(t, tx.QueryRow(ctx, "EXPLAIN (ANALYZE, FORMAT JSON) "+sql, args...).Scan(&raw))
		var plans []map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(raw, &plans))
		require.Len(t, plans, 1)
		_, jitted = plans[0]["JIT"]
		return jitted
	}

	for _, order := range []struct {
		name string
		acq  Acquisition
	}{
		{"river", Acquisition{}},
		{"by_priority", Acquisition{ByPriority: true}},
		{"timers_first", Acquisition{TimersFirst: true}},
	} {
		engine, err := NewEngine(nil, &Config{ExclusiveScope: exclusive.ProcessInstance})
		require.NoError(t, err)
		driver, err := engine.NewDriver(order.acq)
		require.NoError(t, err)
		cost := func(query *fetchplan.Statement, generic bool) float64 {
			t.Helper()
			types, args, literals := (&testQuery{Statement: query}).explainArgs(t)
			return explainPlan(ctx, t, conn, query.SQL, types, args, literals, generic).TotalCost
		}
		plain, err := renderFetchStatement(driver.plan, schema, exclusive.ProcessInstance, false, headIndexMarker(order.acq), false)
		require.NoError(t, err)
		for _, batch := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/batch=%t", order.name, batch), func(t *testing.T) {
				query, err := renderFetchStatement(driver.plan, schema, exclusive.ProcessInstance, batch, headIndexMarker(order.acq), true)
				require.NoError(t, err)
				require.Contains(t, query.SQL, "exclusive_held_skipped")
				_, args, _ := (&testQuery{Statement: query}).explainArgs(t)
				for _, generic := range []bool{false, true} {
					plainCost, countCost := cost(plain, generic), cost(query, generic)
					t.Logf("generic=%t: estimated cost %.0f with the count, %.0f without it (no batching)", generic, countCost, plainCost)
					require.Less(t, countCost, float64(jitAboveCost))
					// The candidate step is limited to max_to_lock with the
					// count as without it; the count adds numbering and one
					// aggregate over those rows. (With batching, the fetch
					// without the count is estimated lower still: its runs
					// fill it from fewer heads; the count reads max_to_lock
					// candidates, as the fetch without batching does.)
					require.Less(t, countCost, plainCost*1.02, "the count costs what the fetch without it does")
				}
				require.False(t, explainAnalyze(query.SQL, args, 0), "the counting fetch is not JIT-compiled")
				if jitAvailable && order.name == "river" && !batch {
					// The check sees JIT where there is some: with
					// jit_above_cost below the statement's cost, it is
					// compiled.
					require.True(t, explainAnalyze(query.SQL, args, cost(query, false)/2), "JIT below the statement's cost")
				}
			})
		}
	}

	// The first executions of the prepared counting fetch on a new
	// connection, planned for its values (rolled back), for the record.
	engine, err := NewEngine(nil, &Config{ExclusiveScope: exclusive.ProcessInstance})
	require.NoError(t, err)
	driver, err := engine.NewDriver(Acquisition{})
	require.NoError(t, err)
	query, err := renderFetchStatement(driver.plan, schema, exclusive.ProcessInstance, false, "", true)
	require.NoError(t, err)
	_, args, _ := (&testQuery{Statement: query}).explainArgs(t)
	fresh, err := pgx.ConnectConfig(ctx, pool.Config().ConnConfig.Copy())
	require.NoError(t, err)
	defer fresh.Close(ctx)
	_, err = fresh.Exec(ctx, "SET jit = on")
	require.NoError(t, err)
	var times []string
	for range 6 {
		tx, err := fresh.Begin(ctx)
		require.NoError(t, err)
		start := time.Now()
		rows, err := tx.Query(ctx, query.SQL, args...)
		require.NoError(t, err)
		n := 0
		for rows.Next() {
			n++
		}
		require.NoError(t, rows.Err())
		times = append(times, time.Since(start).Round(10*time.Microsecond).String())
		require.Equal(t, 100, n)
		require.NoError(t, tx.Rollback(ctx))
	}
	t.Logf("first executions of the counting fetch on a new connection (jit available: %t): %s", jitAvailable, strings.Join(times, ", "))
}
