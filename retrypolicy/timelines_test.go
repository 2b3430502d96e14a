package retrypolicy_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivershared/riversharedtest"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/incident"
	"github.com/riverbpmn/riverbpmn/retrypolicy"
	"github.com/riverbpmn/riverbpmn/riverbpmntest"
	"github.com/riverbpmn/riverbpmn/workflow"
)

// execution is one run of a job, as its worker saw it.
type execution struct {
	attempt     int
	scheduledAt time.Time // the job's scheduled_at when it was fetched
	start, end  time.Time
	// returned is when River's middleware chain (the engine's included)
	// returned the execution's outcome to River, which decides the next
	// scheduled_at (retry policy, snooze) only then.
	returned time.Time
}

// timeline records the executions of every job by id.
type timeline struct {
	mu   sync.Mutex
	runs map[int64][]execution
}

func (tl *timeline) add(job *rivertype.JobRow, start time.Time) {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	if tl.runs == nil {
		tl.runs = map[int64][]execution{}
	}
	tl.runs[job.ID] = append(tl.runs[job.ID], execution{attempt: job.Attempt, scheduledAt: job.ScheduledAt, start: start, end: time.Now()})
}

// setReturned records when River's middleware chain returned the latest
// execution of job jobID (a job's executions never overlap).
func (tl *timeline) setReturned(jobID int64, at time.Time) {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	if runs := tl.runs[jobID]; len(runs) > 0 {
		runs[len(runs)-1].returned = at
	}
}

func (tl *timeline) of(jobID int64) []execution {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	return append([]execution(nil), tl.runs[jobID]...)
}

// waits returns the time between the end of each execution and the start of
// the next: how long the job waited after each failure.
func (tl *timeline) waits(jobID int64) []time.Duration {
	runs := tl.of(jobID)
	var waits []time.Duration
	for i := 1; i < len(runs); i++ {
		waits = append(waits, runs[i].start.Sub(runs[i-1].end))
	}
	return waits
}

// scheduledWaits returns, for each failure, the time between the end of the
// failed execution and the scheduled_at River gave the next: the wait the
// retry policy (or snooze) decided.
func (tl *timeline) scheduledWaits(jobID int64) []time.Duration {
	runs := tl.of(jobID)
	var waits []time.Duration
	for i := 1; i < len(runs); i++ {
		waits = append(waits, runs[i].scheduledAt.Sub(runs[i-1].end))
	}
	return waits
}

// decidedAfterReturn returns, for each failure, the time between River
// getting the failed execution's outcome back from the middleware chain and
// the scheduled_at it gave the next: the decided wait without the statements
// the middleware runs after the work (recording a conflict, giving an
// exclusive key back), which a loaded machine stretches.
func (tl *timeline) decidedAfterReturn(jobID int64) []time.Duration {
	runs := tl.of(jobID)
	var waits []time.Duration
	for i := 1; i < len(runs); i++ {
		waits = append(waits, runs[i].scheduledAt.Sub(runs[i-1].returned))
	}
	return waits
}

func (tl *timeline) attempts(jobID int64) []int {
	var attempts []int
	for _, run := range tl.of(jobID) {
		attempts = append(attempts, run.attempt)
	}
	return attempts
}

// workFunc decides the outcome of the n-th execution (from 1) of a job.
type workFunc func(ctx context.Context, job *river.Job[retryArgs], n int) error

