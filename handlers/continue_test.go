package handlers_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/handlers"
	"github.com/riverbpmn/riverbpmn/workflow"
)

type stepArgs struct {
	Step int `json:"step"`
}

func (stepArgs) Kind() string { return "step" }

type stepWorker struct {
	river.WorkerDefaults[stepArgs]

	s *testSetup
}

func (w *stepWorker) Work(ctx context.Context, job *river.Job[stepArgs]) error {
	if job.Args.Step == 3 {
		return nil
	}
	tx, err := w.s.pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback(ctx) }()
	next := stepArgs{Step: job.Args.Step + 1}
	if _, err := handlers.ContinueTx(ctx, tx, job, next, handlers.Step{ActivityID: "step-" + string(rune('0'+next.Step))}); err != nil {
		return err
	}
	if job.Args.Step == 10 {
		return errors.New("crash before commit") // tx rolls back: no step 11, job not completed
	}
	return tx.Commit(ctx)
}

// A three-step process chained with ContinueTx: each step inserts the next
// in its completing transaction, carrying the process instance forward.
func TestContinueTxChainsSteps(t *testing.T) {
	ctx := context.Background()
	s := newTestSetup(t, nil)
	workers := river.NewWorkers()
	river.AddWorker(workers, &stepWorker{s: s})
	client, err := river.NewClient(s.engine.Driver(), &river.Config{
		Schema:     s.schema,
		Middleware: []rivertype.Middleware{s.engine.Middleware()},
		Queues:     map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 2}},
		Workers:    workers,
	})
	require.NoError(t, err)
	completed, unsubscribe := client.Subscribe(river.EventKindJobCompleted, river.EventKindJobFailed)
	defer unsubscribe()
	require.NoError(t, client.Start(ctx))
	defer func() { require.NoError(t, client.Stop(ctx)) }()

	jc := workflow.JobContext{ProcessInstanceID: "pi-7", RootProcessInstanceID: "root-7", ProcessDefinitionKey: "three_steps",
		DeploymentID: "d1", ActivityID: "step-1", JobType: workflow.JobTypeAsync, RetryCycle: "R5/PT1S"}
	_, err = client.Insert(ctx, stepArgs{Step: 1}, jc.InsertOpts())
	require.NoError(t, err)

	once := jc
	once.RetryCycle = "R1/PT1S" // one execution
	failed, err := client.Insert(ctx, stepArgs{Step: 10}, &river.InsertOpts{Metadata: mustMetadata(t, once)})
	require.NoError(t, err)

	var jobs []*rivertype.JobRow
	for len(jobs) < 3 {
		select {
		case ev := <-completed:
			if ev.Job.ID == failed.Job.ID {
				require.Equal(t, river.EventKindJobFailed, ev.Kind)
				continue
			}
			require.Equal(t, river.EventKindJobCompleted, ev.Kind, "%v", ev.Job.Errors)
			jobs = append(jobs, ev.Job)
		case <-time.After(20 * time.Second):
			t.Fatalf("only %d of 3 steps completed", len(jobs))
		}
	}
	require.Eventually(t, func() bool {
		j, err := client.JobGet(ctx, failed.Job.ID)
		require.NoError(t, err)
		return j.State == rivertype.JobStateDiscarded
	}, 20*time.Second, 20*time.Millisecond)
	rows, err := client.JobList(ctx, river.NewJobListParams().Kinds("step").First(100))
	require.NoError(t, err)
	for _, j := range rows.Jobs {
		var a stepArgs
		require.NoError(t, json.Unmarshal(j.EncodedArgs, &a))
		require.NotEqual(t, 11, a.Step, "the rolled-back continuation left no next step")
	}

	for i, job := range jobs {
		got, err := workflow.JobContextOf(job)
		require.NoError(t, err)
		require.Equal(t, "pi-7", got.ProcessInstanceID)
		require.Equal(t, "root-7", got.RootProcessInstanceID)
		require.Equal(t, "three_steps", got.ProcessDefinitionKey)
		require.Equal(t, "d1", got.DeploymentID)
		require.Equal(t, "step-"+string(rune('1'+i)), got.ActivityID)
		require.Equal(t, workflow.JobTypeAsync, got.JobType)
		if i > 0 {
			require.Empty(t, got.RetryCycle, "the next activity's cycle is resolved afresh")
			require.True(t, job.CreatedAt.Before(*jobs[i-1].FinalizedAt) || job.CreatedAt.Equal(*jobs[i-1].FinalizedAt),
				"step %d was inserted by step %d's completing transaction", i+1, i)
		}
	}
}

func mustMetadata(t *testing.T, jc workflow.JobContext) []byte {
	t.Helper()
	m, err := jc.AddToMetadata(nil)
	require.NoError(t, err)
	return m
}
