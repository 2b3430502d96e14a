package jobcontrol_test

import (
	"context"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdbtest"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/internal/controltest"
	"github.com/riverbpmn/riverbpmn/internal/sqltemplate"
	"github.com/riverbpmn/riverbpmn/job"
	"github.com/riverbpmn/riverbpmn/jobcontrol"
	"github.com/riverbpmn/riverbpmn/riverbpmntest"
)

// testBundle is what setup gives a stop test: an engine and a client of
// control jobs (package controltest), not started, on a fresh test schema.
type testBundle struct {
	*riverbpmntest.Bundle

	worker *controltest.Worker
}

func setup(t *testing.T) *testBundle {
	t.Helper()
	ctx := context.Background()
	schema := riverdbtest.TestSchema(ctx, t, riverbpmntest.Driver(t), nil)
	worker := controltest.NewWorker()
	b := riverbpmntest.New(ctx, t, schema, &riverbpmntest.Opts{ClientConfig: controltest.ClientConfig(worker)})
	return &testBundle{Bundle: b, worker: worker}
}

// openIncidents counts the open incidents of job id.
func openIncidents(ctx context.Context, t *testing.T, bundle *testBundle, id int64) int {
	t.Helper()
	var n int
	require.NoError(t, bundle.DBPool.QueryRow(ctx,
		sqltemplate.Render("SELECT count(*) FROM /* TEMPLATE: schema */river_bpmn_incident WHERE job_id = $1", bundle.Schema), id).Scan(&n))
	return n
}