// startRetryClient starts a client that works retryArgs jobs with work, on
// the engine's driver, middleware and retry policy, polling every 10 ms so
// that retries are picked up as soon as they are due (River makes a retry
// due within its scheduler interval, 5 s, available at once with a future
// scheduled_at, so no scheduler run is waited for).
func startRetryClient(t *testing.T, bundle *riverbpmntest.Bundle, work workFunc) (*river.Client[pgx.Tx], *timeline) {
	t.Helper()
	ctx := context.Background()
	tl := &timeline{}
	var (
		mu    sync.Mutex
		count = map[int64]int{}
	)
	workers := river.NewWorkers()
	river.AddWorker(workers, river.WorkFunc(func(ctx context.Context, job *river.Job[retryArgs]) error {
		start := time.Now()
		mu.Lock()
		count[job.ID]++
		n := count[job.ID]
		mu.Unlock()
		err := work(ctx, job, n)
		tl.add(job.JobRow, start)
		return err
	}))
	// Outermost (first) middleware: records when the chain, the engine's
	// middleware included, hands the outcome back to River.
	returned := river.WorkerMiddlewareFunc(func(ctx context.Context, job *rivertype.JobRow, doInner func(context.Context) error) error {
		err := doInner(ctx)
		tl.setReturned(job.ID, time.Now())
		return err
	})
	engine := bundle.Engine
	client, err := river.NewClient(engine.Driver(), &river.Config{
		FetchCooldown:     5 * time.Millisecond,
		FetchPollInterval: 10 * time.Millisecond,
		Logger:            riversharedtest.Logger(t),
		Middleware:        []rivertype.Middleware{returned, engine.Middleware()},
		Queues:            map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 10}},
		RetryPolicy:       engine.RetryPolicy(),
		Schema:            bundle.Schema,
		TestOnly:          true,
		Workers:           workers,
	})
	require.NoError(t, err)
	require.NoError(t, client.Start(ctx))
	t.Cleanup(func() { require.NoError(t, client.Stop(context.Background())) })
	return client, tl
}

// waitForState waits until job jobID is in state (River's completer writes
// a job's state up to ~50 ms after its execution ends).
func waitForState(t *testing.T, client *river.Client[pgx.Tx], jobID int64, state rivertype.JobState) *rivertype.JobRow {
	t.Helper()
	var job *rivertype.JobRow
	require.Eventually(t, func() bool {
		var err error
		job, err = client.JobGet(context.Background(), jobID)
		require.NoError(t, err)
		return job.State == state
	}, 15*time.Second, 5*time.Millisecond, "job %d never became %s", jobID, state)
	return job
}

func insertRetryJob(t *testing.T, client *river.Client[pgx.Tx], name string, opts *river.InsertOpts) *rivertype.JobRow {
	t.Helper()
	res, err := client.Insert(context.Background(), retryArgs{Name: name}, opts)
	require.NoError(t, err)
	return res.Job
}

func failing(ctx context.Context, job *river.Job[retryArgs], n int) error {
	return fmt.Errorf("boom %d", n)
}

// requireWaits checks the waits of job after each failure, twice:
//
//   - the wait decided: scheduled_at of the next execution minus the end of
//     the failed one is never shorter than want (the policy, or a conflict's
//     snooze, counts from the failure); and scheduled_at minus the moment
//     River got the outcome back from the middleware chain is within
//     decidedSlack of want: River decides right then, with no I/O in
//     between, while the statements the engine's middleware runs after the
//     work (recording a conflict, giving an exclusive key back) take what
//     the machine's load makes them take and are not part of the wait;
//   - the wait observed: the next start minus the failed end, never shorter
//     than want, and not much longer. River's batch completer writes a
//     failed job's new state on a 250 ms tick, so a job due sooner than that
//     (no cycle: at once) is seen up to ~250 ms later; add one 10 ms poll
//     and generous room for a loaded machine. The upper bound only rules out
//     waits of another order (River's 5 s scheduler, its backoff); the
//     decided wait is the precise check.
//
// decidedSlack covers only the CPU time from the middleware chain's return
// to River's decision, which a loaded 2-core machine can stretch by tens of
// milliseconds; it is far below the differences the scenarios tell apart
// (intervals 50 ms apart at least, River's backoff of 1 s and more).
const decidedSlack = 100 * time.Millisecond

// completerTick and observedSlack bound the observed wait (see
// requireWaits): River's batch completer's tick, and the scheduling delay of
// a loaded 2-core machine, which reached 2.5 s; together still below River's
// 5 s scheduler interval, a wait of another order.
const (
	completerTick = 250 * time.Millisecond
	observedSlack = 4 * time.Second
)

// retryBudget is how long a scenario may wait for executions separated by
// waits: each wait's observed upper bound (see requireWaits), plus one for the
// first execution (a client's start and first fetch).
func retryBudget(waits ...time.Duration) time.Duration {
	budget := completerTick + observedSlack
	for _, w := range waits {
		budget += max(w, completerTick) + observedSlack
	}
	return budget
}

// waitOrTimeout is riversharedtest.WaitOrTimeout with a timeout derived
// from the scenario (retryBudget) instead of River's fixed 3 s.
func waitOrTimeout[T any](t *testing.T, ch <-chan T, timeout time.Duration) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(timeout):
		require.FailNowf(t, "timed out", "no value after %v", timeout)
		var zero T
		return zero
	}
}

