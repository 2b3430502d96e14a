package workflow_test

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdbtest"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/exclusive"
	"github.com/riverbpmn/riverbpmn/internal/recordtest"
	"github.com/riverbpmn/riverbpmn/riverbpmntest"
	"github.com/riverbpmn/riverbpmn/workflow"
)

// execArgs is the job of the ExecuteJob tests: a job of process instance
// Instance with retry cycle R2/PT1H, that fails when Fail is set and waits
// for the recorder's release when Block is.
type execArgs struct {
	Instance string `json:"instance"`
	Fail     bool   `json:"fail,omitempty"`
	Block    bool   `json:"block,omitempty"`
}

func (execArgs) Kind() string { return "exec_test" }

func (a execArgs) JobContext() workflow.JobContext {
	return workflow.JobContext{ProcessDefinitionKey: "susp_process", ActivityID: "exec", ProcessInstanceID: a.Instance, RetryCycle: "R2/PT1H"}
}

var errExecFailure = errors.New("exec test: failing on purpose")

type execWorker struct {
	river.WorkerDefaults[execArgs]
	rec *recordtest.Recorder
}

func (w *execWorker) Work(ctx context.Context, job *river.Job[execArgs]) error {
	err := w.rec.Work(ctx, job.JobRow, job.Args.Block)
	if err == nil && job.Args.Fail {
		return errExecFailure
	}
	return err
}

// newExecClient is a started client of the engine, built as documented
// (workflow.NewClient: the engine's retry policy), at River's default fetch
// settings.
func newExecClient(t *testing.T, engine *workflow.Engine, rec *recordtest.Recorder) *river.Client[pgx.Tx] {
	t.Helper()
	workers := river.NewWorkers()
	river.AddWorker(workers, &execWorker{rec: rec})
	client, err := workflow.NewClient(engine, &river.Config{
		Logger:   slog.New(slog.DiscardHandler),
		Queues:   map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 5}},
		TestOnly: true,
		Workers:  workers,
	})
	require.NoError(t, err)
	require.NoError(t, client.Start(context.Background()))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = client.StopAndCancel(ctx)
	})
	return client
}

// execEngine returns an engine of recordtest.Config with exclusive execution
// by process instance, on a fresh test schema.
func execEngine(t *testing.T) *workflow.Engine {
	t.Helper()
	ctx := context.Background()
	config := recordtest.Config()
	config.ExclusiveScope = exclusive.ProcessInstance
	schema := riverdbtest.TestSchema(ctx, t, riverbpmntest.Driver(t), nil)
	return riverbpmntest.New(ctx, t, schema, &riverbpmntest.Opts{Config: config}).Engine
}

