package workflow

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/exclusive"
)

// benchArgs is the benchmark job: no work at all, so the numbers measure
// fetching, sequencing and completing.
type benchArgs struct {
	N int `json:"n"`
}

func (benchArgs) Kind() string { return "excl_bench" }

type benchWorker struct {
	river.WorkerDefaults[benchArgs]
	done  atomic.Int64
	total int64
	ch    chan struct{}
}

func (w *benchWorker) Work(context.Context, *river.Job[benchArgs]) error {
	if w.done.Add(1) == w.total {
		close(w.ch)
	}
	return nil
}

// exclBenchWorkload is a set of exclusive jobs: instances x jobsPer, in
// insertion order either grouped (all jobs of an instance together) or
// interleaved (the first job of every instance, then the second...).
type exclBenchWorkload struct {
	name        string
	instances   int
	jobsPer     int
	interleaved bool
	maxWorkers  int
}

// params returns the insert params of the workload. Every job carries its
// resolved job context in metadata, for stock River too, so both modes move
// the same rows.
func (wl exclBenchWorkload) params(tb testing.TB) []river.InsertManyParams {
	tb.Helper()
	exclusiveFlag := true
	metadata := func(instance int) []byte {
		md, err := JobContext{
			ProcessInstanceID: fmt.Sprintf("bench-%05d", instance), RootProcessInstanceID: fmt.Sprintf("bench-%05d", instance),
			ProcessDefinitionKey: "bench", Exclusive: &exclusiveFlag,
		}.AddToMetadata(nil)
		require.NoError(tb, err)
		return md
	}
	params := make([]river.InsertManyParams, 0, wl.instances*wl.jobsPer)
	add := func(instance, seq int) {
		params = append(params, river.InsertManyParams{
			Args:       benchArgs{N: instance*wl.jobsPer + seq},
			InsertOpts: &river.InsertOpts{Metadata: metadata(instance)},
		})
	}
	if wl.interleaved {
		for seq := range wl.jobsPer {
			for instance := range wl.instances {
				add(instance, seq)
			}
		}
	} else {
		for instance := range wl.instances {
			for seq := range wl.jobsPer {
				add(instance, seq)
			}
		}
	}
	return params
}

var exclBenchWorkloads = []exclBenchWorkload{
	{name: "1000x10_grouped", instances: 1000, jobsPer: 10, maxWorkers: 100},
	{name: "1000x10_interleaved", instances: 1000, jobsPer: 10, interleaved: true, maxWorkers: 100},
	{name: "1x2000_maxworkers1", instances: 1, jobsPer: 2000, maxWorkers: 1},
}

// BenchmarkExclusive compares, in one run on one database, stock River (its
// own driver, River's schema) with riverbpmn enforcing exclusivity on the
// same jobs (the targets: 1,000 instances x 10 jobs at >= 80% of
// stock's jobs/s, one instance x 2,000 jobs at MaxWorkers 1 at >= 50%).
// Each iteration works the whole workload with one client. The alternating
// sub-benchmark runs the three modes back to back in each round and reports
// the median ratio to stock: the figure to quote on a noisy machine. The
// per-mode sub-benchmarks add fetch latency and fetches per 1,000 jobs. riverbpmn_noexclusive is riverbpmn's driver, schema and
// middleware with exclusivity off: the difference to stock is the cost of
// riverbpmn's schema (its indexes on river_job), the rest is exclusivity's. Run with -benchtime 1x -count N: the sub-benchmarks
// then alternate stock and riverbpmn N times.
//
// Both modes use FetchCooldown 1 ms (River's minimum) and FetchPollInterval
// 50 ms: with River's default cooldown of 100 ms both would be capped by the
// cooldown rather than by the database (10 jobs/s at MaxWorkers 1).
//
//	go test -run '^$' -bench 'BenchmarkExclusive/.*/alternating' -benchtime 5x ./workflow/
func BenchmarkExclusive(b *testing.B) {
	for _, wl := range exclBenchWorkloads {
		b.Run(wl.name+"/alternating", func(b *testing.B) { benchExclusiveAlternating(b, wl) })
		for _, mode := range exclBenchModes {
			b.Run(wl.name+"/"+mode.name, func(b *testing.B) { benchExclusive(b, wl, mode) })
		}
	}
}

