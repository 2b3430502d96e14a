package bench

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/riverbpmn/riverbpmn/exclusive"
	"github.com/riverbpmn/riverbpmn/liveness"
	"github.com/riverbpmn/riverbpmn/workflow"
)

// ModeResult is the throughput of one mode against stock River.
type ModeResult struct {
	Mode    string `json:"mode"`
	Summary string `json:"summary"`
	// Diagnostic marks a mode that explains a result (see Mode.Diagnostic).
	Diagnostic bool `json:"diagnostic,omitempty"`
	Jobs       int  `json:"jobs"`
	Workers    int  `json:"workers"`

	Stock     SideResult `json:"stock"`
	RiverBPMN SideResult `json:"riverbpmn"`
	Ratio     Ratios     `json:"ratio"`

	// Target is the mode's target ratio of jobs/s (0 = none), MeetsTarget
	// whether Ratio.JobsPerSecond reaches it.
	Target      float64 `json:"target,omitempty"`
	MeetsTarget *bool   `json:"meets_target,omitempty"`

	// Versus names the mode whose riverbpmn jobs/s this one is compared
	// with (Mode.Versus), when it ran too; VersusRatio is this mode's median
	// jobs/s over that mode's, VersusTarget the lowest acceptable ratio and
	// MeetsVersusTarget whether it is reached.
	Versus            string  `json:"versus,omitempty"`
	VersusRatio       float64 `json:"versus_ratio,omitempty"`
	VersusTarget      float64 `json:"versus_target,omitempty"`
	MeetsVersusTarget *bool   `json:"meets_versus_target,omitempty"`
}

// SideResult is one side's measurements over all rounds.
type SideResult struct {
	// JobsPerSecond has one sample per round: jobs / (start of the client to
	// the last completion).
	JobsPerSecond Summary `json:"jobs_per_second"`
	// FetchLatency pools the fetches of all rounds that locked at least one
	// job, as River's JobGetAvailableDurationMetric reports them.
	FetchLatency Latency `json:"fetch_latency"`
	// EmptyFetches counts the fetches that locked nothing (left out of
	// FetchLatency).
	EmptyFetches int `json:"empty_fetches"`
	// WALBytesPerJob has one sample per round: the WAL the database wrote
	// from the client's start to the last completion, over the jobs worked.
	// Each run starts right after a CHECKPOINT, so both sides pay the same
	// full-page images.
	WALBytesPerJob Summary `json:"wal_bytes_per_job"`
	// FetchPlanUs, FetchExecUs and ServerUs have one sample per round (when
	// pg_stat_statements is loaded): the fetch statements' planning and
	// execution time per job, and every statement's time per job, in
	// microseconds (ServerTime). FetchPlansPerCall is the share of fetch
	// statements that were planned (1: a custom plan at every call).
	FetchPlanUs       *Summary `json:"fetch_plan_us,omitempty"`
	FetchExecUs       *Summary `json:"fetch_exec_us,omitempty"`
	ServerUs          *Summary `json:"server_us,omitempty"`
	StatementWAL      *Summary `json:"statement_wal_bytes_per_job,omitempty"`
	FetchPlansPerCall *Summary `json:"fetch_plans_per_call,omitempty"`
	// SmallTenantsDone, for a workload with small tenants (the fairness
	// modes), is when their last job completed: seconds from the client's
	// start, and the number of fetches (that locked a job) until then.
	SmallTenantsDone *TenantsDone `json:"small_tenants_done,omitempty"`
}

// TenantsDone says when the small tenants' jobs had all completed.
type TenantsDone struct {
	Seconds Summary `json:"seconds"`
	Fetches Summary `json:"fetches"`
}

// Ratios compare riverbpmn to stock River: above 1 is faster for jobs/s,
// slower for fetch latencies.
type Ratios struct {
	// JobsPerSecond is riverbpmn's median jobs/s over stock's.
	JobsPerSecond float64 `json:"jobs_per_second"`
	// JobsPerSecondPaired is the median of the per-round ratios (each
	// riverbpmn run over the stock run just before it), which cancels slow
	// drifts of a shared machine.
	JobsPerSecondPaired float64 `json:"jobs_per_second_paired"`
	// FetchP50 and FetchP99 are riverbpmn's fetch latency percentiles over
	// stock's.
	FetchP50 float64 `json:"fetch_p50"`
	FetchP99 float64 `json:"fetch_p99"`
}

