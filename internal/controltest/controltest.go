// Package controltest is the job the tests of running jobs share (packages
// events, jobcontrol, suspension): a job whose work blocks, fails, fails
// once or cancels itself as its arguments say, its worker counting runs,
// and the River configuration of a client that works it promptly. The
// engine, schema and client come from package riverbpmntest.
package controltest

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/jobcontrol"
	"github.com/riverbpmn/riverbpmn/workflow"
)

// Args is the control job.
type Args struct {
	Instance string `json:"instance,omitempty"`
	// Block makes the work wait for its context to be cancelled, then
	// return the context's error (or nil with IgnoreStop).
	Block      bool `json:"block,omitempty"`
	IgnoreStop bool `json:"ignore_stop,omitempty"`
	// Fail makes every attempt fail; FailOnce only the first.
	Fail     bool `json:"fail,omitempty"`
	FailOnce bool `json:"fail_once,omitempty"`
	// CancelItself makes the work return river.JobCancel.
	CancelItself bool `json:"cancel_itself,omitempty"`
	// Once gives the job a single execution (retry cycle R0).
	Once bool `json:"once,omitempty"`
}

// Kind is the job's kind, "control_test".
func (Args) Kind() string { return "control_test" }

// JobContext puts the job in process definition "control_process" and
// process instance a.Instance.
func (a Args) JobContext() workflow.JobContext {
	jc := workflow.JobContext{ProcessInstanceID: a.Instance, ProcessDefinitionKey: "control_process"}
	if a.Once {
		jc.RetryCycle = "R0/PT1S"
	}
	return jc
}

// Worker works control jobs and counts each job's runs.
type Worker struct {
	river.WorkerDefaults[Args]

	mu      sync.Mutex
	runs    map[int64]int
	started chan int64
}

// NewWorker returns a worker.
func NewWorker() *Worker {
	return &Worker{runs: map[int64]int{}, started: make(chan int64, 100)}
}

// Work does what the job's arguments say.
func (w *Worker) Work(ctx context.Context, job *river.Job[Args]) error {
	w.mu.Lock()
	w.runs[job.ID]++
	w.mu.Unlock()
	select {
	case w.started <- job.ID:
	default:
	}
	switch {
	case job.Args.Block:
		<-ctx.Done()
		if job.Args.IgnoreStop {
			return nil
		}
		return ctx.Err()
	case job.Args.Fail, job.Args.FailOnce && job.Attempt == 1:
		return errors.New("control failure")
	case job.Args.CancelItself:
		return river.JobCancel(errors.New("giving up"))
	}
	return nil
}

// Runs returns how many times job id ran.
func (w *Worker) Runs(id int64) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.runs[id]
}

// SoonRetry retries a failed job a millisecond later.
type SoonRetry struct{}

// NextRetry is a millisecond from now.
func (SoonRetry) NextRetry(*rivertype.JobRow) time.Time { return time.Now().Add(time.Millisecond) }

// ClientConfig is the River configuration of a client working w's jobs
// promptly (riverbpmntest.Opts.ClientConfig): short fetch cooldown and poll
// interval, ten workers, retries a millisecond after a failure.
func ClientConfig(w *Worker) *river.Config {
	workers := river.NewWorkers()
	river.AddWorker(workers, w)
	return &river.Config{
		FetchCooldown:     5 * time.Millisecond,
		FetchPollInterval: 50 * time.Millisecond,
		Queues:            map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 10}},
		RetryPolicy:       SoonRetry{},
		Workers:           workers,
	}
}

// WaitJobState waits (up to 30 s) until job id is in state want and returns
// its status.
func WaitJobState(ctx context.Context, t *testing.T, status func(context.Context, int64) (*jobcontrol.JobStatus, error), id int64, want rivertype.JobState) *jobcontrol.JobStatus {
	t.Helper()
	var st *jobcontrol.JobStatus
	require.Eventually(t, func() bool {
		var err error
		st, err = status(ctx, id)
		require.NoError(t, err)
		return st.State == string(want)
	}, 30*time.Second, 5*time.Millisecond, "job %d never reached %s", id, want)
	return st
}
