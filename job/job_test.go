package job_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
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

// TestJobsNeverTwoIncidents discards and revives jobs from many goroutines
// at once, through every path (SetRetries, River's JobRetry, a raw
// UPDATE), and checks that a job never has two open incidents, that an
// incident is open exactly while its job is discarded, and that one job's
// incidents never overlap in time; the unique index stands behind the
// trigger, and deleting a discarded job resolves its incident.
func TestJobsNeverTwoIncidents(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	schema := riverdbtest.TestSchema(ctx, t, riverbpmntest.Driver(t), nil)
	bundle := riverbpmntest.New(ctx, t, schema, &riverbpmntest.Opts{Config: &workflow.Config{
		ProcessDefinitions: []workflow.ProcessDefinition{{Key: "order"}},
		JobDefinitions: []workflow.JobDefinition{
			{ID: "ship-async", ProcessDefinitionKey: "order", ActivityID: "ship", Kind: "job_test_ship", RetryCycle: "R2/PT1M"},
		},
	}})
	jobs := bundle.Engine.Jobs()
	discardSQL := fmt.Sprintf(`UPDATE %s.river_job SET state = 'discarded', finalized_at = now() WHERE id = $1`, pgx.Identifier{schema}.Sanitize())

	const jobCount = 3
	var jobIDs []int64
	for i := range jobCount {
		res, err := bundle.Client.Insert(ctx, shipArgs{Instance: fmt.Sprintf("pi-%d", i)}, &river.InsertOpts{ScheduledAt: time.Now().Add(time.Hour)})
		require.NoError(t, err)
		jobIDs = append(jobIDs, res.Job.ID)
	}

	const goroutines, operations = 8, 60
	var wg sync.WaitGroup
	errs := make(chan error, goroutines*operations)
	for g := range goroutines {
		wg.Go(func() {
			for i := range operations {
				jobID := jobIDs[(g+i)%jobCount]
				var err error
				switch (g + i) % 4 {
				case 0:
					err = jobs.SetRetries(ctx, jobID, 0)
				case 1:
					err = jobs.SetRetries(ctx, jobID, 2)
				case 2:
					_, err = bundle.DBPool.Exec(ctx, discardSQL, jobID) // discards even a discarded job again
				case 3:
					_, err = bundle.Client.JobRetry(ctx, jobID)
				}
				if err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}

	incidentsOf := func(jobID int64) []*incident.Incident {
		res, err := bundle.Engine.Incidents().List(ctx, &incident.ListParams{Filter: incident.Filter{JobID: jobID, Resolved: true}, Oldest: true, Limit: 1000})
		require.NoError(t, err)
		require.Empty(t, res.Next)
		return res.Items
	}
	for _, jobID := range jobIDs {
		job, err := bundle.Client.JobGet(ctx, jobID)
		require.NoError(t, err)
		incidents := incidentsOf(jobID)
		require.NotEmpty(t, incidents)
		open := 0
		for i, in := range incidents {
			if in.ResolvedAt == nil {
				open++
				require.Equal(t, len(incidents)-1, i, "only the newest incident can be open")
			}
			if i > 0 {
				previous := incidents[i-1]
				require.NotNil(t, previous.ResolvedAt)
				require.False(t, in.CreatedAt.Before(*previous.ResolvedAt), "incidents of one job never overlap")
			}
		}
		if job.State == rivertype.JobStateDiscarded {
			require.Equal(t, 1, open, "job %d is discarded", jobID)
		} else {
			require.Zero(t, open, "job %d is %s", jobID, job.State)
		}
	}

	_, err := bundle.DBPool.Exec(ctx, fmt.Sprintf(`INSERT INTO %s.river_bpmn_incident (job_id) VALUES ($1), ($1)`, pgx.Identifier{schema}.Sanitize()), int64(424242))
	var pgErr *pgconn.PgError
	require.ErrorAs(t, err, &pgErr)
	require.Equal(t, "23505", pgErr.Code, "the unique index stands behind the trigger")

	_, err = bundle.DBPool.Exec(ctx, discardSQL, jobIDs[0])
	require.NoError(t, err)
	_, err = bundle.Client.JobDelete(ctx, jobIDs[0])
	require.NoError(t, err)
	incidents := incidentsOf(jobIDs[0])
	require.NotNil(t, incidents[len(incidents)-1].ResolvedAt, "deleting a discarded job resolves its incident")
}

// blockingWorker reports each job it starts on started and returns when
// release is closed.
type blockingWorker struct {
	river.WorkerDefaults[shipArgs]
	started chan int64
	release chan struct{}
}

func (w *blockingWorker) Work(ctx context.Context, job *river.Job[shipArgs]) error {
	w.started <- job.ID
	<-w.release
	return nil
}

// TestJobsSetRetriesOfARunningJob: the retries of a running job are not
// set (River decides the outcome of the execution under way from the values
// it fetched), nor those of a completed one; both errors name the job.
func TestJobsSetRetriesOfARunningJob(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	worker := &blockingWorker{started: make(chan int64, 1), release: make(chan struct{})}
	workers := river.NewWorkers()
	river.AddWorker(workers, worker)
	schema := riverdbtest.TestSchema(ctx, t, riverbpmntest.Driver(t), nil)
	bundle := riverbpmntest.New(ctx, t, schema, &riverbpmntest.Opts{
		Config: &workflow.Config{
			ProcessDefinitions: []workflow.ProcessDefinition{{Key: "order"}},
			JobDefinitions: []workflow.JobDefinition{
				{ID: "ship-async", ProcessDefinitionKey: "order", ActivityID: "ship", Kind: "job_test_ship", RetryCycle: "R2/PT1M"},
			},
		},
		ClientConfig: &river.Config{
			FetchCooldown:     20 * time.Millisecond,
			FetchPollInterval: 50 * time.Millisecond,
			Queues:            map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 1}},
			Workers:           workers,
		},
	})
	completed, cancel := bundle.Client.Subscribe(river.EventKindJobCompleted)
	defer cancel()
	require.NoError(t, bundle.Client.Start(ctx))

	res, err := bundle.Client.Insert(ctx, shipArgs{Instance: "pi-r"}, nil)
	require.NoError(t, err)
	released := false
	defer func() {
		if !released {
			close(worker.release)
		}
	}()
	require.Equal(t, res.Job.ID, <-worker.started)
	err = bundle.Engine.Jobs().SetRetries(ctx, res.Job.ID, 3)
	require.ErrorContains(t, err, fmt.Sprintf("job: job %d is running", res.Job.ID))
	close(worker.release)
	released = true
	event := <-completed
	require.Equal(t, res.Job.ID, event.Job.ID)
	require.Equal(t, 2, event.Job.MaxAttempts, "unchanged")

	err = bundle.Engine.Jobs().SetRetries(ctx, res.Job.ID, 3)
	require.EqualError(t, err, fmt.Sprintf("job: job %d is completed: only unfinished and discarded jobs have retries", res.Job.ID))
}
