package workflow

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdbtest"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/exclusive"
	"github.com/riverbpmn/riverbpmn/liveness"
	"github.com/riverbpmn/riverbpmn/telemetry"
)

// exclArgs is the job of the exclusive-jobs tests: a bit of work for one
// process instance (or none), with optional twists.
type exclArgs struct {
	Instance     string `json:"instance,omitempty"`
	Root         string `json:"root,omitempty"`
	NonExclusive bool   `json:"non_exclusive,omitempty"`
	// SleepMicros is how long the work takes.
	SleepMicros int `json:"sleep_micros,omitempty"`
	// FailOnce makes the first attempt fail.
	FailOnce bool `json:"fail_once,omitempty"`
	// SnoozeOnce makes the first run snooze for a millisecond.
	SnoozeOnce bool `json:"snooze_once,omitempty"`
	// Cancel makes the job cancel itself.
	Cancel bool `json:"cancel,omitempty"`
	// FollowUp makes the job insert one follow-up job of its instance.
	FollowUp bool `json:"follow_up,omitempty"`
	// Priority, if set, is the job context's priority (JobContext.Priority).
	Priority *int64 `json:"priority,omitempty"`
}

func (exclArgs) Kind() string { return "excl_test" }

func (a exclArgs) JobContext() JobContext {
	exclusiveFlag := !a.NonExclusive
	return JobContext{
		ProcessInstanceID:     a.Instance,
		RootProcessInstanceID: a.Root,
		ProcessDefinitionKey:  "excl_process",
		Exclusive:             &exclusiveFlag,
		Priority:              a.Priority,
	}
}

// exclRecorder records what the workers did: the timeline of every run, and
// how often each job finished.
type exclRecorder struct {
	// scope decides the keys of the recorded spans; it is the rule being
	// checked, whether or not the engine enforces it.
	scope    exclusive.Scope
	timeline exclusive.Timeline

	mu       sync.Mutex
	finished map[int64]int // job id -> times its work finished it (completed or cancelled)
	// firstRuns are the first run of each job: when it started, its key and
	// its place in River's order then.
	firstRuns map[int64]exclFirstRun

	followUps       atomic.Int64
	followUpsByJob  sync.Map // job id -> struct{}: follow-up already inserted
	finishedCount   atomic.Int64
	failures        atomic.Int64
	snoozes         atomic.Int64
	interruptedRuns atomic.Int64
}

func newExclRecorder(scope exclusive.Scope) *exclRecorder {
	return &exclRecorder{scope: scope, finished: make(map[int64]int), firstRuns: make(map[int64]exclFirstRun)}
}

// exclFirstRun is the first run of a job.
type exclFirstRun struct {
	jobID       int64
	key         string
	start       time.Time
	priority    int
	scheduledAt time.Time
}

// begin records a run's start: the job's first run, if it is.
func (r *exclRecorder) begin(key string, job *rivertype.JobRow) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.firstRuns[job.ID]; !ok {
		r.firstRuns[job.ID] = exclFirstRun{jobID: job.ID, key: key, start: time.Now(), priority: job.Priority, scheduledAt: job.ScheduledAt}
	}
}

func (r *exclRecorder) finish(jobID int64) {
	r.mu.Lock()
	r.finished[jobID]++
	r.mu.Unlock()
	r.finishedCount.Add(1)
}

// exclWorker works exclArgs jobs and records them.
type exclWorker struct {
	river.WorkerDefaults[exclArgs]
	rec *exclRecorder
}

