package workflow

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/exclusive"
	"github.com/riverbpmn/riverbpmn/internal/longtest"
	"github.com/riverbpmn/riverbpmn/priority"
)

// composeArgs is the job of the multi-client composition test: one job of a
// process instance with a priority, maybe a timer, of the instance's
// deployment (or none).
type composeArgs struct {
	Instance    string `json:"instance"`
	Deployment  string `json:"deployment,omitempty"`
	Priority    int64  `json:"priority"`
	Timer       bool   `json:"timer,omitempty"`
	SleepMicros int    `json:"sleep_micros,omitempty"`
	FailOnce    bool   `json:"fail_once,omitempty"`
	FollowUp    bool   `json:"follow_up,omitempty"`
	// Initial marks the jobs inserted before the clients start.
	Initial bool `json:"initial,omitempty"`
}

func (composeArgs) Kind() string { return "compose_test" }

func (a composeArgs) JobContext() JobContext {
	jobType := JobTypeAsync
	if a.Timer {
		jobType = JobTypeTimer
	}
	p := a.Priority
	return JobContext{ProcessInstanceID: a.Instance, ProcessDefinitionKey: "compose", DeploymentID: a.Deployment, JobType: jobType, Priority: &p}
}

// composeRun is one run of one job attempt on one client.
type composeRun struct {
	client      int
	jobID       int64
	attempt     int
	args        composeArgs
	scheduledAt time.Time
	riverPrio   int
	start, end  time.Time
}

type composeRecorder struct {
	mu       sync.Mutex
	runs     []composeRun
	finished map[int64]int
	follows  map[int64]bool
	failed   map[int64]bool
}

type composeWorker struct {
	river.WorkerDefaults[composeArgs]
	rec    *composeRecorder
	client int
}

func (w *composeWorker) Work(ctx context.Context, job *river.Job[composeArgs]) error {
	run := composeRun{client: w.client, jobID: job.ID, attempt: job.Attempt, args: job.Args,
		scheduledAt: job.ScheduledAt, riverPrio: job.Priority, start: time.Now()}
	defer func() {
		run.end = time.Now()
		w.rec.mu.Lock()
		w.rec.runs = append(w.rec.runs, run)
		w.rec.mu.Unlock()
	}()
	time.Sleep(time.Duration(job.Args.SleepMicros) * time.Microsecond)

	w.rec.mu.Lock()
	fail := job.Args.FailOnce && !w.rec.failed[job.ID]
	w.rec.failed[job.ID] = true
	follow := job.Args.FollowUp && !w.rec.follows[job.ID]
	w.rec.follows[job.ID] = true
	w.rec.mu.Unlock()
	if fail {
		return errors.New("failing once, as asked")
	}
	if follow {
		next := job.Args
		next.FollowUp, next.FailOnce, next.Initial = false, false, false
		next.Priority = int64(rand.IntN(101)) //nolint:gosec // test data
		if _, err := river.ClientFromContext[pgx.Tx](ctx).Insert(context.WithoutCancel(ctx), next, nil); err != nil {
			return err
		}
	}
	w.rec.mu.Lock()
	w.rec.finished[job.ID]++
	w.rec.mu.Unlock()
	return nil
}

// composeClients are the four clients of the test: different orders,
// overlapping and disjoint priority ranges, different registered
// deployments; every (priority, deployment) of the workload is admitted by
// at least one of them.
func composeClients() []Acquisition {
	r := func(lo, hi int64) *priority.Range { return &priority.Range{Min: lo, Max: hi} }
	return []Acquisition{
		{ByPriority: true, PriorityRange: r(0, 60), DeploymentAware: true, Deployments: []string{"d1", "d2"}},
		{ByPriority: true, TimersFirst: true, PriorityRange: r(40, 100), DeploymentAware: true, Deployments: []string{"d2", "d3"}},
		{ByPriority: true, ByDueDate: true, PriorityRange: r(0, 45), DeploymentAware: true, Deployments: []string{"d1", "d3"}},
		{ByPriority: true, TimersFirst: true, ByDueDate: true, PriorityRange: r(61, 100), DeploymentAware: true, Deployments: []string{"d1", "d2", "d3"}},
	}
}