// runResult is one run of one side.
type runResult struct {
	elapsed      time.Duration
	jobsPerSec   float64
	fetches      []time.Duration
	emptyFetches int
	// smallDone and smallDoneFetches: when the small tenants' last job
	// completed (zero without small tenants).
	smallDone        time.Duration
	smallDoneFetches int
	// walPerJob is the WAL the database wrote while the client worked the
	// backlog off (every session's, so a quiet database is assumed), over
	// the jobs worked.
	walPerJob float64
	// server is the database's time on the run's statements per job (nil
	// without pg_stat_statements).
	server *ServerTime
}

func runThroughput(ctx context.Context, pool *pgxpool.Pool, opts *Options) ([]ModeResult, error) {
	modes, err := selectModes(opts.Modes)
	if err != nil {
		return nil, err
	}
	type acc struct {
		stock, bpmn []*runResult
	}
	accs := make([]acc, len(modes))
	total, perMode := estimateThroughput(modes, opts)
	fmt.Fprintf(opts.Progress, "bench: expected to take about %s (a rough estimate from a 2-core reference machine; a loaded machine takes longer)\n", roundEstimate(total))
	for mi, mode := range modes {
		jobs, workers := modeWorkload(mode, opts)
		fmt.Fprintf(opts.Progress, "bench:   %-27s %d rounds x 2 sides x %d jobs, %d workers: about %s\n", mode.Name, opts.Rounds, jobs, workers, roundEstimate(perMode[mi]))
	}
	for round := 1; round <= opts.Rounds; round++ {
		for mi, mode := range modes {
			jobs, workers := modeWorkload(mode, opts)

			runStock := func() (*runResult, error) {
				stock, err := runOnce(ctx, pool, opts, stockSide(pool), jobs, workers)
				if err != nil {
					return nil, fmt.Errorf("round %d, mode %s, stock: %w", round, mode.Name, err)
				}
				progressRun(opts, round, mode.Name, "stock", jobs, stock)
				return stock, nil
			}
			runBPMN := func() (*runResult, error) {
				// The modes' base engine opts out of exclusivity and
				// liveness (on by default): a mode that measures
				// exclusivity builds its own engine (Env.exclusiveSide).
				engine, err := workflow.NewEngine(pool, &workflow.Config{Schema: opts.Schema, ExclusiveScope: exclusive.None, Liveness: liveness.Config{Disabled: true}})
				if err != nil {
					return nil, err
				}
				side, err := mode.Setup(ctx, &Env{Engine: engine, Pool: pool, Workload: Workload{Instances: jobs, PriorityLevels: opts.PriorityLevels}, Options: opts})
				if err != nil {
					return nil, fmt.Errorf("mode %s: setup: %w", mode.Name, err)
				}
				bpmn, err := runOnce(ctx, pool, opts, side, jobs, workers)
				if side.Cleanup != nil {
					if cleanupErr := side.Cleanup(context.WithoutCancel(ctx)); cleanupErr != nil && err == nil {
						err = fmt.Errorf("cleanup: %w", cleanupErr)
					}
				}
				if err != nil {
					return nil, fmt.Errorf("round %d, mode %s, riverbpmn: %w", round, mode.Name, err)
				}
				progressRun(opts, round, mode.Name, "riverbpmn", jobs, bpmn)
				return bpmn, nil
			}

			// The sides take turns going first, so that whatever the first
			// run of a pair leaves behind (a warmer cache, autovacuum's work)
			// is not always charged to, or spared, the same side.
			var stock, bpmn *runResult
			var err error
			if round%2 == 1 {
				if stock, err = runStock(); err == nil {
					bpmn, err = runBPMN()
				}
			} else {
				if bpmn, err = runBPMN(); err == nil {
					stock, err = runStock()
				}
			}
			if err != nil {
				return nil, err
			}
			accs[mi].stock = append(accs[mi].stock, stock)
			accs[mi].bpmn = append(accs[mi].bpmn, bpmn)
		}
	}

	results := make([]ModeResult, len(modes))
	for mi, mode := range modes {
		jobs, workers := modeWorkload(mode, opts)
		res := ModeResult{
			Mode: mode.Name, Summary: mode.Summary, Diagnostic: mode.Diagnostic, Jobs: jobs, Workers: workers,
			Stock:     sideResult(accs[mi].stock),
			RiverBPMN: sideResult(accs[mi].bpmn),
			Target:    mode.targetFor(opts),
		}
		paired := make([]float64, len(accs[mi].stock))
		for i := range paired {
			paired[i] = ratio(accs[mi].bpmn[i].jobsPerSec, accs[mi].stock[i].jobsPerSec)
		}
		res.Ratio = Ratios{
			JobsPerSecond:       ratio(res.RiverBPMN.JobsPerSecond.Median, res.Stock.JobsPerSecond.Median),
			JobsPerSecondPaired: summarize(paired).Median,
			FetchP50:            ratio(res.RiverBPMN.FetchLatency.P50Ms, res.Stock.FetchLatency.P50Ms),
			FetchP99:            ratio(res.RiverBPMN.FetchLatency.P99Ms, res.Stock.FetchLatency.P99Ms),
		}
		if res.Target > 0 {
			meets := res.Ratio.JobsPerSecond >= res.Target
			res.MeetsTarget = &meets
		}
		results[mi] = res
	}
	for mi, mode := range modes {
		for oi, other := range modes {
			if mode.Versus == "" || other.Name != mode.Versus {
				continue
			}
			res := &results[mi]
			res.Versus = other.Name
			res.VersusRatio = ratio(res.RiverBPMN.JobsPerSecond.Median, results[oi].RiverBPMN.JobsPerSecond.Median)
			if mode.VersusTarget > 0 {
				res.VersusTarget = mode.VersusTarget
				meets := res.VersusRatio >= mode.VersusTarget
				res.MeetsVersusTarget = &meets
			}
		}
	}
	return results, nil
}