// exclBenchMode is one way of running a workload: stock River, or
// riverbpmn with or without exclusivity.
type exclBenchMode struct {
	name  string
	bpmn  bool
	scope exclusive.Scope
}

var exclBenchModes = []exclBenchMode{
	{"stock", false, exclusive.None},
	{"riverbpmn_noexclusive", true, exclusive.None},
	{"riverbpmn", true, exclusive.ProcessInstance},
}

// exclBenchSetup is a mode ready to run: its schema, driver and middleware.
type exclBenchSetup struct {
	schema     string
	driver     riverdriver.Driver[pgx.Tx]
	middleware []rivertype.Middleware
}

func newExclBenchSetup(b *testing.B, mode exclBenchMode) *exclBenchSetup {
	b.Helper()
	if !mode.bpmn {
		stock, schema := testStockSchema(b)
		return &exclBenchSetup{schema: schema, driver: stock}
	}
	schema := exclSchema(b)
	engine, err := NewEngine(testPool(b), &Config{Schema: schema, ExclusiveScope: mode.scope})
	require.NoError(b, err)
	return &exclBenchSetup{schema: schema, driver: engine.Driver(), middleware: []rivertype.Middleware{engine.Middleware()}}
}

// run works the whole workload once with a fresh client and returns how long
// it took from the client's start to the last job's work, and the CPU time
// this process and the database's backends used meanwhile; setup
// (truncating, inserting) is outside the timer.
func (s *exclBenchSetup) run(b *testing.B, wl exclBenchWorkload, params []river.InsertManyParams, fetches *fetchTimes) (time.Duration, cpuSnapshot) {
	b.Helper()
	ctx := context.Background()
	pool := testPool(b)
	b.StopTimer()
	defer b.StartTimer()

	_, err := pool.Exec(ctx, fmt.Sprintf("TRUNCATE %s.river_job", pgx.Identifier{s.schema}.Sanitize()))
	require.NoError(b, err)
	worker := &benchWorker{total: int64(len(params)), ch: make(chan struct{})}
	workers := river.NewWorkers()
	river.AddWorker(workers, worker)
	client, err := river.NewClient(s.driver, &river.Config{
		FetchCooldown:     time.Millisecond,
		FetchPollInterval: 50 * time.Millisecond,
		Hooks:             []rivertype.Hook{river.HookMetricEmitFunc(fetches.record)},
		Logger:            slog.New(slog.DiscardHandler),
		Middleware:        s.middleware,
		Queues:            map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: wl.maxWorkers}},
		Schema:            s.schema,
		TestOnly:          true,
		Workers:           workers,
	})
	require.NoError(b, err)
	for start := 0; start < len(params); start += 1000 {
		_, err := client.InsertMany(ctx, params[start:min(start+1000, len(params))])
		require.NoError(b, err)
	}
	_, err = pool.Exec(ctx, fmt.Sprintf("ANALYZE %s.river_job", pgx.Identifier{s.schema}.Sanitize()))
	require.NoError(b, err)

	b.StartTimer()
	dbName := pool.Config().ConnConfig.Database
	cpuBefore := takeCPUSnapshot(dbName)
	start := time.Now()
	require.NoError(b, client.Start(ctx))
	select {
	case <-worker.ch:
	case <-time.After(5 * time.Minute):
		b.Fatalf("only %d of %d jobs worked", worker.done.Load(), len(params))
	}
	elapsed := time.Since(start)
	cpu := takeCPUSnapshot(dbName).sub(cpuBefore)
	b.StopTimer()
	require.NoError(b, client.Stop(ctx))
	return elapsed, cpu
}