// notAWait skips a gap in requireWaits.
const notAWait = time.Duration(-1)

func requireWaits(t *testing.T, tl *timeline, jobID int64, want ...time.Duration) {
	t.Helper()
	decided, afterReturn, observed := tl.scheduledWaits(jobID), tl.decidedAfterReturn(jobID), tl.waits(jobID)
	t.Logf("job %d: waits decided %v (%v after the middleware returned), observed %v", jobID, decided, afterReturn, observed)
	require.Len(t, decided, len(want))
	for i := range want {
		if want[i] == notAWait {
			continue
		}
		require.GreaterOrEqual(t, decided[i], want[i]-2*time.Millisecond, "decided wait %d: %v", i+1, decided)
		require.Less(t, afterReturn[i], want[i]+decidedSlack, "decided wait %d after the middleware returned: %v", i+1, afterReturn)
		require.GreaterOrEqual(t, observed[i], want[i]-2*time.Millisecond, "observed wait %d: %v", i+1, observed)
		require.Less(t, observed[i], max(want[i], completerTick)+observedSlack, "observed wait %d: %v", i+1, observed)
	}
}

// requireOneOpenIncident checks that job has exactly one incident, open, with
// the job's context and message.
func requireOneOpenIncident(ctx context.Context, t *testing.T, engine *workflow.Engine, job *rivertype.JobRow, message string) *incident.Incident {
	t.Helper()
	incidents, err := jobIncidents(ctx, engine, job.ID)
	require.NoError(t, err)
	require.Len(t, incidents, 1)
	inc := incidents[0]
	require.Nil(t, inc.ResolvedAt)
	require.Equal(t, incident.TypeFailedJob, inc.Type)
	require.Equal(t, message, inc.Message)
	jc, err := workflow.JobContextOf(job)
	require.NoError(t, err)
	require.Equal(t, jc.JobDefinitionID, inc.JobDefinitionID)
	require.Equal(t, jc.ActivityID, inc.ActivityID)
	require.Equal(t, jc.ProcessInstanceID, inc.ProcessInstanceID)
	require.NotNil(t, job.FinalizedAt)
	require.WithinDuration(t, *job.FinalizedAt, inc.CreatedAt, time.Second)
	return inc
}

// jobIncidents returns every incident of job jobID, open or resolved, oldest
// first.
func jobIncidents(ctx context.Context, engine *workflow.Engine, jobID int64) ([]*incident.Incident, error) {
	res, err := engine.Incidents().List(ctx, &incident.ListParams{Filter: incident.Filter{JobID: jobID, Resolved: true}, Oldest: true})
	if err != nil {
		return nil, err
	}
	return res.Items, nil
}

// openIncidents returns the open incidents, oldest first.
func openIncidents(ctx context.Context, engine *workflow.Engine) ([]*incident.Incident, error) {
	res, err := engine.Incidents().List(ctx, &incident.ListParams{Oldest: true})
	if err != nil {
		return nil, err
	}
	return res.Items, nil
}

// scenario is a named subtest for runConcurrently.
type scenario struct {
	name string
	fn   func(t *testing.T)
}

// runConcurrently runs scenarios as subtests, all at once. The retry
// scenarios spend their time waiting for retry intervals; as parallel tests
// they would queue for -parallel's slots (GOMAXPROCS by default: 2 on a
// 2-core machine) and add their waits up. Subtests that do not call
// t.Parallel may be started from several goroutines; t.Run returns when the
// subtest ends, failed or not.
func runConcurrently(t *testing.T, scenarios ...scenario) {
	t.Helper()
	var wg sync.WaitGroup
	for _, sc := range scenarios {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t.Run(sc.name, sc.fn)
		}()
	}
	wg.Wait()
}

// TestRetryTimelines runs the retry scenarios on real River clients, each on
// its own schema, engine and client, and checks every execution's timeline.
func TestRetryTimelines(t *testing.T) {
	t.Parallel()
	runConcurrently(t,
		scenario{"R3PT1S", testRetryR3PT1S},
		scenario{"IntervalList", testRetryIntervalList},
		scenario{"NoCycle", testRetryNoCycle},
		scenario{"RaisedMidway", testRetryRaisedMidway},
		scenario{"Conflict", testRetryConflict},
		scenario{"PlainJobs", testRetryPlainJobs},
		scenario{"SetJobRetriesRevives", testSetJobRetriesRevives},
		scenario{"UnboundedRenewal", testRetryUnboundedRenewal},
		scenario{"BadDataDoesNotBreakRiver", testRetryBadDataDoesNotBreakRiver},
	)
}