// TestStopJob: a stop request (REGARDS' stopJob) aborts a job waiting to
// run at once, so it never starts; a running job's context is cancelled by
// the client running it and the job ends ABORTED whatever its work returns,
// opening no incident; a finished job is left as it is, and the result says
// so. Asking again is harmless; a process instance's jobs stop in one call.
func TestStopJob(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("WaitingJobNeverStarts", func(t *testing.T) {
		bundle := setup(t)
		engine, worker, client := bundle.Engine, bundle.worker, bundle.Client
		res, err := client.Insert(ctx, controltest.Args{}, nil)
		require.NoError(t, err)

		stop, err := engine.Jobs().Stop(ctx, res.Job.ID)
		require.NoError(t, err)
		require.Equal(t, jobcontrol.StopResult{JobID: res.Job.ID, State: "available", Outcome: jobcontrol.StopAborted}, *stop)
		st, err := engine.Jobs().Status(ctx, res.Job.ID)
		require.NoError(t, err)
		require.Equal(t, jobcontrol.Aborted, st.Status)
		require.Equal(t, "cancelled", st.State)

		// Idempotent: asked again, the job is left as it is and the call says so.
		stop, err = engine.Jobs().Stop(ctx, res.Job.ID)
		require.NoError(t, err)
		require.Equal(t, jobcontrol.StopAlreadyFinished, stop.Outcome)

		// A client started afterwards never runs it.
		other, err := client.Insert(ctx, controltest.Args{}, nil)
		require.NoError(t, err)
		require.NoError(t, client.Start(ctx))
		controltest.WaitJobState(ctx, t, engine.Jobs().Status, other.Job.ID, rivertype.JobStateCompleted)
		require.Zero(t, worker.Runs(res.Job.ID))
	})

	t.Run("RunningJob", func(t *testing.T) {
		bundle := setup(t)
		engine, worker, client := bundle.Engine, bundle.worker, bundle.Client
		require.NoError(t, client.Start(ctx))

		for _, tc := range []struct {
			name string
			args controltest.Args
			opts *river.InsertOpts
		}{
			{"ReturnsContextError", controltest.Args{Block: true}, nil},
			{"LastAttempt", controltest.Args{Block: true, Once: true}, nil},
			{"IgnoresStop", controltest.Args{Block: true, IgnoreStop: true}, nil},
		} {
			t.Run(tc.name, func(t *testing.T) {
				res, err := client.Insert(ctx, tc.args, tc.opts)
				require.NoError(t, err)
				controltest.WaitJobState(ctx, t, engine.Jobs().Status, res.Job.ID, rivertype.JobStateRunning)

				stop, err := engine.Jobs().Stop(ctx, res.Job.ID)
				require.NoError(t, err)
				require.Equal(t, jobcontrol.StopRequested, stop.Outcome)

				st := controltest.WaitJobState(ctx, t, engine.Jobs().Status, res.Job.ID, rivertype.JobStateCancelled)
				require.Equal(t, jobcontrol.Aborted, st.Status)
				require.True(t, st.StopRequested)
				require.Zero(t, openIncidents(ctx, t, bundle, res.Job.ID), "an aborted job opens no incident")
				require.Equal(t, 1, worker.Runs(res.Job.ID))
			})
		}
	})

	t.Run("FinishedJobLeftAsIs", func(t *testing.T) {
		bundle := setup(t)
		engine, client := bundle.Engine, bundle.Client
		require.NoError(t, client.Start(ctx))
		res, err := client.Insert(ctx, controltest.Args{}, nil)
		require.NoError(t, err)
		controltest.WaitJobState(ctx, t, engine.Jobs().Status, res.Job.ID, rivertype.JobStateCompleted)

		stop, err := engine.Jobs().Stop(ctx, res.Job.ID)
		require.NoError(t, err)
		require.Equal(t, jobcontrol.StopResult{JobID: res.Job.ID, State: "completed", Outcome: jobcontrol.StopAlreadyFinished}, *stop)
		st, err := engine.Jobs().Status(ctx, res.Job.ID)
		require.NoError(t, err)
		require.Equal(t, jobcontrol.Succeeded, st.Status)
		require.False(t, st.StopRequested)
	})

	t.Run("ProcessInstance", func(t *testing.T) {
		bundle := setup(t)
		engine, client := bundle.Engine, bundle.Client
		require.NoError(t, client.Start(ctx))

		done, err := client.Insert(ctx, controltest.Args{Instance: "pi-1"}, nil)
		require.NoError(t, err)
		controltest.WaitJobState(ctx, t, engine.Jobs().Status, done.Job.ID, rivertype.JobStateCompleted)
		running, err := client.Insert(ctx, controltest.Args{Instance: "pi-1", Block: true}, nil)
		require.NoError(t, err)
		controltest.WaitJobState(ctx, t, engine.Jobs().Status, running.Job.ID, rivertype.JobStateRunning)
		waiting, err := client.Insert(ctx, controltest.Args{Instance: "pi-1"}, &river.InsertOpts{ScheduledAt: time.Now().Add(time.Hour)})
		require.NoError(t, err)
		otherInstance, err := client.Insert(ctx, controltest.Args{Instance: "pi-2"}, &river.InsertOpts{ScheduledAt: time.Now().Add(time.Hour)})
		require.NoError(t, err)

		results, err := engine.Jobs().StopProcessInstance(ctx, "pi-1")
		require.NoError(t, err)
		require.Equal(t, []jobcontrol.StopResult{
			{JobID: done.Job.ID, State: "completed", Outcome: jobcontrol.StopAlreadyFinished},
			{JobID: running.Job.ID, State: "running", Outcome: jobcontrol.StopRequested},
			{JobID: waiting.Job.ID, State: "scheduled", Outcome: jobcontrol.StopAborted},
		}, results)
		controltest.WaitJobState(ctx, t, engine.Jobs().Status, running.Job.ID, rivertype.JobStateCancelled)

		statuses, err := engine.ProcessInstanceStatus(ctx, "pi-1")
		require.NoError(t, err)
		got := map[int64]jobcontrol.Status{}
		for _, st := range statuses {
			got[st.JobID] = st.Status
		}
		require.Equal(t, map[int64]jobcontrol.Status{
			done.Job.ID: jobcontrol.Succeeded, running.Job.ID: jobcontrol.Aborted, waiting.Job.ID: jobcontrol.Aborted,
		}, got)
		st, err := engine.Jobs().Status(ctx, otherInstance.Job.ID)
		require.NoError(t, err)
		require.Equal(t, jobcontrol.Queued, st.Status, "another instance's job is untouched")
	})

	t.Run("UnknownJob", func(t *testing.T) {
		engine := setup(t).Engine
		_, err := engine.Jobs().Stop(ctx, 987654321)
		require.ErrorIs(t, err, job.ErrNotFound)
		_, err = engine.Jobs().Status(ctx, 987654321)
		require.ErrorIs(t, err, job.ErrNotFound)
		_, err = engine.Jobs().StopProcessInstance(ctx, "")
		require.ErrorContains(t, err, "process_instance_id")
	})
}