func composeAdmits(acq Acquisition, a composeArgs) bool {
	if acq.PriorityRange.Min > a.Priority || a.Priority > acq.PriorityRange.Max {
		return false
	}
	return a.Deployment == "" || slices.Contains(acq.Deployments, a.Deployment)
}

// composeBefore says whether job e comes before job j in acq's order, given
// the values each had when it was fetched.
func composeBefore(acq Acquisition, e, j composeRun) bool {
	cmps := []int{}
	if acq.ByPriority {
		cmps = append(cmps, -cmpInt(e.args.Priority, j.args.Priority))
	}
	if acq.TimersFirst {
		cmps = append(cmps, -cmpBool(e.args.Timer, j.args.Timer))
	}
	if acq.ByDueDate {
		cmps = append(cmps, e.scheduledAt.Compare(j.scheduledAt))
	}
	cmps = append(cmps, cmpInt(int64(e.riverPrio), int64(j.riverPrio)), e.scheduledAt.Compare(j.scheduledAt), cmpInt(e.jobID, j.jobID))
	for _, c := range cmps {
		if c != 0 {
			return c < 0
		}
	}
	return false
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// runComposeStress runs the composition workload on 4 clients (each its own
// pool and engine enforcing scope) of one queue, and returns the runs.
// RIVERBPMN_COMPOSE_STRESS=big runs 5x the instances.
// batches, when given, are the clients' Config.ExclusiveBatch in turn.
func runComposeStress(t *testing.T, scope exclusive.Scope, batches ...int) ([]composeRun, map[int64]int, int) {
	t.Helper()
	ctx := context.Background()
	schema := exclSchema(t)
	rec := &composeRecorder{finished: map[int64]int{}, follows: map[int64]bool{}, failed: map[int64]bool{}}
	numInstances, jobsPer := 200, 20
	if os.Getenv("RIVERBPMN_COMPOSE_STRESS") == "big" {
		numInstances = 1000
	}

	acqs := composeClients()
	clients := make([]*river.Client[pgx.Tx], len(acqs))
	for i, acq := range acqs {
		pool := exclNodePool(t, 5)
		batch := 0
		if len(batches) > 0 {
			batch = batches[i%len(batches)]
		}
		engine, err := NewEngine(pool, &Config{Schema: schema, ExclusiveScope: scope, ExclusiveBatch: batch})
		require.NoError(t, err)
		driver, err := engine.NewDriver(acq)
		require.NoError(t, err)
		workers := river.NewWorkers()
		river.AddWorker(workers, &composeWorker{rec: rec, client: i})
		clients[i], err = river.NewClient(driver, &river.Config{
			FetchCooldown: 5 * time.Millisecond, FetchPollInterval: 50 * time.Millisecond,
			Logger:      slog.New(slog.DiscardHandler),
			Middleware:  []rivertype.Middleware{engine.Middleware()},
			Queues:      map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 10}},
			RetryPolicy: soonRetry{}, Schema: schema, TestOnly: true, Workers: workers,
		})
		require.NoError(t, err)
		client := clients[i]
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_ = client.StopAndCancel(ctx)
		})
	}

	rng := rand.New(rand.NewPCG(11, 11)) //nolint:gosec // reproducible test data
	deployments := []string{"d1", "d2", "d3", ""}
	var params []river.InsertManyParams
	for k := range numInstances {
		for j := range jobsPer {
			params = append(params, river.InsertManyParams{Args: composeArgs{
				Instance: "pi-" + strconv.Itoa(k), Deployment: deployments[k%len(deployments)],
				Priority: int64(rng.IntN(101)), Timer: rng.IntN(5) == 0, SleepMicros: rng.IntN(2001),
				FailOnce: rng.IntN(20) == 0, FollowUp: j%7 == 3, Initial: true,
			}})
		}
	}
	rng.Shuffle(len(params), func(i, j int) { params[i], params[j] = params[j], params[i] })
	for start := 0; start < len(params); start += 1000 {
		_, err := clients[0].InsertMany(ctx, params[start:min(start+1000, len(params))])
		require.NoError(t, err)
	}

	began := time.Now()
	for _, c := range clients {
		require.NoError(t, c.Start(ctx))
	}
	assert.Eventually(t, func() bool {
		states := exclJobStates(ctx, t, schema)
		return states["completed"] == sumValues(states)
	}, 3*time.Minute, 50*time.Millisecond, "every job completes")
	for _, c := range clients {
		require.NoError(t, c.Stop(ctx))
	}
	if t.Failed() {
		t.FailNow()
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	total := sumValues(exclJobStates(ctx, t, schema))
	t.Logf("scope %s: %d jobs (%d initial) in %s, %d runs", scope, total, len(params), time.Since(began).Round(time.Millisecond), len(rec.runs))
	return slices.Clone(rec.runs), rec.finished, total
}