// testRetryR3PT1S: R3/PT1S runs a failing job 3 times, 1 s apart, then River
// discards it and one failedJob incident is opened with the last error.
func testRetryR3PT1S(t *testing.T) {
	ctx := context.Background()
	bundle := testEngine(t, retryConfig("", map[string]string{"ship-async": "R3/PT1S"}))
	engine := bundle.Engine
	client, tl := startRetryClient(t, bundle, failing)

	job := insertRetryJob(t, client, "r3", &river.InsertOpts{Metadata: mustMetadata(t, jobOf("ship-async", "pi-1"))})
	require.Equal(t, 3, job.MaxAttempts)

	job = waitForState(t, client, job.ID, rivertype.JobStateDiscarded)
	require.Equal(t, []int{1, 2, 3}, tl.attempts(job.ID))
	requireWaits(t, tl, job.ID, time.Second, time.Second)
	require.Len(t, job.Errors, 3)

	inc := requireOneOpenIncident(ctx, t, engine, job, "boom 3")
	require.Equal(t, "ship-async", inc.JobDefinitionID)
	require.Equal(t, "act-ship-async", inc.ActivityID)
	require.Equal(t, "pi-1", inc.ProcessInstanceID)

	open, err := openIncidents(ctx, engine)
	require.NoError(t, err)
	require.Equal(t, []*incident.Incident{inc}, open)
}

// testRetryIntervalList: a 3-entry list gives 4 executions, the k-th failure
// waiting the k-th entry.
func testRetryIntervalList(t *testing.T) {
	ctx := context.Background()
	bundle := testEngine(t, retryConfig("PT0.3S,PT0.6S,PT0.1S", map[string]string{"ship-async": ""}))
	engine := bundle.Engine
	client, tl := startRetryClient(t, bundle, failing)

	// The cycle comes from the engine's default: the job definition has none.
	job := insertRetryJob(t, client, "list", &river.InsertOpts{Metadata: mustMetadata(t, jobOf("ship-async", "pi-1"))})
	require.Equal(t, 4, job.MaxAttempts)

	job = waitForState(t, client, job.ID, rivertype.JobStateDiscarded)
	require.Equal(t, []int{1, 2, 3, 4}, tl.attempts(job.ID))
	requireWaits(t, tl, job.ID, 300*time.Millisecond, 600*time.Millisecond, 100*time.Millisecond)
	requireOneOpenIncident(ctx, t, engine, job, "boom 4")
}

// testRetryNoCycle: without a cycle a BPMN job runs 3 times without waiting,
// whatever MaxAttempts the insert asked for.
func testRetryNoCycle(t *testing.T) {
	ctx := context.Background()
	bundle := testEngine(t, retryConfig("", map[string]string{"ship-async": ""}))
	engine := bundle.Engine
	client, tl := startRetryClient(t, bundle, failing)

	job := insertRetryJob(t, client, "none", &river.InsertOpts{MaxAttempts: 10, Metadata: mustMetadata(t, jobOf("ship-async", "pi-1"))})
	require.Equal(t, 3, job.MaxAttempts)

	job = waitForState(t, client, job.ID, rivertype.JobStateDiscarded)
	require.Equal(t, []int{1, 2, 3}, tl.attempts(job.ID))
	requireWaits(t, tl, job.ID, 0, 0)
	requireOneOpenIncident(ctx, t, engine, job, "boom 3")
}

