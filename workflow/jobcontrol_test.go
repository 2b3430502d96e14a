package workflow

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/jobcontrol"
)

// controlArgs is the job of the stop and events tests.
type controlArgs struct {
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

func (controlArgs) Kind() string { return "control_test" }

func (a controlArgs) JobContext() JobContext {
	jc := JobContext{ProcessInstanceID: a.Instance, ProcessDefinitionKey: "control_process"}
	if a.Once {
		jc.RetryCycle = "R0/PT1S"
	}
	return jc
}

type controlWorker struct {
	river.WorkerDefaults[controlArgs]

	mu      sync.Mutex
	runs    map[int64]int
	started chan int64
}

func (w *controlWorker) Work(ctx context.Context, job *river.Job[controlArgs]) error {
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

func (w *controlWorker) runCount(id int64) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.runs[id]
}

func newControlClient(t *testing.T, engine *Engine, schema string, worker *controlWorker) *river.Client[pgx.Tx] {
	t.Helper()
	workers := river.NewWorkers()
	river.AddWorker(workers, worker)
	client, err := river.NewClient(engine.Driver(), &river.Config{
		FetchCooldown:     5 * time.Millisecond,
		FetchPollInterval: 50 * time.Millisecond,
		Middleware:        []rivertype.Middleware{engine.Middleware()},
		Queues:            map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 10}},
		RetryPolicy:       soonRetry{},
		Schema:            schema,
		Workers:           workers,
	})
	require.NoError(t, err)
	return client
}

func newControlWorker() *controlWorker {
	return &controlWorker{runs: map[int64]int{}, started: make(chan int64, 100)}
}

func waitJobState(ctx context.Context, t *testing.T, engine *Engine, id int64, want rivertype.JobState) *jobcontrol.JobStatus {
	t.Helper()
	var st *jobcontrol.JobStatus
	require.Eventually(t, func() bool {
		var err error
		st, err = engine.JobStatus(ctx, id)
		require.NoError(t, err)
		return st.State == string(want)
	}, 30*time.Second, 5*time.Millisecond, "job %d never reached %s", id, want)
	return st
}

func openIncidents(ctx context.Context, t *testing.T, engine *Engine, id int64) int {
	t.Helper()
	var n int
	require.NoError(t, engine.dbPool.QueryRow(ctx,
		engine.sql("SELECT count(*) FROM /* TEMPLATE: schema */river_bpmn_incident WHERE job_id = $1"), id).Scan(&n))
	return n
}