// TestComposeStress is the multi-client proof that exclusivity composes
// with every acquisition option: four clients on
// one queue with different orders, priority ranges (overlapping and
// disjoint) and registered deployments, all enforcing exclusivity per
// process instance; 200 instances x 20 jobs with random priorities, some
// inserting follow-ups, some failing once. From the recorded timeline: no
// two runs of one key overlap; every run was on a client whose filters admit
// the job; every job finished exactly once; and within each key every run
// respected the rule: no job of the key that the client may take, that
// comes before the run's job in the client's order, was waiting when the run
// started (checked against the jobs inserted up front, which wait from the
// start until their first run). Without exclusivity the same workload
// overlaps, so the check can fail.
func TestComposeStress(t *testing.T) {
	longtest.Skip(t)
	t.Run("Enforced", func(t *testing.T) {
		runs, finished, total := runComposeStress(t, exclusive.ProcessInstance)
		checkComposeRuns(t, runs, finished, total)
	})
	t.Run("Batched", func(t *testing.T) {
		// Clients 0 and 2 take runs of up to 4 jobs of a key
		// (Config.ExclusiveBatch), 1 and 3 one job per key: the same
		// checks hold, with every run of a key a prefix of its waiting
		// jobs in the taking client's order.
		runs, finished, total := runComposeStress(t, exclusive.ProcessInstance, 4, 0)
		checkComposeRuns(t, runs, finished, total)
	})
	t.Run("NotEnforced", func(t *testing.T) {
		runs, _, _ := runComposeStress(t, exclusive.None)
		spans := make([]exclusive.Span, len(runs))
		for i, r := range runs {
			spans[i] = exclusive.Span{Key: r.args.Instance, JobID: r.jobID, Attempt: r.attempt, Start: r.start, End: r.end}
		}
		overlaps := exclusive.Overlaps(spans)
		t.Logf("without exclusivity: %d overlapping pairs", len(overlaps))
		require.NotEmpty(t, overlaps, "without exclusivity, jobs of one instance do overlap: the check can fail")
	})
}

// checkComposeRuns checks the runs of an enforced compose stress run (see
// TestComposeStress).
func checkComposeRuns(t *testing.T, runs []composeRun, finished map[int64]int, total int) {
	t.Helper()
	{
		acqs := composeClients()

		spans := make([]exclusive.Span, len(runs))
		for i, r := range runs {
			spans[i] = exclusive.Span{Key: r.args.Instance, JobID: r.jobID, Attempt: r.attempt, Start: r.start, End: r.end}
		}
		overlaps := exclusive.Overlaps(spans)
		for _, o := range overlaps[:min(len(overlaps), 10)] {
			t.Error(o)
		}
		require.Empty(t, overlaps, "no two jobs of one instance ran at the same time")

		require.Len(t, finished, total, "every job's work finished it")
		for id, n := range finished {
			require.Equal(t, 1, n, "job %d finished %d times", id, n)
		}

		perClient := make([]int, len(acqs))
		firstRun := map[int64]composeRun{}
		for _, r := range runs {
			require.True(t, composeAdmits(acqs[r.client], r.args), "client %d ran job %d (%+v) outside its filters", r.client, r.jobID, r.args)
			perClient[r.client]++
			if f, ok := firstRun[r.jobID]; !ok || r.start.Before(f.start) {
				firstRun[r.jobID] = r
			}
		}
		for i, n := range perClient {
			require.Positive(t, n, "client %d ran jobs", i)
		}

		byKey := map[string][]composeRun{}
		for _, r := range firstRun {
			if r.args.Initial {
				byKey[r.args.Instance] = append(byKey[r.args.Instance], r)
			}
		}
		checked := 0
		for _, r := range runs {
			acq := acqs[r.client]
			for _, e := range byKey[r.args.Instance] {
				if e.jobID == r.jobID || !e.start.After(r.start) || !composeAdmits(acq, e.args) {
					continue
				}
				checked++
				require.False(t, composeBefore(acq, e, r),
					"client %d ran job %d (priority %d, timer %t) while job %d (priority %d, timer %t) of %s, first in its order, waited",
					r.client, r.jobID, r.args.Priority, r.args.Timer, e.jobID, e.args.Priority, e.args.Timer, r.args.Instance)
			}
		}
		t.Logf("runs per client %v; %d (run, waiting job) pairs checked against the within-key rule", perClient, checked)
		require.Positive(t, checked)
	}
}