// testRetryRaisedMidway: retries raised while a job waits for its second
// execution reuse the list's FIRST interval until the count is back in the
// list's range (Camunda's code; its user guide says "last").
func testRetryRaisedMidway(t *testing.T) {
	ctx := context.Background()
	bundle := testEngine(t, retryConfig("", map[string]string{"ship-async": "PT0.3S,PT0.05S,PT0.15S"}))
	engine := bundle.Engine

	// The queue is paused while the first execution fails, so that the raise
	// happens while the job waits, however slow the machine.
	firstRunning, failFirst := make(chan struct{}), make(chan struct{})
	client, tl := startRetryClient(t, bundle, func(ctx context.Context, job *river.Job[retryArgs], n int) error {
		if n == 1 {
			close(firstRunning)
			<-failFirst
		}
		return fmt.Errorf("boom %d", n)
	})

	// QueuePause only asks the producer to pause; it stops fetching when it
	// has handled the request, which it reports with EventKindQueuePaused.
	paused, cancelPaused := client.Subscribe(river.EventKindQueuePaused)
	defer cancelPaused()

	job := insertRetryJob(t, client, "raised", &river.InsertOpts{Metadata: mustMetadata(t, jobOf("ship-async", "pi-1"))})
	waitOrTimeout(t, firstRunning, retryBudget())
	require.NoError(t, client.QueuePause(ctx, river.QueueDefault, nil))
	waitOrTimeout(t, paused, retryBudget())
	close(failFirst)
	waitForState(t, client, job.ID, rivertype.JobStateAvailable) // due in 0.3 s
	require.NoError(t, engine.Jobs().SetRetries(ctx, job.ID, 5))
	require.NoError(t, client.QueueResume(ctx, river.QueueDefault, nil))

	job = waitForState(t, client, job.ID, rivertype.JobStateDiscarded)
	// 1 execution, then 5 more; executions left before each failure:
	// 5, 4 -> index clamped to 0 (0.3 s); 3 -> 1 (0.05 s); 2 -> 2 (0.15 s).
	require.Equal(t, []int{1, 2, 3, 4, 5, 6}, tl.attempts(job.ID))
	decided := tl.scheduledWaits(job.ID)
	require.InDelta(t, 300*time.Millisecond, decided[0], float64(50*time.Millisecond), "the first failure waits the first interval: %v", decided)
	requireWaits(t, tl, job.ID,
		notAWait, // the first failure's wait, stretched by the pause
		300*time.Millisecond, 300*time.Millisecond, 50*time.Millisecond, 150*time.Millisecond,
	)
	requireOneOpenIncident(ctx, t, engine, job, "boom 6")
}

// testRetryConflict: conflict failures (retrypolicy.ErrConflict, 40001, 40P01) leave the
// execution count unchanged but still wait the cycle's interval; they are
// recorded in the job's errors.
func testRetryConflict(t *testing.T) {
	ctx := context.Background()
	bundle := testEngine(t, retryConfig("", map[string]string{"ship-async": "R2/PT0.2S", "no-cycle": ""}))
	engine := bundle.Engine
	conflicts := []error{
		fmt.Errorf("joining branch: %w", retrypolicy.ErrConflict),
		fmt.Errorf("commit: %w", &pgconn.PgError{Code: "40001", Message: "could not serialize access"}),
		errors.Join(errors.New("rolled back"), &pgconn.PgError{Code: "40P01", Message: "deadlock detected"}),
	}
	client, tl := startRetryClient(t, bundle, func(ctx context.Context, job *river.Job[retryArgs], n int) error {
		if n <= len(conflicts) {
			return conflicts[n-1]
		}
		return fmt.Errorf("boom %d", n)
	})

	runConcurrently(t, scenario{"WithCycle", func(t *testing.T) {
		job := insertRetryJob(t, client, "cycle", &river.InsertOpts{Metadata: mustMetadata(t, jobOf("ship-async", "pi-1"))})
		require.Equal(t, 2, job.MaxAttempts)

		job = waitForState(t, client, job.ID, rivertype.JobStateDiscarded)
		// Three conflicts on attempt 1 (not counted), then two failures.
		require.Equal(t, []int{1, 1, 1, 1, 2}, tl.attempts(job.ID))
		// A conflict's wait counts from the failure, not from after the
		// middleware has recorded the conflict (one statement).
		requireWaits(t, tl, job.ID, 200*time.Millisecond, 200*time.Millisecond, 200*time.Millisecond, 200*time.Millisecond)
		require.Equal(t, 2, job.Attempt)
		require.Equal(t, 2, job.MaxAttempts, "a conflict does not add executions, it gives this one back")

		var messages []string
		for _, e := range job.Errors {
			messages = append(messages, e.Error)
		}
		require.Equal(t, []string{conflicts[0].Error(), conflicts[1].Error(), conflicts[2].Error(), "boom 4", "boom 5"}, messages)
		require.Equal(t, []int{1, 1, 1, 1, 2}, []int{job.Errors[0].Attempt, job.Errors[1].Attempt, job.Errors[2].Attempt, job.Errors[3].Attempt, job.Errors[4].Attempt})
		require.Contains(t, string(job.Metadata), `"snoozes": 3`)
		requireOneOpenIncident(ctx, t, engine, job, "boom 5")
	}}, scenario{"WithoutCycle", func(t *testing.T) {
		job := insertRetryJob(t, client, "no-cycle", &river.InsertOpts{Metadata: mustMetadata(t, jobOf("no-cycle", "pi-2"))})
		job = waitForState(t, client, job.ID, rivertype.JobStateDiscarded)
		require.Equal(t, []int{1, 1, 1, 1, 2, 3}, tl.attempts(job.ID))
		// A snooze cannot start before the worker middleware returns, so an
		// immediate retry after a conflict is due once the conflict is
		// recorded (one statement; slow under -race), which requireWaits
		// leaves out of the decided wait.
		requireWaits(t, tl, job.ID, 0, 0, 0, 0, 0)
		requireOneOpenIncident(ctx, t, engine, job, "boom 6")
	}}, scenario{"PlainJobKeepsRiversBehaviour", func(t *testing.T) {
		// No default cycle: a conflict is an ordinary River failure, and
		// the last one discards the job without an incident.
		job := insertRetryJob(t, client, "plain", &river.InsertOpts{MaxAttempts: 1})
		job = waitForState(t, client, job.ID, rivertype.JobStateDiscarded)
		require.Equal(t, []int{1}, tl.attempts(job.ID))
		incidents, err := jobIncidents(ctx, engine, job.ID)
		require.NoError(t, err)
		require.Empty(t, incidents)
	}})
}

