package job_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdbtest"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/incident"
	"github.com/riverbpmn/riverbpmn/job"
	"github.com/riverbpmn/riverbpmn/riverbpmntest"
	"github.com/riverbpmn/riverbpmn/search"
	"github.com/riverbpmn/riverbpmn/workflow"
)

// shipArgs is a job of activity "ship" of process "order" in instance
// Instance.
type shipArgs struct {
	Instance string `json:"instance"`
}

func (shipArgs) Kind() string { return "job_test_ship" }

func (a shipArgs) JobContext() workflow.JobContext {
	return workflow.JobContext{ProcessDefinitionKey: "order", ProcessInstanceID: a.Instance, ActivityID: "ship"}
}

func TestJobs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	type testBundle struct {
		*riverbpmntest.Bundle
		jobs *job.Jobs
	}

	setup := func(t *testing.T) *testBundle {
		t.Helper()
		schema := riverdbtest.TestSchema(ctx, t, riverbpmntest.Driver(t), nil)
		bundle := riverbpmntest.New(ctx, t, schema, &riverbpmntest.Opts{Config: &workflow.Config{
			ProcessDefinitions: []workflow.ProcessDefinition{{Key: "order"}},
			JobDefinitions: []workflow.JobDefinition{
				{ID: "ship-async", ProcessDefinitionKey: "order", ActivityID: "ship", Kind: "job_test_ship", RetryCycle: "R2/PT1M"},
			},
		}})
		return &testBundle{Bundle: bundle, jobs: bundle.Engine.Jobs()}
	}

	// insert inserts a job of instance scheduled an hour ahead (so that no
	// client takes it).
	insert := func(t *testing.T, bundle *testBundle, instance string) *rivertype.JobRow {
		t.Helper()
		res, err := bundle.Client.Insert(ctx, shipArgs{Instance: instance}, &river.InsertOpts{ScheduledAt: time.Now().Add(time.Hour)})
		require.NoError(t, err)
		return res.Job
	}

	// Walking the pages lists every selected job once, newest first; Next
	// is empty exactly on the last page, and Count counts what List walks.
	t.Run("ListAndCount", func(t *testing.T) {
		t.Parallel()
		bundle := setup(t)
		var ids []int64
		for i := range 5 {
			ids = append(ids, insert(t, bundle, fmt.Sprintf("order-%d", i)).ID)
		}
		insert(t, bundle, "invoice-1")

		filter := search.Filter{InstancePrefix: "order-"}
		var listed []int64
		params := &job.ListParams{Filter: filter, Limit: 2}
		for pages := 1; ; pages++ {
			require.LessOrEqual(t, pages, 3)
			res, err := bundle.jobs.List(ctx, params)
			require.NoError(t, err)
			require.NotEmpty(t, res.Items, "a Next never leads to an empty page")
			for _, j := range res.Items {
				listed = append(listed, j.ID)
			}
			if res.Next == "" {
				break
			}
			params.After = res.Next
		}
		require.Equal(t, []int64{ids[4], ids[3], ids[2], ids[1], ids[0]}, listed)

		n, err := bundle.jobs.Count(ctx, &filter)
		require.NoError(t, err)
		require.EqualValues(t, 5, n)
		all, err := bundle.jobs.List(ctx, nil)
		require.NoError(t, err)
		require.Len(t, all.Items, 6)
		require.Empty(t, all.Next)

		_, err = bundle.jobs.List(ctx, &job.ListParams{After: "later"})
		require.ErrorContains(t, err, `job: ListParams.After "later"`)
		_, err = bundle.jobs.List(ctx, &job.ListParams{Limit: -1})
		require.ErrorContains(t, err, "job: ListParams.Limit")
	})

	// SetRetries with 0 discards a waiting job and opens its incident; with
	// n > 0 it revives the discarded job (available, n executions left) and
	// resolves the incident. The bad calls are refused naming the job.
	t.Run("SetRetries", func(t *testing.T) {
		t.Parallel()
		bundle := setup(t)
		row := insert(t, bundle, "order-r")

		require.NoError(t, bundle.jobs.SetRetries(ctx, row.ID, 0))
		got, err := bundle.Client.JobGet(ctx, row.ID)
		require.NoError(t, err)
		require.Equal(t, rivertype.JobStateDiscarded, got.State)
		open, err := bundle.Engine.Incidents().List(ctx, &incident.ListParams{Filter: incident.Filter{JobID: row.ID}})
		require.NoError(t, err)
		require.Len(t, open.Items, 1)
		require.NoError(t, bundle.jobs.SetRetries(ctx, row.ID, 0), "0 on a discarded job: nothing to do")

		require.NoError(t, bundle.jobs.SetRetries(ctx, row.ID, 3))
		got, err = bundle.Client.JobGet(ctx, row.ID)
		require.NoError(t, err)
		require.Equal(t, rivertype.JobStateAvailable, got.State)
		require.Equal(t, got.Attempt+3, got.MaxAttempts)
		open, err = bundle.Engine.Incidents().List(ctx, &incident.ListParams{Filter: incident.Filter{JobID: row.ID}})
		require.NoError(t, err)
		require.Empty(t, open.Items, "resolved when the job was revived")

		err = bundle.jobs.SetRetries(ctx, 987654321, 1)
		require.ErrorIs(t, err, job.ErrNotFound)
		require.EqualError(t, err, "job: job 987654321: not found")
		require.ErrorIs(t, bundle.Engine.SetJobRetries(ctx, 987654321, 1), workflow.ErrNotFound, "the deprecated forward keeps its error")
		require.EqualError(t, bundle.jobs.SetRetries(ctx, row.ID, -2), fmt.Sprintf("job: setting retries of job %d: n -2 is negative; retries must be >= 0", row.ID))
		require.ErrorContains(t, bundle.jobs.SetRetries(ctx, row.ID, job.MaxAttemptsUnbounded+1), "n 32768 is too large")
	})

	// SetPriority sets one job's priority whatever its state; Status reads
	// the job's status; an unknown id is ErrNotFound for both.
	t.Run("SetPriorityAndStatus", func(t *testing.T) {
		t.Parallel()
		bundle := setup(t)
		row := insert(t, bundle, "order-p")
		require.NoError(t, bundle.jobs.SetPriority(ctx, row.ID, 7))
		got, err := bundle.Client.JobGet(ctx, row.ID)
		require.NoError(t, err)
		jc, err := workflow.JobContextOf(got)
		require.NoError(t, err)
		require.NotNil(t, jc.Priority)
		require.EqualValues(t, 7, *jc.Priority)

		st, err := bundle.jobs.Status(ctx, row.ID)
		require.NoError(t, err)
		require.Equal(t, row.ID, st.JobID)
		require.Equal(t, "order-p", st.ProcessInstanceID)

		require.ErrorIs(t, bundle.jobs.SetPriority(ctx, 987654321, 1), job.ErrNotFound)
		_, err = bundle.jobs.Status(ctx, 987654321)
		require.ErrorIs(t, err, job.ErrNotFound)
	})
}