// TestExclusiveWakeAcrossFilteredClients: the next job of a key may be one
// only another client may take. Client A (range [0, 5], MaxWorkers 1) runs
// p1 of instance pi, with a full fetch, so River would fetch again by itself
// (and find nothing it may take); client B (range [10, 100]) came back
// short while pi was held and polls only every 10 s. When A gives pi back,
// its engine wakes the queue because its client has filters, and B starts
// p50 at once rather than at its next poll.
func TestExclusiveWakeAcrossFilteredClients(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	schema := exclSchema(t)
	rec := &composeRecorder{finished: map[int64]int{}, follows: map[int64]bool{}, failed: map[int64]bool{}}
	newClient := func(i int, rng priority.Range) *river.Client[pgx.Tx] {
		engine, err := NewEngine(exclNodePool(t, 4), &Config{Schema: schema, ExclusiveScope: exclusive.ProcessInstance})
		require.NoError(t, err)
		driver, err := engine.NewDriver(Acquisition{ByPriority: true, PriorityRange: &rng})
		require.NoError(t, err)
		workers := river.NewWorkers()
		river.AddWorker(workers, &composeWorker{rec: rec, client: i})
		client, err := river.NewClient(driver, &river.Config{
			FetchCooldown: 5 * time.Millisecond, FetchPollInterval: 10 * time.Second,
			Logger:     slog.New(slog.DiscardHandler),
			Middleware: []rivertype.Middleware{engine.Middleware()},
			Queues:     map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 1}},
			Schema:     schema, TestOnly: true, Workers: workers,
		})
		require.NoError(t, err)
		t.Cleanup(func() { _ = client.Stop(context.WithoutCancel(ctx)) })
		return client
	}
	a := newClient(0, priority.Range{Min: 0, Max: 5})
	b := newClient(1, priority.Range{Min: 10, Max: 100})
	_, err := a.InsertMany(ctx, []river.InsertManyParams{
		{Args: composeArgs{Instance: "pi", Priority: 1, SleepMicros: 300_000}},
		{Args: composeArgs{Instance: "pi", Priority: 50}},
	})
	require.NoError(t, err)

	require.NoError(t, a.Start(ctx))
	require.Eventually(t, func() bool {
		var running int
		require.NoError(t, testPool(t).QueryRow(ctx, fmt.Sprintf(`SELECT count(*) FROM %s.river_job WHERE state = 'running'`,
			pgx.Identifier{schema}.Sanitize())).Scan(&running))
		return running == 1
	}, 10*time.Second, time.Millisecond, "A runs p1")
	require.NoError(t, b.Start(ctx)) // B's first fetch finds pi held
	require.Eventually(t, func() bool {
		rec.mu.Lock()
		defer rec.mu.Unlock()
		return len(rec.runs) == 2
	}, 5*time.Second, time.Millisecond, "B starts p50 well before its 10 s poll")

	rec.mu.Lock()
	defer rec.mu.Unlock()
	first, second := rec.runs[0], rec.runs[1]
	require.Equal(t, []int{0, 1}, []int{first.client, second.client})
	require.False(t, second.start.Before(first.end), "one at a time")
	t.Logf("p50 started %s after p1 ended", second.start.Sub(first.end).Round(time.Millisecond))
}