// testRetryPlainJobs: jobs without a job context keep River's retry
// behaviour (MaxAttempts, backoff, no incident) unless the engine has a
// default cycle, which then applies to those left at River's default
// MaxAttempts too (still without incident).
func testRetryPlainJobs(t *testing.T) {
	ctx := context.Background()

	runConcurrently(t, scenario{"NoDefault", func(t *testing.T) {
		bundle := testEngine(t, retryConfig("", nil))
		engine := bundle.Engine
		client, tl := startRetryClient(t, bundle, failing)
		job := insertRetryJob(t, client, "plain", &river.InsertOpts{MaxAttempts: 2})
		require.Equal(t, 2, job.MaxAttempts)
		job = waitForState(t, client, job.ID, rivertype.JobStateDiscarded)
		require.Equal(t, []int{1, 2}, tl.attempts(job.ID))
		// River's default policy: 1^4 s after the first failure, ±10%,
		// decided when the middleware chain returns; the job then runs when
		// due (see requireWaits for the observed wait's bounds).
		decided, afterReturn, waits := tl.scheduledWaits(job.ID), tl.decidedAfterReturn(job.ID), tl.waits(job.ID)
		t.Logf("decided %v (%v after the middleware returned)", decided, afterReturn)
		require.GreaterOrEqual(t, decided[0], 900*time.Millisecond-2*time.Millisecond)
		require.Less(t, afterReturn[0], 1100*time.Millisecond+decidedSlack)
		require.GreaterOrEqual(t, waits[0], decided[0]-2*time.Millisecond)
		require.Less(t, waits[0], 1100*time.Millisecond+observedSlack)
		incidents, err := openIncidents(ctx, engine)
		require.NoError(t, err)
		require.Empty(t, incidents)
		t.Logf("waits: %v", waits)
	}}, scenario{"Default", func(t *testing.T) {
		bundle := testEngine(t, retryConfig("R2/PT0.2S", map[string]string{"ship-async": ""}))
		engine := bundle.Engine
		client, tl := startRetryClient(t, bundle, failing)
		plain := insertRetryJob(t, client, "plain", nil) // River's default MaxAttempts: the default cycle's
		bpmn := insertRetryJob(t, client, "bpmn", &river.InsertOpts{Metadata: mustMetadata(t, jobOf("ship-async", "pi-1"))})
		require.Equal(t, 2, plain.MaxAttempts)
		require.Equal(t, 2, bpmn.MaxAttempts)

		plain = waitForState(t, client, plain.ID, rivertype.JobStateDiscarded)
		bpmn = waitForState(t, client, bpmn.ID, rivertype.JobStateDiscarded)
		for _, job := range []*rivertype.JobRow{plain, bpmn} {
			require.Equal(t, []int{1, 2}, tl.attempts(job.ID))
			requireWaits(t, tl, job.ID, 200*time.Millisecond)
		}
		incidents, err := openIncidents(ctx, engine)
		require.NoError(t, err)
		require.Len(t, incidents, 1, "a plain job is no BPMN job: no incident")
		require.Equal(t, bpmn.ID, incidents[0].JobID)
	}})
}

