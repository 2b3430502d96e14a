// Package recordtest is the job the suspension and execution tests share:
// a job (Args, and PlainArgs without a job context) whose worker records
// when each run started and ended and can block until released, the
// process and job definitions those jobs name (Config), and the River
// configuration of a client that works them promptly (ClientConfig). The
// engine, schema and client come from package riverbpmntest.
package recordtest

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

	"github.com/riverbpmn/riverbpmn/internal/controltest"
	"github.com/riverbpmn/riverbpmn/suspension"
	"github.com/riverbpmn/riverbpmn/workflow"
)

// Args is the job of the suspension tests.
type Args struct {
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

// Kind is the job's kind, "susp_test".
func (Args) Kind() string { return "susp_test" }

// JobContext puts the job in process definition susp_process (through
// job definition JobDef when set) and process instance Instance.
func (a Args) JobContext() workflow.JobContext {
	if a.Plain {
		return workflow.JobContext{}
	}
	jc := workflow.JobContext{
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
		jc.JobType = workflow.JobTypeTimer
	}
	return jc
}

// PlainArgs is a plain River job (no job context).
type PlainArgs struct {
	Name string `json:"name"`
}

// Kind is the job's kind, "susp_plain".
func (PlainArgs) Kind() string { return "susp_plain" }

// Config declares the process definitions susp_process and other_process
// and their job definitions susp_task, susp_other and unrelated_task, with
// a leader that looks for due scheduled suspensions every 100 ms.
func Config() *workflow.Config {
	return &workflow.Config{
		ProcessDefinitions: []workflow.ProcessDefinition{{Key: "susp_process"}, {Key: "other_process"}},
		JobDefinitions: []workflow.JobDefinition{
			{ID: "susp_task", ProcessDefinitionKey: "susp_process", ActivityID: "task", Kind: "susp_test"},
			{ID: "susp_other", ProcessDefinitionKey: "susp_process", ActivityID: "other", Kind: "susp_test"},
			{ID: "unrelated_task", ProcessDefinitionKey: "other_process", ActivityID: "task", Kind: "susp_test"},
		},
		Suspension: suspension.Config{ServiceInterval: 100 * time.Millisecond},
	}
}

// Recorder records when each job's work started and ended.
type Recorder struct {
	mu       sync.Mutex
	starts   map[int64][]time.Time
	ends     map[int64][]time.Time
	running  map[int64]chan error // blocked jobs wait here
	started  chan int64
	finished chan int64
}

// NewRecorder returns a recorder.
func NewRecorder() *Recorder {
	return &Recorder{
		starts: map[int64][]time.Time{}, ends: map[int64][]time.Time{}, running: map[int64]chan error{},
		started: make(chan int64, 10_000), finished: make(chan int64, 10_000),
	}
}

// Work records a run of job, blocking until Release when block is set.
func (r *Recorder) Work(ctx context.Context, job *rivertype.JobRow, block bool) error {
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
func (r *Recorder) Release(jobID int64, err error) {
	r.mu.Lock()
	ch := r.running[jobID]
	delete(r.running, jobID)
	r.mu.Unlock()
	ch <- err
}

// StartsOf returns when job jobID's runs started.
func (r *Recorder) StartsOf(jobID int64) []time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]time.Time(nil), r.starts[jobID]...)
}

// Worker works Args jobs, recorded.
type Worker struct {
	river.WorkerDefaults[Args]
	rec *Recorder
}

// Work records the run.
func (w *Worker) Work(ctx context.Context, job *river.Job[Args]) error {
	return w.rec.Work(ctx, job.JobRow, job.Args.Block)
}

// PlainWorker works PlainArgs jobs, recorded.
type PlainWorker struct {
	river.WorkerDefaults[PlainArgs]
	rec *Recorder
}

// Work records the run.
func (w *PlainWorker) Work(ctx context.Context, job *river.Job[PlainArgs]) error {
	return w.rec.Work(ctx, job.JobRow, false)
}

// Poll is the clients' poll interval: "not run within 3 poll intervals"
// is measured with it.
const Poll = 100 * time.Millisecond

// ClientConfig is the River configuration of a client working the jobs of
// this package, recorded by rec, with a short poll interval (Poll) and
// retries a millisecond after a failure (riverbpmntest.Opts.ClientConfig,
// or workflow.NewClient).
func ClientConfig(rec *Recorder) *river.Config {
	return &river.Config{
		FetchCooldown:     10 * time.Millisecond,
		FetchPollInterval: Poll,
		Logger:            slog.New(slog.DiscardHandler),
		Queues:            map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 20}},
		RetryPolicy:       controltest.SoonRetry{},
		TestOnly:          true,
		Workers:           NewWorkers(rec),
	}
}

// NewWorkers returns workers of this package's jobs recorded by rec, for a
// client of a configuration of its own.
func NewWorkers(rec *Recorder) *river.Workers {
	workers := river.NewWorkers()
	river.AddWorker(workers, &Worker{rec: rec})
	river.AddWorker(workers, &PlainWorker{rec: rec})
	return workers
}

// Insert inserts a job of each args in one InsertMany and returns their rows.
func Insert(ctx context.Context, t *testing.T, client *river.Client[pgx.Tx], args ...Args) []*rivertype.JobRow {
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

// WaitFinished waits until every job of ids finished once more, or fails.
func WaitFinished(t *testing.T, rec *Recorder, timeout time.Duration, ids ...int64) {
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

// ErrFailure is the error of a run released to fail.
var ErrFailure = errors.New("susp test: failing on purpose")

// IDs returns the ids of jobs.
func IDs(jobs []*rivertype.JobRow) []int64 {
	ids := make([]int64, len(jobs))
	for i, j := range jobs {
		ids[i] = j.ID
	}
	return ids
}

// Describe names a job for a failure message.
func Describe(job *rivertype.JobRow) string {
	return fmt.Sprintf("job %d (%s, %s)", job.ID, job.Kind, job.State)
}

// EndsOf returns when job jobID's runs ended.
func (r *Recorder) EndsOf(jobID int64) []time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]time.Time(nil), r.ends[jobID]...)
}

// Started is where the recorder sends the id of each job whose run started.
func (r *Recorder) Started() <-chan int64 { return r.started }

// WaitStarted waits (up to 30 s) until job id started once, or fails.
func WaitStarted(t *testing.T, rec *Recorder, id int64) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for len(rec.StartsOf(id)) == 0 {
		select {
		case <-deadline:
			t.Fatalf("job %d did not start", id)
		case <-time.After(20 * time.Millisecond):
		}
	}
}