func benchExclusive(b *testing.B, wl exclBenchWorkload, mode exclBenchMode) {
	setup := newExclBenchSetup(b, mode)
	params := wl.params(b)
	var (
		elapsed time.Duration
		jobs    int
		fetches fetchTimes
	)
	var cpu cpuSnapshot
	for b.Loop() {
		runElapsed, runCPU := setup.run(b, wl, params, &fetches)
		elapsed += runElapsed
		cpu.process += runCPU.process
		cpu.postgres += runCPU.postgres
		jobs += len(params)
	}
	b.ReportMetric(float64(cpu.process.Microseconds())/float64(jobs), "go-cpu-us/job")
	b.ReportMetric(float64(cpu.postgres.Microseconds())/float64(jobs), "pg-cpu-us/job")
	b.ReportMetric(float64(jobs)/elapsed.Seconds(), "jobs/s")
	p50, p99 := fetches.percentiles()
	b.ReportMetric(float64(p50.Microseconds())/1000, "fetch-p50-ms")
	b.ReportMetric(float64(p99.Microseconds())/1000, "fetch-p99-ms")
	b.ReportMetric(float64(len(fetches.durations))/float64(max(jobs, 1))*1000, "fetches/1000jobs")
}

// benchExclusiveAlternating runs the workload in every mode, one after the
// other, b.N rounds, and reports the median jobs/s of each mode and the
// median over rounds of riverbpmn's ratio to stock (the figure to quote: a
// round's modes run back to back, so machine noise hits them alike).
func benchExclusiveAlternating(b *testing.B, wl exclBenchWorkload) {
	setups := make([]*exclBenchSetup, len(exclBenchModes))
	for i, mode := range exclBenchModes {
		setups[i] = newExclBenchSetup(b, mode)
	}
	params := wl.params(b)
	rates := make([][]float64, len(exclBenchModes))
	cpuPerJob := make([][]float64, len(exclBenchModes))
	var ratios, ratiosNoExclusive []float64
	for b.Loop() {
		round := make([]float64, len(exclBenchModes))
		for i, setup := range setups {
			var fetches fetchTimes
			elapsed, cpu := setup.run(b, wl, params, &fetches)
			round[i] = float64(len(params)) / elapsed.Seconds()
			rates[i] = append(rates[i], round[i])
			cpuPerJob[i] = append(cpuPerJob[i], float64((cpu.process+cpu.postgres).Microseconds())/float64(len(params)))
			b.Logf("%s %s: %.0f jobs/s, CPU per job: Go %.0f us, PostgreSQL %.0f us", wl.name, exclBenchModes[i].name, round[i],
				float64(cpu.process.Microseconds())/float64(len(params)), float64(cpu.postgres.Microseconds())/float64(len(params)))
		}
		ratios = append(ratios, round[2]/round[0])
		ratiosNoExclusive = append(ratiosNoExclusive, round[1]/round[0])
	}
	for i, mode := range exclBenchModes {
		b.ReportMetric(median(rates[i]), mode.name+"-jobs/s")
		b.ReportMetric(median(cpuPerJob[i]), mode.name+"-cpu-us/job")
	}
	b.ReportMetric(median(ratios), "ratio")
	b.ReportMetric(median(ratiosNoExclusive), "ratio-noexclusive")
	b.Logf("%s: riverbpmn/stock per round %.2f, riverbpmn_noexclusive/stock %.2f", wl.name, ratios, ratiosNoExclusive)
}

func median(values []float64) float64 {
	if len(values) == 0 {
		return 0
	}
	sorted := slices.Clone(values)
	slices.Sort(sorted)
	if len(sorted)%2 == 1 {
		return sorted[len(sorted)/2]
	}
	return (sorted[len(sorted)/2-1] + sorted[len(sorted)/2]) / 2
}

// fetchTimes collects River's JobGetAvailable duration metric.
type fetchTimes struct {
	mu        sync.Mutex
	durations []time.Duration
}

func (f *fetchTimes) record(_ context.Context, params *rivertype.HookMetricEmitParams) {
	if m, ok := params.Metric.(*rivertype.JobGetAvailableDurationMetric); ok {
		f.mu.Lock()
		f.durations = append(f.durations, m.Duration)
		f.mu.Unlock()
	}
}

func (f *fetchTimes) percentiles() (p50, p99 time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.durations) == 0 {
		return 0, 0
	}
	sorted := slices.Clone(f.durations)
	slices.Sort(sorted)
	return sorted[len(sorted)/2], sorted[len(sorted)*99/100]
}