// estimateRun is a rough duration of one run of mode on side riverbpmn (or
// stock, with stock true): queueing the backlog, then working it off at the
// slowest of the mode's nominal rate and the rate River's fetch loop allows
// (a producer fetches at most once per cooldown, at most its free slots,
// and a slot holds a job for at least the work time).
func estimateRun(mode Mode, opts *Options, stock bool) time.Duration {
	jobs, workers := modeWorkload(mode, opts)
	rate := stockRate
	if !stock && mode.Rate > 0 {
		rate = mode.Rate
	}
	cycle := max(opts.FetchCooldown, opts.Work) + time.Millisecond
	rate = min(rate, float64(workers)/cycle.Seconds())
	const queueRate = 20_000 // jobs/s through InsertManyFast, with middleware
	seconds := float64(jobs)/rate + float64(jobs)/queueRate + 0.5
	return time.Duration(seconds * float64(time.Second))
}

// stockRate is stock River's rough throughput in jobs/s with a trivial work
// function on the 2-core reference machine.
const stockRate float64 = 2_500

// estimateThroughput is a rough duration of the whole throughput benchmark.
func estimateThroughput(modes []Mode, opts *Options) (total time.Duration, perMode []time.Duration) {
	for _, mode := range modes {
		d := time.Duration(opts.Rounds) * (estimateRun(mode, opts, true) + estimateRun(mode, opts, false))
		perMode = append(perMode, d)
		total += d
	}
	return total, perMode
}

// targetFor is mode's target ratio in a run with opts: its StressTarget
// when the run is a stress run (a fetch cooldown below River's default),
// its WorkersTarget (else its StressTarget) with more than the default 100
// workers, else its Target.
func (mode Mode) targetFor(opts *Options) float64 {
	_, workers := modeWorkload(mode, opts)
	fast := opts.FetchCooldown < river.FetchCooldownDefault
	if !fast && workers > DefaultOptions.Workers && mode.WorkersTarget != 0 {
		return max(mode.WorkersTarget, 0)
	}
	if (fast || workers > DefaultOptions.Workers) && mode.StressTarget != 0 {
		return max(mode.StressTarget, 0)
	}
	return mode.Target
}

// modeWorkload is the job count and worker count of mode's runs.
func modeWorkload(mode Mode, opts *Options) (jobs, workers int) {
	jobs, workers = opts.Jobs, opts.Workers
	if jobs == 0 {
		jobs = cmp.Or(mode.Jobs, DefaultOptions.Jobs)
	}
	if mode.Workers > 0 {
		workers = mode.Workers
	}
	return jobs, workers
}