func TestStopJob(t *testing.T) {
	ctx := context.Background()

	t.Run("WaitingJobNeverStarts", func(t *testing.T) {
		engine, schema := testEngine(t)
		worker := newControlWorker()
		client := newControlClient(t, engine, schema, worker)
		res, err := client.Insert(ctx, controlArgs{}, nil)
		require.NoError(t, err)

		stop, err := engine.StopJob(ctx, res.Job.ID)
		require.NoError(t, err)
		require.Equal(t, jobcontrol.StopResult{JobID: res.Job.ID, State: "available", Outcome: jobcontrol.StopAborted}, *stop)
		st, err := engine.JobStatus(ctx, res.Job.ID)
		require.NoError(t, err)
		require.Equal(t, jobcontrol.Aborted, st.Status)
		require.Equal(t, "cancelled", st.State)

		// Idempotent: asked again, the job is left as it is and the call says so.
		stop, err = engine.StopJob(ctx, res.Job.ID)
		require.NoError(t, err)
		require.Equal(t, jobcontrol.StopAlreadyFinished, stop.Outcome)

		// A client started afterwards never runs it.
		other, err := client.Insert(ctx, controlArgs{}, nil)
		require.NoError(t, err)
		require.NoError(t, client.Start(ctx))
		t.Cleanup(func() { require.NoError(t, client.Stop(context.Background())) })
		waitJobState(ctx, t, engine, other.Job.ID, rivertype.JobStateCompleted)
		require.Zero(t, worker.runCount(res.Job.ID))
	})

	t.Run("RunningJob", func(t *testing.T) {
		engine, schema := testEngine(t)
		worker := newControlWorker()
		client := newControlClient(t, engine, schema, worker)
		require.NoError(t, client.Start(ctx))
		t.Cleanup(func() { require.NoError(t, client.Stop(context.Background())) })

		for _, tc := range []struct {
			name string
			args controlArgs
			opts *river.InsertOpts
		}{
			{"ReturnsContextError", controlArgs{Block: true}, nil},
			{"LastAttempt", controlArgs{Block: true, Once: true}, nil},
			{"IgnoresStop", controlArgs{Block: true, IgnoreStop: true}, nil},
		} {
			t.Run(tc.name, func(t *testing.T) {
				res, err := client.Insert(ctx, tc.args, tc.opts)
				require.NoError(t, err)
				waitJobState(ctx, t, engine, res.Job.ID, rivertype.JobStateRunning)

				stop, err := engine.StopJob(ctx, res.Job.ID)
				require.NoError(t, err)
				require.Equal(t, jobcontrol.StopRequested, stop.Outcome)

				st := waitJobState(ctx, t, engine, res.Job.ID, rivertype.JobStateCancelled)
				require.Equal(t, jobcontrol.Aborted, st.Status)
				require.True(t, st.StopRequested)
				require.Zero(t, openIncidents(ctx, t, engine, res.Job.ID), "an aborted job opens no incident")
				require.Equal(t, 1, worker.runCount(res.Job.ID))
			})
		}
	})

	t.Run("FinishedJobLeftAsIs", func(t *testing.T) {
		engine, schema := testEngine(t)
		worker := newControlWorker()
		client := newControlClient(t, engine, schema, worker)
		require.NoError(t, client.Start(ctx))
		t.Cleanup(func() { require.NoError(t, client.Stop(context.Background())) })
		res, err := client.Insert(ctx, controlArgs{}, nil)
		require.NoError(t, err)
		waitJobState(ctx, t, engine, res.Job.ID, rivertype.JobStateCompleted)

		stop, err := engine.StopJob(ctx, res.Job.ID)
		require.NoError(t, err)
		require.Equal(t, jobcontrol.StopResult{JobID: res.Job.ID, State: "completed", Outcome: jobcontrol.StopAlreadyFinished}, *stop)
		st, err := engine.JobStatus(ctx, res.Job.ID)
		require.NoError(t, err)
		require.Equal(t, jobcontrol.Succeeded, st.Status)
		require.False(t, st.StopRequested)
	})

	t.Run("ProcessInstance", func(t *testing.T) {
		engine, schema := testEngine(t)
		worker := newControlWorker()
		client := newControlClient(t, engine, schema, worker)
		require.NoError(t, client.Start(ctx))
		t.Cleanup(func() { require.NoError(t, client.Stop(context.Background())) })

		done, err := client.Insert(ctx, controlArgs{Instance: "pi-1"}, nil)
		require.NoError(t, err)
		waitJobState(ctx, t, engine, done.Job.ID, rivertype.JobStateCompleted)
		running, err := client.Insert(ctx, controlArgs{Instance: "pi-1", Block: true}, nil)
		require.NoError(t, err)
		waitJobState(ctx, t, engine, running.Job.ID, rivertype.JobStateRunning)
		waiting, err := client.Insert(ctx, controlArgs{Instance: "pi-1"}, &river.InsertOpts{ScheduledAt: time.Now().Add(time.Hour)})
		require.NoError(t, err)
		otherInstance, err := client.Insert(ctx, controlArgs{Instance: "pi-2"}, &river.InsertOpts{ScheduledAt: time.Now().Add(time.Hour)})
		require.NoError(t, err)

		results, err := engine.StopProcessInstance(ctx, "pi-1")
		require.NoError(t, err)
		require.Equal(t, []jobcontrol.StopResult{
			{JobID: done.Job.ID, State: "completed", Outcome: jobcontrol.StopAlreadyFinished},
			{JobID: running.Job.ID, State: "running", Outcome: jobcontrol.StopRequested},
			{JobID: waiting.Job.ID, State: "scheduled", Outcome: jobcontrol.StopAborted},
		}, results)
		waitJobState(ctx, t, engine, running.Job.ID, rivertype.JobStateCancelled)

		statuses, err := engine.ProcessInstanceStatus(ctx, "pi-1")
		require.NoError(t, err)
		got := map[int64]jobcontrol.Status{}
		for _, st := range statuses {
			got[st.JobID] = st.Status
		}
		require.Equal(t, map[int64]jobcontrol.Status{
			done.Job.ID: jobcontrol.Succeeded, running.Job.ID: jobcontrol.Aborted, waiting.Job.ID: jobcontrol.Aborted,
		}, got)
		st, err := engine.JobStatus(ctx, otherInstance.Job.ID)
		require.NoError(t, err)
		require.Equal(t, jobcontrol.Queued, st.Status, "another instance's job is untouched")
	})

	t.Run("UnknownJob", func(t *testing.T) {
		engine, _ := testEngine(t)
		_, err := engine.StopJob(ctx, 987654321)
		require.ErrorIs(t, err, ErrNotFound)
		_, err = engine.JobStatus(ctx, 987654321)
		require.ErrorIs(t, err, ErrNotFound)
		_, err = engine.StopProcessInstance(ctx, "")
		require.ErrorContains(t, err, "process_instance_id")
	})
}