// TestExecuteJob reproduces Camunda's ManagementServiceTest executeJob
// cases: a job due in an hour runs now and its outcome is returned; a
// failing job's run goes through the retry cycle's bookkeeping (retried
// after PT1H, then an incident when no retry is left), exactly as a run by
// the job executor; a job that is running, suspended, finished or unknown
// is refused with an error saying so.
func TestExecuteJob(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	engine := execEngine(t)
	rec := recordtest.NewRecorder()
	client := newExecClient(t, engine, rec)
	inHour := time.Now().Add(time.Hour).UTC().Truncate(time.Microsecond)
	insert := func(args execArgs) *rivertype.JobRow {
		t.Helper()
		res, err := client.Insert(ctx, args, &river.InsertOpts{ScheduledAt: inHour})
		require.NoError(t, err)
		require.Equal(t, rivertype.JobStateScheduled, res.Job.State)
		return res.Job
	}
	runCtx := func() context.Context {
		c, cancel := context.WithTimeout(ctx, 30*time.Second)
		t.Cleanup(cancel)
		return c
	}

	ok := insert(execArgs{Instance: "exec-1"})
	out, err := engine.ExecuteJob(runCtx(), ok.ID)
	require.NoError(t, err)
	require.Equal(t, "completed", out.Outcome)
	require.Equal(t, rivertype.JobStateCompleted, out.Job.State)
	require.Equal(t, inHour, out.DueAt, "the due date it had")
	require.Len(t, rec.StartsOf(ok.ID), 1)

	failing := insert(execArgs{Instance: "exec-2", Fail: true})
	out, err = engine.ExecuteJob(runCtx(), failing.ID)
	require.NoError(t, err, "a failed run is an outcome, not an error")
	require.Equal(t, "failed", out.Outcome)
	require.Contains(t, out.Error, errExecFailure.Error())
	require.Equal(t, rivertype.JobStateRetryable, out.Job.State)
	require.WithinDuration(t, time.Now().Add(time.Hour), out.Job.ScheduledAt, 5*time.Minute, "R2/PT1H: retried in an hour")
	require.False(t, out.Incident)
	out, err = engine.ExecuteJob(runCtx(), failing.ID) // R2: two executions
	require.NoError(t, err)
	require.Equal(t, "discarded", out.Outcome)
	require.True(t, out.Incident, "no retries left: an incident, as after a run by a worker")
	require.Len(t, rec.StartsOf(failing.ID), 2)

	_, err = engine.ExecuteJob(ctx, failing.ID)
	require.ErrorIs(t, err, workflow.ErrJobNotExecutable)
	require.ErrorContains(t, err, "discarded")
	_, err = engine.ExecuteJob(ctx, ok.ID)
	require.ErrorIs(t, err, workflow.ErrJobNotExecutable)
	_, err = engine.ExecuteJob(ctx, 1<<40)
	require.ErrorIs(t, err, workflow.ErrNotFound)

	suspended := insert(execArgs{Instance: "exec-3"})
	_, err = engine.Suspensions().SuspendJob(ctx, suspended.ID)
	require.NoError(t, err)
	_, err = engine.ExecuteJob(ctx, suspended.ID)
	require.ErrorIs(t, err, workflow.ErrJobNotExecutable)
	require.ErrorContains(t, err, "suspended")
	require.ErrorContains(t, err, "activate it first")

	blocked := insert(execArgs{Instance: "exec-4", Block: true})
	done := make(chan *workflow.JobExecution, 1)
	go func() {
		out, err := engine.ExecuteJob(runCtx(), blocked.ID)
		if err != nil {
			t.Error(err)
		}
		done <- out
	}()
	recordtest.WaitStarted(t, rec, blocked.ID)
	_, err = engine.ExecuteJob(ctx, blocked.ID)
	require.ErrorIs(t, err, workflow.ErrJobNotExecutable)
	require.ErrorContains(t, err, "is running")
	rec.Release(blocked.ID, nil)
	require.Equal(t, "completed", (<-done).Outcome, "ExecuteJob waits for the run's end")
}

// TestExecuteJobRespectsExclusivity: Camunda never runs two exclusive jobs
// of one process instance at once (User Guide, "The Job Executor",
// "Exclusive Jobs"), and neither does ExecuteJob: it waits
// while another job of the instance holds the key, and when its context
// ends first, it says who holds the key and gives the job its due date back.
func TestExecuteJobRespectsExclusivity(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	engine := execEngine(t)
	rec := recordtest.NewRecorder()
	client := newExecClient(t, engine, rec)
	holder, err := client.Insert(ctx, execArgs{Instance: "exec-x", Block: true}, nil)
	require.NoError(t, err)
	recordtest.WaitStarted(t, rec, holder.Job.ID)
	inHour := time.Now().Add(time.Hour).UTC().Truncate(time.Microsecond)
	later, err := client.Insert(ctx, execArgs{Instance: "exec-x"}, &river.InsertOpts{ScheduledAt: inHour})
	require.NoError(t, err)

	short, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	_, err = engine.ExecuteJob(short, later.Job.ID)
	require.ErrorIs(t, err, workflow.ErrJobNotStarted)
	require.ErrorContains(t, err, `exclusive key "exec-x" is held by job`)
	require.Empty(t, rec.StartsOf(later.Job.ID))
	back, err := client.JobGet(ctx, later.Job.ID)
	require.NoError(t, err)
	require.Equal(t, rivertype.JobStateScheduled, back.State, "its due date back")
	require.Equal(t, inHour, back.ScheduledAt.UTC())

	done := make(chan *workflow.JobExecution, 1)
	go func() {
		c, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		out, err := engine.ExecuteJob(c, later.Job.ID)
		if err != nil {
			t.Error(err)
		}
		done <- out
	}()
	time.Sleep(500 * time.Millisecond)
	require.Empty(t, rec.StartsOf(later.Job.ID), "waits while the key is held")
	rec.Release(holder.Job.ID, nil)
	out := <-done
	require.Equal(t, "completed", out.Outcome)
	holderEnd := rec.EndsOf(holder.Job.ID)[0]
	require.False(t, rec.StartsOf(later.Job.ID)[0].Before(holderEnd), "ran after the holder ended")
}