func sideResult(runs []*runResult) SideResult {
	var (
		perSec  = make([]float64, len(runs))
		wal     = make([]float64, len(runs))
		fetches []time.Duration
		empty   int
	)
	for i, r := range runs {
		perSec[i] = r.jobsPerSec
		wal[i] = r.walPerJob
		fetches = append(fetches, r.fetches...)
		empty += r.emptyFetches
	}
	res := SideResult{JobsPerSecond: summarize(perSec), FetchLatency: latencyOf(fetches), EmptyFetches: empty, WALBytesPerJob: summarize(wal)}
	var plan, exec, all, plans, wal2 []float64
	for _, r := range runs {
		if s := r.server; s != nil {
			plan, exec, all = append(plan, s.FetchPlanUs), append(exec, s.FetchExecUs), append(all, s.AllUs)
			wal2 = append(wal2, s.WALBytes)
			plans = append(plans, s.FetchPlans/max(s.FetchCalls, 1))
		}
	}
	if len(plan) > 0 {
		p, e, a, n := summarize(plan), summarize(exec), summarize(all), summarize(plans)
		w := summarize(wal2)
		res.FetchPlanUs, res.FetchExecUs, res.ServerUs, res.FetchPlansPerCall, res.StatementWAL = &p, &e, &a, &n, &w
	}
	if len(runs) > 0 && runs[0].smallDone > 0 {
		secs, counts := make([]float64, len(runs)), make([]float64, len(runs))
		for i, r := range runs {
			secs[i], counts[i] = r.smallDone.Seconds(), float64(r.smallDoneFetches)
		}
		res.SmallTenantsDone = &TenantsDone{Seconds: summarize(secs), Fetches: summarize(counts)}
	}
	return res
}

func progressRun(opts *Options, round int, mode, side string, jobs int, r *runResult) {
	l := latencyOf(r.fetches)
	server := ""
	if s := r.server; s != nil {
		server = fmt.Sprintf(", fetch server %.1f+%.1f us/job (plan+exec, %.0f of %.0f calls planned), all statements %.1f us/job and %.0f B WAL/job, %d evicted",
			s.FetchPlanUs, s.FetchExecUs, s.FetchPlans, s.FetchCalls, s.AllUs, s.WALBytes, s.Evicted)
	}
	fmt.Fprintf(opts.Progress, "round %d/%d %-27s %-9s %d jobs in %6.2fs: %8.0f jobs/s, %d fetches p50 %.2fms p99 %.2fms, WAL %.0f B/job%s\n",
		round, opts.Rounds, mode, side, jobs, r.elapsed.Seconds(), r.jobsPerSec, l.Count, l.P50Ms, l.P99Ms, r.walPerJob, server)
	if r.smallDone > 0 {
		fmt.Fprintf(opts.Progress, "  small tenants' jobs all completed after %.2fs, fetch %d\n", r.smallDone.Seconds(), r.smallDoneFetches)
	}
}

