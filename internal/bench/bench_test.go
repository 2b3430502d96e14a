package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivershared/riversharedtest"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/events"

	"github.com/riverbpmn/riverbpmn/internal/longtest"
	"github.com/riverbpmn/riverbpmn/workflow"
)

// testSchema returns a fresh schema name, dropped (if created) after the test.
func testSchema(t *testing.T, pool *pgxpool.Pool) string {
	t.Helper()
	schema := fmt.Sprintf("riverbpmn_bench_test_%d", time.Now().UnixNano())
	t.Cleanup(func() {
		_, err := pool.Exec(context.Background(), "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
		require.NoError(t, err)
	})
	return schema
}

func TestSummarize(t *testing.T) {
	t.Parallel()
	s := summarize([]float64{5, 1, 4, 2, 3})
	require.Equal(t, Summary{Median: 3, Min: 1, Max: 5, Q1: 2, Q3: 4, Samples: []float64{5, 1, 4, 2, 3}}, s)
	require.InDelta(t, 2.5, summarize([]float64{2, 3}).Median, 1e-9)
	require.Equal(t, Summary{Samples: []float64{}}, summarize(nil))

	l := latencyOf([]time.Duration{3 * time.Millisecond, time.Millisecond, 2 * time.Millisecond})
	require.Equal(t, 3, l.Count)
	require.InDelta(t, 2, l.P50Ms, 1e-9)
	require.InDelta(t, 2.98, l.P99Ms, 1e-9)
	require.InDelta(t, 3, l.MaxMs, 1e-9)

	require.Zero(t, ratio(1, 0))
	require.InDelta(t, 0.5, ratio(1, 2), 1e-9)
}

func TestWorkload(t *testing.T) {
	t.Parallel()
	w := Workload{}
	seen := map[int64]bool{}
	for i := range 1000 {
		p := w.Priority(i)
		require.True(t, w.PriorityRange().Contains(p), "priority %d of job %d", p, i)
		seen[p] = true
		require.NoError(t, w.JobContext(i).Validate())
	}
	require.Len(t, seen, PriorityMax-PriorityMin+1, "the spread covers the whole range")
	require.Empty(t, w.JobContext(1).ProcessInstanceID)
	require.Equal(t, "bench-pi-2", Workload{Instances: 3}.JobContext(5).ProcessInstanceID)
	require.Equal(t, workflow.JobTypeTimer, w.JobContext(TimerEvery).JobType)
	require.Equal(t, workflow.JobTypeAsync, w.JobContext(1).JobType)

	// PriorityLevels: that many priorities, evenly over the range; one is
	// Camunda's default, 0, for every job.
	for _, tt := range []struct {
		levels int
		want   []int64
	}{
		{1, []int64{0}},
		{2, []int64{PriorityMin, PriorityMax}},
		{5, []int64{-100, -50, 0, 50, 100}},
	} {
		w := Workload{Instances: 10, PriorityLevels: tt.levels}
		seen := map[int64]bool{}
		for i := range 1000 {
			seen[w.Priority(i)] = true
		}
		require.Len(t, seen, len(tt.want), "levels %d", tt.levels)
		for _, p := range tt.want {
			require.True(t, seen[p], "levels %d: priority %d", tt.levels, p)
		}
	}
}

func TestSelectModes(t *testing.T) {
	t.Parallel()
	all, err := selectModes(nil)
	require.NoError(t, err)
	var names []string
	for _, m := range all {
		names = append(names, m.Name)
	}
	require.Equal(t, []string{"none", "exclusive", "camunda", "exclusive-batch", "camunda-batch", "exclusive-one-instance", "events", "fairness", "priority-range-deployment"}, names, "diagnostic modes only when named")
	require.Equal(t, []string{"none", "exclusive", "camunda", "exclusive-batch", "camunda-batch", "exclusive-one-instance", "events", "fairness", "priority-range-deployment", "stock-metadata", "stock-metadata-string", "priority", "exclusive-priority", "tenants", "telemetry"}, ModeNames())

	some, err := selectModes([]string{"priority-range-deployment", "none", "none"})
	require.NoError(t, err)
	require.Len(t, some, 2)
	require.Equal(t, "priority-range-deployment", some[0].Name)

	_, err = selectModes([]string{"sideways"})
	require.ErrorContains(t, err, `unknown mode "sideways" (known: none, exclusive, camunda, exclusive-batch, camunda-batch, exclusive-one-instance, events, fairness, priority-range-deployment, stock-metadata, stock-metadata-string, priority, exclusive-priority, tenants, telemetry)`)
}

// TestMetadataSQLMatchesMiddleware checks that the fetch latency backlog,
// built in SQL, carries exactly the metadata the middleware stores for the
// same jobs inserted through River.
func TestMetadataSQLMatchesMiddleware(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := riversharedtest.DBPool(ctx, t)
	schema := testSchema(t, pool)
	require.NoError(t, prepareSchema(ctx, pool, schema))

	engine, err := workflow.NewEngine(pool, &workflow.Config{Schema: schema})
	require.NoError(t, err)
	client, err := river.NewClient(engine.Driver(), &river.Config{
		Middleware: []rivertype.Middleware{engine.Middleware()},
		Schema:     schema,
	})
	require.NoError(t, err)

	for _, w := range []Workload{{}, {Instances: 3}, {Instances: 3, PriorityLevels: 1}, {Instances: 3, PriorityLevels: 5}} {
		_, err := pool.Exec(ctx, "TRUNCATE "+table(schema, "river_job"))
		require.NoError(t, err)
		require.NoError(t, insertBacklog(ctx, client, &w, 2*TimerEvery+1, 7))

		var total, differing int
		require.NoError(t, pool.QueryRow(ctx, fmt.Sprintf(
			`SELECT count(*), count(*) FILTER (WHERE metadata IS DISTINCT FROM %s) FROM %s`,
			w.metadataSQL("(args ->> 'seq')::bigint"), table(schema, "river_job"))).Scan(&total, &differing))
		require.Equal(t, 2*TimerEvery+1, total)
		require.Zero(t, differing, "workload %+v", w)

		// The stock-metadata mode's jobs (stock River, InsertOpts of the
		// same contexts, no middleware) carry the same metadata.
		for i := range 2*TimerEvery + 1 {
			var stored string
			require.NoError(t, pool.QueryRow(ctx, "SELECT "+w.metadataSQL("$1::bigint")+"::text", i).Scan(&stored))
			require.JSONEq(t, stored, string(w.JobContext(i).InsertOpts().Metadata), "workload %+v, job %d", w, i)
		}
	}
}

// TestRunThroughput runs a tiny throughput benchmark and checks the report's
// structure, not its timings.
func TestRunThroughput(t *testing.T) {
	longtest.Skip(t)
	t.Parallel()
	ctx := context.Background()
	pool := riversharedtest.DBPool(ctx, t)
	var progress bytes.Buffer
	schema := testSchema(t, pool)
	report, err := Run(ctx, pool, Options{
		Schema:        schema,
		Jobs:          200,
		Workers:       20,
		Rounds:        1,
		FetchCooldown: 5 * time.Millisecond,
		// --jobs applies to every mode, the exclusive ones included.
		Modes:    []string{"none", "events", "priority-range-deployment", "exclusive", "camunda"},
		Progress: &progress,
	})
	require.NoError(t, err)

	require.Positive(t, report.Machine.CPUs)
	require.Contains(t, report.Machine.Postgres, "PostgreSQL")
	require.Empty(t, report.FetchLatency)
	require.Len(t, report.Throughput, 5, "the modes named")
	on, err := events.Enabled(ctx, pool, schema)
	require.NoError(t, err)
	require.False(t, on, "the events mode switches events off again")
	for _, res := range report.Throughput {
		require.Equal(t, 200, res.Jobs)
		for _, side := range []SideResult{res.Stock, res.RiverBPMN} {
			require.Len(t, side.JobsPerSecond.Samples, 1)
			require.Positive(t, side.JobsPerSecond.Median)
			require.Positive(t, side.FetchLatency.Count)
			require.Positive(t, side.FetchLatency.P99Ms)
			// Working a job off writes WAL: at least the new row versions.
			require.Greater(t, side.WALBytesPerJob.Median, 100.0)
		}
		require.InDelta(t, res.RiverBPMN.JobsPerSecond.Median/res.Stock.JobsPerSecond.Median, res.Ratio.JobsPerSecond, 1e-9)
		require.InDelta(t, res.Ratio.JobsPerSecond, res.Ratio.JobsPerSecondPaired, 1e-9, "one round: one pair")
		require.Positive(t, res.Ratio.FetchP50)
		require.Positive(t, res.Ratio.FetchP99)
		if res.Mode == "events" {
			require.Nil(t, res.MeetsTarget, "under stress, events is judged against events off only")
		} else {
			require.NotNil(t, res.MeetsTarget, res.Mode)
		}
	}
	require.Contains(t, progress.String(), "round 1/1 none")
	require.Contains(t, progress.String(), "bench: expected to take about")
	eventsOn := report.Throughput[1]
	require.Equal(t, "none", eventsOn.Versus, "events on is compared with events off")
	require.InDelta(t, eventsOn.RiverBPMN.JobsPerSecond.Median/report.Throughput[0].RiverBPMN.JobsPerSecond.Median, eventsOn.VersusRatio, 1e-9)
	require.NotNil(t, eventsOn.MeetsVersusTarget)
	camunda := report.Throughput[4] // the modes run in the order named
	require.Equal(t, "exclusive", camunda.Versus)
	require.InDelta(t, camunda.RiverBPMN.JobsPerSecond.Median/report.Throughput[3].RiverBPMN.JobsPerSecond.Median, camunda.VersusRatio, 1e-9)
	require.NotNil(t, camunda.MeetsVersusTarget)

	var table bytes.Buffer
	require.NoError(t, report.WriteTable(&table))
	require.Contains(t, table.String(), "priority-range-deployment")
}

// TestRunFetchLatency runs a tiny fetch latency benchmark, checks the
// report's structure and that the schema keeps its indexes.
func TestRunFetchLatency(t *testing.T) {
	longtest.Skip(t)
	t.Parallel()
	ctx := context.Background()
	pool := riversharedtest.DBPool(ctx, t)
	schema := testSchema(t, pool)
	require.NoError(t, prepareSchema(ctx, pool, schema))
	indexes := func() []string {
		rows, err := pool.Query(ctx, `SELECT pg_get_indexdef(indexrelid) FROM pg_index WHERE indrelid = $1::regclass ORDER BY 1`, table(schema, "river_job"))
		require.NoError(t, err)
		defs, err := pgx.CollectRows(rows, pgx.RowTo[string])
		require.NoError(t, err)
		return defs
	}
	before := indexes()

	report, err := Run(ctx, pool, Options{Schema: schema, FetchLatency: true, Sizes: []int{1000}, Samples: 5})
	require.NoError(t, err)
	require.Empty(t, report.Throughput)
	require.Len(t, report.FetchLatency, 1)
	size := report.FetchLatency[0]
	require.Equal(t, 1000, size.Available)
	require.Equal(t, 5, size.Samples)
	require.Len(t, size.Variants, len(fetchVariants(Workload{})))
	require.Equal(t, "stock", size.Variants[0].Variant)
	require.InDelta(t, 1, size.Variants[0].RatioP99, 1e-9)
	require.Nil(t, size.Variants[0].MeetsTarget)
	for _, v := range size.Variants[1:] {
		require.Equal(t, 5, v.Latency.Count)
		require.Positive(t, v.RatioP50, v.Variant)
		require.Positive(t, v.RatioP99, v.Variant)
		require.NotNil(t, v.MeetsTarget)
	}

	// As they were, plus the fetch-order indexes the variants' clients
	// create on demand (workflow.EnableFetchOrderIndexes), and the
	// head-of-key indexes of the exclusive variants' orders with timers
	// first and due date, for each scope (EnableExclusiveHeadIndexesForScope).
	var rebuilt, created, heads []string
	for _, def := range indexes() {
		switch {
		case strings.HasPrefix(def, "CREATE INDEX river_bpmn_fetch_"):
			created = append(created, def)
		case strings.Contains(def, "river_bpmn_head_index("):
			heads = append(heads, def)
		default:
			rebuilt = append(rebuilt, def)
		}
	}
	require.Equal(t, before, rebuilt, "indexes rebuilt as they were")
	require.Len(t, created, 3, "by priority, timers first and due date, and all three: %q", created)
	require.Len(t, heads, 2, "the exclusive variants with every option, per process instance and per root: %q", heads)
	var leftover bool
	require.NoError(t, pool.QueryRow(ctx, "SELECT to_regclass($1) IS NOT NULL", table(schema, droppedIndexTable)).Scan(&leftover))
	require.False(t, leftover)
	var available int
	require.NoError(t, pool.QueryRow(ctx, "SELECT count(*) FROM "+table(schema, "river_job")+" WHERE state = 'available'").Scan(&available))
	require.Equal(t, 1000, available, "fetched jobs put back")

	var out bytes.Buffer
	require.NoError(t, report.WriteJSON(&out))
	var doc map[string]any
	require.NoError(t, json.Unmarshal(out.Bytes(), &doc))
	require.Contains(t, doc, "fetch_latency")
}

// TestRestoreIndexesAfterInterruptedLoad: a load killed between dropping and
// rebuilding the indexes is repaired by the next run.
func TestRestoreIndexesAfterInterruptedLoad(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := riversharedtest.DBPool(ctx, t)
	schema := testSchema(t, pool)
	require.NoError(t, prepareSchema(ctx, pool, schema))
	count := func() (n int) {
		require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM pg_index WHERE indrelid = $1::regclass`, table(schema, "river_job")).Scan(&n))
		return n
	}
	before := count()
	require.NoError(t, dropIndexes(ctx, pool, schema))
	require.Equal(t, 1, count(), "only the primary key left")
	require.NoError(t, prepareSchema(ctx, pool, schema))
	require.Equal(t, before, count())
}

// TestEstimate checks the duration estimate printed before a run: the
// exclusive-one-instance mode at default settings (2,000 jobs, MaxWorkers 1,
// River's 100ms fetch cooldown) takes over 3 minutes per side; --jobs
// scales every mode, the exclusive ones included.
func TestEstimate(t *testing.T) {
	t.Parallel()
	modes, err := selectModes([]string{"exclusive-one-instance", "exclusive", "camunda"})
	require.NoError(t, err)
	opts := DefaultOptions
	opts.Jobs = 0
	oneInstance := estimateRun(modes[0], &opts, false)
	require.Greater(t, oneInstance, 3*time.Minute)
	require.Less(t, oneInstance, 4*time.Minute)

	fast := opts
	fast.FetchCooldown = time.Millisecond
	require.Less(t, estimateRun(modes[0], &fast, false), time.Minute/2)

	small := opts
	small.Jobs = 200
	jobs, _ := modeWorkload(modes[1], &small)
	require.Equal(t, 200, jobs, "--jobs applies to the exclusive mode")
	require.Less(t, estimateRun(modes[1], &small, false), estimateRun(modes[1], &opts, false))
	jobs, _ = modeWorkload(modes[2], &opts)
	require.Equal(t, 10_000, jobs, "without --jobs, the mode's own default")

	total, perMode := estimateThroughput(modes, &opts)
	require.Len(t, perMode, 3)
	require.Equal(t, perMode[0]+perMode[1]+perMode[2], total)
}

// TestRunInsertCost runs a tiny insert cost benchmark: samples with and
// without the indexes of migration 010, which are back afterwards.
func TestRunInsertCost(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := riversharedtest.DBPool(ctx, t)
	schema := testSchema(t, pool)
	report, err := Run(ctx, pool, Options{Schema: schema, Jobs: 500, Rounds: 2, InsertCost: true})
	require.NoError(t, err)
	c := report.InsertCost
	require.NotNil(t, c)
	require.Equal(t, 500, c.Jobs)
	require.Len(t, c.With.Samples, 2)
	require.Len(t, c.Without.Samples, 2)
	require.Positive(t, c.Ratio)
	for _, name := range insertCostIndexes {
		var exists bool
		require.NoError(t, pool.QueryRow(ctx, "SELECT to_regclass($1) IS NOT NULL", table(schema, name)).Scan(&exists))
		require.True(t, exists, "index %s is restored", name)
	}
	var out bytes.Buffer
	require.NoError(t, report.WriteTable(&out))
	require.Contains(t, out.String(), "insert cost: 500 exclusive jobs")
}

// TestTargetFor: River's defaults hold every mode to its Target; a shorter
// fetch cooldown to its StressTarget; more workers to its WorkersTarget, or
// its StressTarget when it has none.
func TestTargetFor(t *testing.T) {
	t.Parallel()
	byName := make(map[string]Mode)
	for _, m := range Modes() {
		byName[m.Name] = m
	}
	defaults := DefaultOptions.withDefaults()
	fast := defaults
	fast.FetchCooldown = time.Millisecond
	many := defaults
	many.Workers = 2_000
	for _, tt := range []struct {
		mode                   string
		atDefaults, fast, many float64
	}{
		{"none", 0.99, 0.95, 0.95},
		{"priority-range-deployment", 0.99, 0.85, 0.85},
		{"exclusive", 0.99, 0.90, 0.70},
		{"camunda", 0.99, 0.85, 0.60},
		{"exclusive-batch", 0.99, 0.80, 0.90},
		{"exclusive-one-instance", 0.50, 0.50, 0.50},
		{"events", 0.99, 0, 0}, // under stress: against events off (Versus), not stock
	} {
		m := byName[tt.mode]
		require.InDelta(t, tt.atDefaults, m.targetFor(&defaults), 1e-9, tt.mode)
		require.InDelta(t, tt.fast, m.targetFor(&fast), 1e-9, tt.mode)
		require.InDelta(t, tt.many, m.targetFor(&many), 1e-9, tt.mode)
	}
}

// TestOneStringContext checks the stock-metadata-string workload: each job's
// context is one string, the labelled form's values joined by tabs in the
// order of their labels, under the same key.
func TestOneStringContext(t *testing.T) {
	t.Parallel()
	w := Workload{Instances: 3, OneStringContext: true}
	for _, i := range []int{0, 1, TimerEvery} {
		metadata, err := w.Metadata(i)
		require.NoError(t, err)
		var stored map[string]string
		require.NoError(t, json.Unmarshal(metadata, &stored))
		var labelled struct {
			Context map[string]any `json:"bpmn"`
		}
		require.NoError(t, json.Unmarshal(w.JobContext(i).InsertOpts().Metadata, &labelled))
		parts := strings.Split(stored[workflow.MetadataKey], "\t")
		labels := slices.Sorted(maps.Keys(labelled.Context))
		require.Len(t, parts, len(labels), "job %d: %q", i, stored)
		for k, label := range labels {
			require.Equal(t, fmt.Sprint(labelled.Context[label]), parts[k], "job %d, %s", i, label)
		}
	}
	plain, err := Workload{Instances: 3}.Metadata(1)
	require.NoError(t, err)
	require.Equal(t, Workload{Instances: 3}.JobContext(1).InsertOpts().Metadata, plain)
}