func (w *exclWorker) Work(ctx context.Context, job *river.Job[exclArgs]) error {
	args := job.Args
	key, _ := exclusive.Key(w.rec.scope, !args.NonExclusive, args.Instance, args.Root)
	end := w.rec.timeline.Begin(key, job.ID, job.Attempt)
	w.rec.begin(key, job.JobRow)
	defer end()

	if args.SleepMicros > 0 {
		select {
		case <-ctx.Done():
			w.rec.interruptedRuns.Add(1)
			return ctx.Err()
		case <-time.After(time.Duration(args.SleepMicros) * time.Microsecond):
		}
	}
	switch {
	case args.FailOnce && len(job.Errors) == 0:
		w.rec.failures.Add(1)
		return errors.New("failing once, as asked")
	case args.SnoozeOnce && !bytes.Contains(job.Metadata, []byte(`"snoozes"`)):
		w.rec.snoozes.Add(1)
		return river.JobSnooze(time.Millisecond)
	case args.Cancel:
		w.rec.finish(job.ID)
		return river.JobCancel(errors.New("cancelling itself, as asked"))
	}
	if args.FollowUp {
		if _, done := w.rec.followUpsByJob.LoadOrStore(job.ID, struct{}{}); !done {
			// Not interruptible: a stop must not leave an inserted follow-up
			// uncounted.
			client := river.ClientFromContext[pgx.Tx](ctx)
			if _, err := client.Insert(context.WithoutCancel(ctx), exclArgs{
				Instance: args.Instance, Root: args.Root, SleepMicros: rand.IntN(5000), //nolint:gosec // test data
			}, nil); err != nil {
				w.rec.followUpsByJob.Delete(job.ID)
				return fmt.Errorf("inserting follow-up: %w", err)
			}
			w.rec.followUps.Add(1)
		}
	}
	w.rec.finish(job.ID)
	return nil
}

// soonRetry retries a failed job a millisecond later, so River makes it
// available at once.
type soonRetry struct{}

func (soonRetry) NextRetry(*rivertype.JobRow) time.Time { return time.Now().Add(time.Millisecond) }

// exclNode is one node of a multi-node test: its own pool, engine and client,
// sharing only the database schema with the others.
type exclNode struct {
	pool   *pgxpool.Pool
	engine *Engine
	client *river.Client[pgx.Tx]
}

// exclNodePool opens a small pool of its own on the test database, with the
// test pool's settings (empty search_path).
func exclNodePool(t testing.TB, maxConns int32) *pgxpool.Pool {
	t.Helper()
	return poolOf(t, testPool(t).Config(), maxConns)
}

// poolOf returns a pool of its own on config (copied) of at most maxConns
// connections, none kept open when idle, closed when the test ends.
func poolOf(t testing.TB, config *pgxpool.Config, maxConns int32) *pgxpool.Pool {
	t.Helper()
	config = config.Copy()
	config.MaxConns = maxConns
	config.MinConns = 0
	pool, err := pgxpool.NewWithConfig(context.Background(), config)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	return pool
}

// exclSchema returns a migrated, isolated schema.
func exclSchema(t testing.TB) string {
	t.Helper()
	engine, err := NewEngine(testPool(t), &Config{})
	require.NoError(t, err)
	return riverdbtest.TestSchema(context.Background(), t, engine.Driver(), nil)
}

// exclWrapDriver, when set, wraps the driver of every node (to measure).
var exclWrapDriver func(*Driver) riverdriver.Driver[pgx.Tx]

type exclNodeOpts struct {
	scope      exclusive.Scope
	maxWorkers int
	poolConns  int32
	poll       time.Duration
	cooldown   time.Duration
	// addWorkers registers more workers besides exclWorker.
	addWorkers func(*river.Workers)
	// noMiddleware leaves the work side of the engine's middleware out of
	// the client.
	noMiddleware bool
	// liveness switches Config.Liveness on (default settings).
	liveness bool
	// acquisition, when set, is the client's acquisition (Engine.NewDriver).
	acquisition *Acquisition
	// batch is Config.ExclusiveBatch.
	batch int
	// telemetry is Config.Telemetry.
	telemetry telemetry.Config
}