// runOnce queues jobs jobs for side (before timing), then starts one client
// with workers workers and times it until every job has completed.
func runOnce(ctx context.Context, pool *pgxpool.Pool, opts *Options, side *Side, jobs, workers int) (*runResult, error) {
	ctx, cancel := context.WithTimeout(ctx, opts.RunTimeout)
	defer cancel()

	if _, err := pool.Exec(ctx, "TRUNCATE "+table(opts.Schema, "river_job")); err != nil {
		return nil, fmt.Errorf("emptying river_job: %w", err)
	}
	if side.Workload != nil {
		// Modes of different scopes run one after another on one schema,
		// every client stopped in between: record this side's scope, as an
		// operator changing it would, so its client may start.
		if _, err := exclusive.SetScope(ctx, pool, opts.Schema, side.Scope, "riverbpmn bench"); err != nil {
			return nil, err
		}
	}
	// The exclusive lock table is vacuumed, as autovacuum would: every
	// exclusive run updates its rows tens of thousands of times, and where
	// autovacuum is off or lags, the dead row versions piled up run after
	// run (lock probes reading more pages, the lock sweep at every
	// producer's start planned as expensive), so that rounds got slower one
	// after another. Its rows are kept, as a running system keeps the rows
	// of recently used keys (sweep retention): a run takes its keys by
	// in-place updates, as before.
	if _, err := pool.Exec(ctx, "VACUUM (ANALYZE) "+table(opts.Schema, "river_bpmn_exclusive_lock")); err != nil {
		return nil, fmt.Errorf("vacuuming the exclusive lock table: %w", err)
	}

	riverWorkers := river.NewWorkers()
	river.AddWorker(riverWorkers, &worker{work: opts.Work})
	recorder := &fetchRecorder{}
	client, err := river.NewClient(side.Driver, &river.Config{
		FetchCooldown:     opts.FetchCooldown,
		FetchPollInterval: opts.FetchPollInterval,
		Hooks:             []rivertype.Hook{recorder},
		Logger:            riverLogger(opts.Progress),
		Middleware:        side.Middleware,
		Queues:            map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: workers}},
		RetryPolicy:       side.RetryPolicy,
		Schema:            opts.Schema,
		Workers:           riverWorkers,
	})
	if err != nil {
		return nil, err
	}

	if side.Prepare != nil {
		if err := side.Prepare(ctx); err != nil {
			return nil, err
		}
	}
	if err := insertBacklog(ctx, client, side.Workload, jobs, opts.InsertBatch); err != nil {
		return nil, err
	}
	// Fresh statistics for both sides alike, as autovacuum would give them
	// eventually; riverbpmn's expression statistics need them.
	if _, err := pool.Exec(ctx, "ANALYZE "+table(opts.Schema, "river_job")); err != nil {
		return nil, err
	}
	// A checkpoint before every timed run: otherwise one falls wherever
	// max_wal_size or checkpoint_timeout puts it, and the run it falls in
	// writes full-page images of every page it touches (several times the
	// WAL), which alone moved a ratio by 30 points between rounds.
	if err := checkpoint(ctx, pool, opts); err != nil {
		return nil, err
	}
	if !opts.statsChecked {
		opts.statsSchema, opts.statsChecked = statementsSchema(ctx, pool), true
		if opts.statsSchema == "" {
			fmt.Fprintln(opts.Progress, "bench: pg_stat_statements is not loaded: no server times per job")
		}
	}
	var statsStart statementsByQuery
	if opts.statsSchema != "" {
		if statsStart, err = readStatementsByQuery(ctx, pool, opts.statsSchema); err != nil {
			return nil, err
		}
	}
	walStart, err := walLSN(ctx, pool)
	if err != nil {
		return nil, err
	}

	// Buffered for every job, so that no event is ever dropped.
	events, unsubscribe := client.SubscribeConfig(&river.SubscribeConfig{
		ChanSize: jobs + 1,
		Kinds:    []river.EventKind{river.EventKindJobCompleted, river.EventKindJobFailed},
	})
	defer unsubscribe()

	smallLeft := 0
	if w := side.Workload; w != nil && w.SmallTenantsFrom > 0 {
		smallLeft = jobs - w.SmallTenantsFrom
	}
	var (
		smallDone        time.Duration
		smallDoneFetches int
	)
	start := time.Now()
	if err := client.Start(ctx); err != nil {
		return nil, err
	}
	completed := 0
	var waitErr error
	for completed < jobs && waitErr == nil {
		select {
		case event := <-events:
			if event.Kind != river.EventKindJobCompleted {
				waitErr = fmt.Errorf("job %d failed: %v", event.Job.ID, event.Job.Errors)
				break
			}
			completed++
			if smallLeft > 0 && bytes.Contains(event.Job.Metadata, []byte(`"tenant_id": "small-`)) {
				if smallLeft--; smallLeft == 0 {
					smallDone, smallDoneFetches = time.Since(start), recorder.count()
				}
			}
		case <-ctx.Done():
			waitErr = fmt.Errorf("%d of %d jobs completed: %w", completed, jobs, ctx.Err())
		}
	}
	elapsed := time.Since(start)
	fetches, empty := recorder.stop()
	walEnd, walErr := walLSN(ctx, pool)
	if walErr != nil && waitErr == nil {
		waitErr = walErr
	}
	var server *ServerTime
	if statsStart != nil {
		// Read before the client stops: its shutdown statements are not
		// the run's.
		statsEnd, err := readStatementsByQuery(ctx, pool, opts.statsSchema)
		if err != nil && waitErr == nil {
			waitErr = err
		}
		if err == nil {
			server = serverTimePerJob(statsStart, statsEnd, jobs)
			if opts.Statements > 0 {
				writeTopStatements(opts.Progress, statsStart, statsEnd, jobs, opts.Statements)
			}
		}
	}

	stopCtx, stopCancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer stopCancel()
	stopErr := client.Stop(stopCtx)
	if err := errors.Join(waitErr, stopErr); err != nil {
		return nil, err
	}

	var inDB int
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM "+table(opts.Schema, "river_job")+" WHERE state = 'completed'").Scan(&inDB); err != nil {
		return nil, err
	}
	if inDB != jobs {
		return nil, fmt.Errorf("%d jobs completed by the events, %d in the database", jobs, inDB)
	}
	return &runResult{
		elapsed:          elapsed,
		jobsPerSec:       float64(jobs) / elapsed.Seconds(),
		fetches:          fetches,
		emptyFetches:     empty,
		smallDone:        smallDone,
		smallDoneFetches: smallDoneFetches,
		walPerJob:        float64(walEnd-walStart) / float64(max(jobs, 1)),
		server:           server,
	}, nil
}

