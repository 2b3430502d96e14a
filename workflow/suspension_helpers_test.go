package workflow

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/exclusive"
)

// suspArgs is the job of the suspension tests.
type suspArgs struct {
	Name     string `json:"name"`
	JobDef   string `json:"job_def,omitempty"`
	Instance string `json:"instance,omitempty"`
	// Deployment, Timer and Priority feed the acquisition options.
	Deployment string `json:"deployment,omitempty"`
	Timer      bool   `json:"timer,omitempty"`
	Priority   int64  `json:"priority,omitempty"`
	// Block makes the work wait for the recorder's release of this job; the
	// release says whether it fails.
	Block bool `json:"block,omitempty"`
	// Plain jobs have no job context.
	Plain bool `json:"plain,omitempty"`
}

func (suspArgs) Kind() string { return "susp_test" }

func (a suspArgs) JobContext() JobContext {
	if a.Plain {
		return JobContext{}
	}
	jc := JobContext{
		ProcessDefinitionKey: "susp_process",
		ProcessInstanceID:    a.Instance,
		JobDefinitionID:      a.JobDef,
		DeploymentID:         a.Deployment,
		Priority:             &a.Priority,
	}
	if a.JobDef != "" {
		jc.ProcessDefinitionKey = ""
	} else {
		// An activity no job definition declares: the job has no job
		// definition (rather than one found by its kind, which is ambiguous
		// here on purpose).
		jc.ActivityID = "undeclared"
	}
	if a.Timer {
		jc.JobType = JobTypeTimer
	}
	return jc
}

// suspPlainArgs is a plain River job (no job context).
type suspPlainArgs struct {
	Name string `json:"name"`
}

func (suspPlainArgs) Kind() string { return "susp_plain" }

func suspConfig() *Config {
	return &Config{
		ProcessDefinitions: []ProcessDefinition{{Key: "susp_process"}, {Key: "other_process"}},
		JobDefinitions: []JobDefinition{
			{ID: "susp_task", ProcessDefinitionKey: "susp_process", ActivityID: "task", Kind: "susp_test"},
			{ID: "susp_other", ProcessDefinitionKey: "susp_process", ActivityID: "other", Kind: "susp_test"},
			{ID: "unrelated_task", ProcessDefinitionKey: "other_process", ActivityID: "task", Kind: "susp_test"},
		},
		SuspensionServiceInterval: 100 * time.Millisecond,
	}
}

// suspRecorder records when each job's work started and ended.
type suspRecorder struct {
	mu       sync.Mutex
	starts   map[int64][]time.Time
	ends     map[int64][]time.Time
	running  map[int64]chan error // blocked jobs wait here
	started  chan int64
	finished chan int64
}

func newSuspRecorder() *suspRecorder {
	return &suspRecorder{
		starts: map[int64][]time.Time{}, ends: map[int64][]time.Time{}, running: map[int64]chan error{},
		started: make(chan int64, 10_000), finished: make(chan int64, 10_000),
	}
}

func (r *suspRecorder) work(ctx context.Context, job *rivertype.JobRow, block bool) error {
	r.mu.Lock()
	r.starts[job.ID] = append(r.starts[job.ID], time.Now())
	var release chan error
	if block {
		release = make(chan error, 1)
		r.running[job.ID] = release
	}
	r.mu.Unlock()
	r.started <- job.ID
	var err error
	if release != nil {
		select {
		case err = <-release:
		case <-ctx.Done():
			err = ctx.Err()
		}
	}
	r.mu.Lock()
	r.ends[job.ID] = append(r.ends[job.ID], time.Now())
	r.mu.Unlock()
	r.finished <- job.ID
	return err
}

// release lets a blocked job's work return err.
func (r *suspRecorder) release(jobID int64, err error) {
	r.mu.Lock()
	ch := r.running[jobID]
	delete(r.running, jobID)
	r.mu.Unlock()
	ch <- err
}

func (r *suspRecorder) startsOf(jobID int64) []time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]time.Time(nil), r.starts[jobID]...)
}

type suspWorker struct {
	river.WorkerDefaults[suspArgs]
	rec *suspRecorder
}