// newExclNode builds (but does not start) a node working exclArgs jobs.
func newExclNode(t testing.TB, schema string, rec *exclRecorder, opts exclNodeOpts) *exclNode {
	t.Helper()
	pool := exclNodePool(t, opts.poolConns)
	engine, err := NewEngine(pool, &Config{Schema: schema, ExclusiveScope: opts.scope, ExclusiveBatch: opts.batch, Liveness: liveness.Config{Disabled: !opts.liveness}, Telemetry: opts.telemetry})
	require.NoError(t, err)
	workers := river.NewWorkers()
	river.AddWorker(workers, &exclWorker{rec: rec})
	if opts.addWorkers != nil {
		opts.addWorkers(workers)
	}
	bpmnDriver := engine.Driver()
	if opts.acquisition != nil {
		bpmnDriver, err = engine.NewDriver(*opts.acquisition)
		require.NoError(t, err)
	}
	var driver riverdriver.Driver[pgx.Tx] = bpmnDriver
	if exclWrapDriver != nil {
		driver = exclWrapDriver(bpmnDriver)
	}
	middleware := []rivertype.Middleware{engine.Middleware()}
	if opts.noMiddleware {
		// Only the insert side, which a client on the engine's driver must
		// have (ErrClientNotWired); the work side is left out.
		middleware = []rivertype.Middleware{insertOnlyMiddleware{engine.Middleware().(rivertype.JobInsertMiddleware)}}
	}
	client, err := river.NewClient(driver, &river.Config{
		FetchCooldown:     opts.cooldown,
		FetchPollInterval: opts.poll,
		Logger:            slog.New(slog.DiscardHandler),
		Middleware:        middleware,
		Queues:            map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: opts.maxWorkers}},
		RetryPolicy:       soonRetry{},
		Schema:            schema,
		TestOnly:          true,
		Workers:           workers,
	})
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = client.StopAndCancel(ctx) // a no-op for a stopped client
	})
	return &exclNode{pool: pool, engine: engine, client: client}
}

// exclJobStates returns how many jobs of the schema are in each state.
func exclJobStates(ctx context.Context, t testing.TB, schema string) map[string]int {
	t.Helper()
	rows, err := testPool(t).Query(ctx, fmt.Sprintf(`SELECT state::text, count(*) FROM %s.river_job GROUP BY state`, pgx.Identifier{schema}.Sanitize()))
	require.NoError(t, err)
	states := map[string]int{}
	for rows.Next() {
		var (
			state string
			n     int
		)
		require.NoError(t, rows.Scan(&state, &n))
		states[state] = n
	}
	require.NoError(t, rows.Err())
	return states
}

// exclHeldLockCount returns how many exclusive keys of the schema are held:
// lock rows naming a job that still runs the attempt that took the key (or,
// for a run, a job of the run that does). A row naming a job that ended is
// stale, which is how an engine leaves a key whose work ended while its
// producers were busy (exclusive/ended.go).
func exclHeldLockCount(ctx context.Context, t testing.TB, schema string) int {
	t.Helper()
	var n int
	query := exclusive.RenderSQL(`SELECT count(*) FROM /* TEMPLATE: schema */river_bpmn_exclusive_lock AS lock
		WHERE lock.job_id IS NOT NULL AND /* LOCK_IS_LIVE: lock */`, schema, exclusive.None)
	require.NoError(t, testPool(t).QueryRow(ctx, query).Scan(&n))
	return n
}

// insertExcl inserts jobs with the given client (which need not be started).
func insertExcl(ctx context.Context, t testing.TB, client *river.Client[pgx.Tx], jobs []exclArgs) {
	t.Helper()
	params := make([]river.InsertManyParams, len(jobs))
	for i, args := range jobs {
		params[i] = river.InsertManyParams{Args: args}
	}
	for start := 0; start < len(params); start += 1000 {
		_, err := client.InsertMany(ctx, params[start:min(start+1000, len(params))])
		require.NoError(t, err)
	}
}

// insertOnlyMiddleware is the insert side of the engine's middleware alone.
type insertOnlyMiddleware struct{ rivertype.JobInsertMiddleware }

func (insertOnlyMiddleware) IsMiddleware() bool { return true }