// checkpoint runs CHECKPOINT, which needs a superuser or (PostgreSQL 15+)
// the pg_checkpoint role; without either the run goes on unflushed, and the
// first refusal is reported once on the progress output.
func checkpoint(ctx context.Context, pool *pgxpool.Pool, opts *Options) error {
	if opts.noCheckpoint {
		return nil
	}
	if _, err := pool.Exec(ctx, "CHECKPOINT"); err != nil {
		if ctx.Err() != nil {
			return err
		}
		opts.noCheckpoint = true
		fmt.Fprintf(opts.Progress, "bench: CHECKPOINT refused (%v): runs are not aligned on checkpoints, expect noisier ratios\n", err)
	}
	return nil
}

// walLSN is the database's current WAL insert position, in bytes.
func walLSN(ctx context.Context, pool *pgxpool.Pool) (int64, error) {
	var lsn int64
	err := pool.QueryRow(ctx, "SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '0/0')::bigint").Scan(&lsn)
	return lsn, err
}

// insertBacklog queues jobs jobs with InsertManyFast, in batches, through
// client (so through its middleware). With a workload, job i carries
// workload.JobContext(i).
func insertBacklog(ctx context.Context, client *river.Client[pgx.Tx], workload *Workload, jobs, batch int) error {
	params := make([]river.InsertManyParams, 0, min(batch, jobs))
	for start := 0; start < jobs; start += batch {
		params = params[:0]
		for i := start; i < min(start+batch, jobs); i++ {
			p := river.InsertManyParams{Args: Args{Seq: i}}
			if workload != nil {
				metadata, err := workload.Metadata(i)
				if err != nil {
					return err
				}
				p.InsertOpts = &river.InsertOpts{Metadata: metadata}
			}
			params = append(params, p)
		}
		if _, err := client.InsertManyFast(ctx, params); err != nil {
			return fmt.Errorf("queueing the backlog: %w", err)
		}
	}
	return nil
}

// fetchRecorder is a River hook that records the duration of every fetch
// (River's JobGetAvailableDurationMetric) that locked at least one job
// (the JobGetAvailableCountMetric River emits right after it).
type fetchRecorder struct {
	river.HookDefaults

	mu        sync.Mutex
	stopped   bool
	pending   time.Duration
	durations []time.Duration
	empty     int
}

var _ rivertype.HookMetricEmit = (*fetchRecorder)(nil)

// MetricEmit records a fetch.
func (r *fetchRecorder) MetricEmit(_ context.Context, params *rivertype.HookMetricEmitParams) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped {
		return
	}
	switch m := params.Metric.(type) {
	case *rivertype.JobGetAvailableDurationMetric:
		r.pending = m.Duration
	case *rivertype.JobGetAvailableCountMetric:
		if m.Count > 0 {
			r.durations = append(r.durations, r.pending)
		} else {
			r.empty++
		}
	}
}

// count returns how many fetches that locked a job were recorded so far.
func (r *fetchRecorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.durations)
}

// stop ends the recording and returns what was recorded.
func (r *fetchRecorder) stop() (durations []time.Duration, empty int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stopped = true
	return r.durations, r.empty
}

// roundEstimate rounds an estimate to what it is worth.
func roundEstimate(d time.Duration) time.Duration {
	if d < time.Minute {
		return d.Round(time.Second)
	}
	return d.Round(10 * time.Second)
}