// testSetJobRetriesRevives: SetJobRetries brings a discarded job back with n
// executions, resolves its incident, and its next failure waits the FIRST
// interval of its list.
func testSetJobRetriesRevives(t *testing.T) {
	ctx := context.Background()
	bundle := testEngine(t, retryConfig("", map[string]string{"ship-async": "PT0.1S,PT0.4S"}))
	engine := bundle.Engine
	client, tl := startRetryClient(t, bundle, func(ctx context.Context, job *river.Job[retryArgs], n int) error {
		if n == 5 {
			return nil
		}
		return fmt.Errorf("boom %d", n)
	})

	job := insertRetryJob(t, client, "revive", &river.InsertOpts{Metadata: mustMetadata(t, jobOf("ship-async", "pi-1"))})
	job = waitForState(t, client, job.ID, rivertype.JobStateDiscarded)
	require.Equal(t, []int{1, 2, 3}, tl.attempts(job.ID))
	inc := requireOneOpenIncident(ctx, t, engine, job, "boom 3")

	require.NoError(t, engine.Jobs().SetRetries(ctx, job.ID, 5))
	job = waitForState(t, client, job.ID, rivertype.JobStateCompleted)
	require.Equal(t, []int{1, 2, 3, 4, 5}, tl.attempts(job.ID))
	// 5 left before the 4th execution's failure: index 2-4, clamped to 0.
	// The third gap is the time the job spent discarded: not a wait.
	requireWaits(t, tl, job.ID, 100*time.Millisecond, 400*time.Millisecond, notAWait, 100*time.Millisecond)
	require.Equal(t, 8, job.MaxAttempts, "3 executions done + 5")

	incidents, err := jobIncidents(ctx, engine, job.ID)
	require.NoError(t, err)
	require.Len(t, incidents, 1)
	require.Equal(t, inc.ID, incidents[0].ID)
	require.NotNil(t, incidents[0].ResolvedAt, "resolved when the job was revived")
	require.True(t, !incidents[0].ResolvedAt.Before(incidents[0].CreatedAt))
	open, err := openIncidents(ctx, engine)
	require.NoError(t, err)
	require.Empty(t, open)
}

// testRetryUnboundedRenewal: a job with an unbounded cycle is never
// discarded: at attempt 1000 its attempt is rewound and its errors trimmed.
func testRetryUnboundedRenewal(t *testing.T) {
	ctx := context.Background()
	bundle := testEngine(t, retryConfig("", map[string]string{"ship-async": "R/PT0.05S"}))
	engine := bundle.Engine
	insertClient := bundle.Client

	job := insertRetryJob(t, insertClient, "unbounded", &river.InsertOpts{Metadata: mustMetadata(t, jobOf("ship-async", "pi-1"))})
	require.Equal(t, retrypolicy.MaxAttemptsUnbounded, job.MaxAttempts)
	// As if it had failed 998 times already (30 errors kept, to see the trim).
	_, err := bundle.DBPool.Exec(ctx, fmt.Sprintf(`UPDATE %s.river_job
		SET attempt = 998, errors = array(SELECT jsonb_build_object('at', now(), 'attempt', 968 + i, 'error', 'old ' || i) FROM generate_series(1, 30) AS i)
		WHERE id = $1`, pgx.Identifier{bundle.Schema}.Sanitize()), job.ID)
	require.NoError(t, err)

	done := make(chan struct{})
	var once sync.Once
	client, tl := startRetryClient(t, bundle, func(ctx context.Context, job *river.Job[retryArgs], n int) error {
		if n == 4 {
			once.Do(func() { close(done) })
			return nil
		}
		return fmt.Errorf("boom %d", n)
	})
	waitOrTimeout(t, done, retryBudget(50*time.Millisecond, 50*time.Millisecond, 50*time.Millisecond))
	job = waitForState(t, client, job.ID, rivertype.JobStateCompleted)

	// 999, 1000 (renewed: attempt back to 0), then 1, 2.
	require.Equal(t, []int{999, 1000, 1, 2}, tl.attempts(job.ID))
	requireWaits(t, tl, job.ID, 50*time.Millisecond, 50*time.Millisecond, 50*time.Millisecond)
	require.Equal(t, retrypolicy.MaxAttemptsUnbounded, job.MaxAttempts)
	require.Len(t, job.Errors, retrypolicy.UnboundedKeptErrors+1, "20 kept at the renewal, then one more failure")
	require.Equal(t, "boom 2", job.Errors[retrypolicy.UnboundedKeptErrors-1].Error, "the renewing failure is kept")
	require.Equal(t, "boom 3", job.Errors[retrypolicy.UnboundedKeptErrors].Error)
	incidents, err := jobIncidents(ctx, engine, job.ID)
	require.NoError(t, err)
	require.Empty(t, incidents)
}