func (w *suspWorker) Work(ctx context.Context, job *river.Job[suspArgs]) error {
	return w.rec.work(ctx, job.JobRow, job.Args.Block)
}

type suspPlainWorker struct {
	river.WorkerDefaults[suspPlainArgs]
	rec *suspRecorder
}

func (w *suspPlainWorker) Work(ctx context.Context, job *river.Job[suspPlainArgs]) error {
	return w.rec.work(ctx, job.JobRow, false)
}

// suspPoll is the clients' poll interval: "not run within 3 poll intervals"
// is measured with it.
const suspPoll = 100 * time.Millisecond

// newSuspClient returns a client on driver working the suspension tests'
// jobs, with a short poll interval and retries a millisecond after a
// failure.
func newSuspClient(t *testing.T, engine *Engine, driver *Driver, schema string, rec *suspRecorder) *river.Client[pgx.Tx] {
	t.Helper()
	workers := river.NewWorkers()
	river.AddWorker(workers, &suspWorker{rec: rec})
	river.AddWorker(workers, &suspPlainWorker{rec: rec})
	client, err := river.NewClient(driver, &river.Config{
		FetchCooldown:     10 * time.Millisecond,
		FetchPollInterval: suspPoll,
		Logger:            slog.New(slog.DiscardHandler),
		Middleware:        []rivertype.Middleware{engine.Middleware()},
		Queues:            map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 20}},
		RetryPolicy:       soonRetry{},
		Schema:            schema,
		TestOnly:          true,
		Workers:           workers,
	})
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = client.StopAndCancel(ctx)
	})
	return client
}

// suspEngine returns an engine (with scope) and a migrated schema.
func suspEngine(t *testing.T, scope exclusive.Scope) (*Engine, string) {
	t.Helper()
	config := suspConfig()
	config.ExclusiveScope = scope
	return testEngineWithConfig(t, config)
}

func insertSusp(ctx context.Context, t *testing.T, client *river.Client[pgx.Tx], args ...suspArgs) []*rivertype.JobRow {
	t.Helper()
	params := make([]river.InsertManyParams, len(args))
	for i, a := range args {
		params[i] = river.InsertManyParams{Args: a}
	}
	res, err := client.InsertMany(ctx, params)
	require.NoError(t, err)
	jobs := make([]*rivertype.JobRow, len(res))
	for i, r := range res {
		jobs[i] = r.Job
	}
	return jobs
}

// waitFinished waits until every job of ids finished once more, or fails.
func waitFinished(t *testing.T, rec *suspRecorder, timeout time.Duration, ids ...int64) {
	t.Helper()
	want := map[int64]int{}
	for _, id := range ids {
		want[id]++
	}
	deadline := time.After(timeout)
	for len(want) > 0 {
		select {
		case id := <-rec.finished:
			if want[id] > 0 {
				want[id]--
				if want[id] == 0 {
					delete(want, id)
				}
			}
		case <-deadline:
			t.Fatalf("jobs %v did not finish within %s", keysOf(want), timeout)
		}
	}
}

func keysOf(m map[int64]int) []int64 {
	var keys []int64
	for k := range m {
		keys = append(keys, k)
	}
	return keys
}

func jobState(ctx context.Context, t *testing.T, engine *Engine, id int64) *rivertype.JobRow {
	t.Helper()
	rows, err := engine.dbPool.Query(ctx, engine.sql(`SELECT /* COLUMNS: river_job */ FROM /* TEMPLATE: schema */river_job WHERE id = $1`), id)
	require.NoError(t, err)
	jobs, _, err := scanJobRows(rows)
	require.NoError(t, err)
	require.Len(t, jobs, 1, "job %d", id)
	return jobs[0]
}

var errSuspTestFailure = errors.New("susp test: failing on purpose")

func idsOf(jobs []*rivertype.JobRow) []int64 {
	ids := make([]int64, len(jobs))
	for i, j := range jobs {
		ids[i] = j.ID
	}
	return ids
}

func describe(job *rivertype.JobRow) string {
	return fmt.Sprintf("job %d (%s, %s)", job.ID, job.Kind, job.State)
}