// testRetryBadDataDoesNotBreakRiver inserts jobs whose stored retry data is
// malformed (as if edited by hand, bypassing the middleware): they are worked
// with River's own behaviour, a conflict counts as an ordinary failure, and
// the incident trigger copes with whatever is in the metadata.
func testRetryBadDataDoesNotBreakRiver(t *testing.T) {
	ctx := context.Background()
	bundle := testEngine(t, &workflow.Config{})
	engine := bundle.Engine

	// A client on River's own driver, without the middleware, so metadata is
	// stored as given.
	rawClient, err := river.NewClient(riverpgxv5.New(bundle.DBPool), &river.Config{Schema: bundle.Schema, TestOnly: true})
	require.NoError(t, err)
	client, tl := startRetryClient(t, bundle, func(ctx context.Context, job *river.Job[retryArgs], n int) error {
		if n == 1 {
			return fmt.Errorf("oops: %w", retrypolicy.ErrConflict)
		}
		return fmt.Errorf("plain %d", n)
	})

	bad := map[string]string{
		"cycle-garbage":         `{"bpmn": {"process_definition_key": "p", "process_instance_id": "pi", "retry_cycle": "every now and then"}}`,
		"cycle-number":          `{"bpmn": {"process_definition_key": "p", "retry_cycle": 42}}`,
		"cycle-garbage-compact": `{"bpmn": ["pi", "p", null, null, null, null, null, null, "every now and then"]}`,
		"cycle-number-compact":  `{"bpmn": [null, "p", null, null, null, null, null, null, 42]}`,
		"context-string":        `{"bpmn": "nope"}`,
		"context-number":        `{"bpmn": 7}`,
		// Bad data elsewhere in the context: the cycle (none) still applies,
		// so the conflict is not counted.
		"activity-number": `{"bpmn": {"process_definition_key": "p", "activity_id": 7}}`,
		"context-array":   `{"bpmn": [1, 2]}`,
		"plain-number":    `{"bpmn_retry_cycle": 5}`,
		"plain-unbounded": `{"bpmn_retry_cycle": "R/garbage"}`,
	}
	ids := map[string]int64{}
	for name, metadata := range bad {
		ids[name] = insertRetryJob(t, rawClient, name, &river.InsertOpts{MaxAttempts: 1, Metadata: []byte(metadata)}).ID
	}
	for name, id := range ids {
		job := waitForState(t, client, id, rivertype.JobStateDiscarded)
		if name == "activity-number" || name == "context-array" {
			require.Equal(t, []int{1, 1}, tl.attempts(id))
			incidents, err := jobIncidents(ctx, engine, id)
			require.NoError(t, err)
			require.Len(t, incidents, 1)
			require.Equal(t, "plain 2", incidents[0].Message)
			continue
		}
		require.Equal(t, []int{1}, tl.attempts(id), "%s: the conflict counted, as in River", name)
		incidents, err := jobIncidents(ctx, engine, id)
		require.NoError(t, err)
		if name == "plain-number" || name == "plain-unbounded" {
			require.Empty(t, incidents, name)
			continue
		}
		require.Len(t, incidents, 1, name)
		require.Equal(t, "oops: workflow: concurrency conflict", incidents[0].Message, name)
		require.Equal(t, job.ID, incidents[0].JobID)
	}
	incidents, err := jobIncidents(ctx, engine, ids["cycle-garbage"])
	require.NoError(t, err)
	require.Equal(t, "pi", incidents[0].ProcessInstanceID, "the readable fields are still copied")
	incidents, err = jobIncidents(ctx, engine, ids["activity-number"])
	require.NoError(t, err)
	require.Empty(t, incidents[0].ActivityID, "not a string: not copied")
}
