package lifecycle_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/hold"
	"github.com/riverbpmn/riverbpmn/lifecycle"
	"github.com/riverbpmn/riverbpmn/workflow"
)

func TestQueueByIDs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := setup(t)

	a := f.insert(t, lcArgs{Name: "a"}, lifecycle.Opts{Pending: true})
	b := f.insert(t, lcArgs{Name: "b", Instance: "pi-1"}, lifecycle.Opts{Pending: true})
	later := time.Now().Add(time.Hour)
	c, err := f.client.Insert(ctx, lcArgs{Name: "c"}, insertOptsScheduled(t, later))
	require.NoError(t, err)
	plain := f.insert(t, lcArgs{Name: "plain"}, lifecycle.Opts{})

	require.Equal(t, rivertype.JobStatePending, a.State)
	require.Equal(t, []hold.Reason{lifecycle.Pending}, f.reasons(t, a.ID))
	require.Equal(t, []hold.Reason{lifecycle.Pending}, f.reasons(t, b.ID))
	require.Equal(t, []hold.Reason{lifecycle.Pending}, f.reasons(t, c.Job.ID))
	require.Equal(t, rivertype.JobStateAvailable, plain.State)

	// An unknown id: nothing is queued, the error names it.
	_, err = f.engine.Lifecycle().Queue(ctx, a.ID, 987654321)
	require.ErrorIs(t, err, workflow.ErrNotFound)
	require.ErrorContains(t, err, "987654321")
	require.Equal(t, []hold.Reason{lifecycle.Pending}, f.reasons(t, a.ID))

	results, err := f.engine.Lifecycle().Queue(ctx, plain.ID, c.Job.ID, b.ID, a.ID, a.ID)
	require.NoError(t, err)
	require.Equal(t, []lifecycle.QueueResult{
		{JobID: a.ID, Outcome: lifecycle.Queued, State: rivertype.JobStateAvailable},
		{JobID: b.ID, Outcome: lifecycle.Queued, State: rivertype.JobStateAvailable},
		{JobID: c.Job.ID, Outcome: lifecycle.Queued, State: rivertype.JobStateScheduled},
		{JobID: plain.ID, Outcome: lifecycle.NotPending, State: rivertype.JobStateAvailable},
	}, results)
	require.Nil(t, f.reasons(t, a.ID))
	require.WithinDuration(t, later, f.job(t, c.Job.ID).ScheduledAt, time.Millisecond)

	// Queuing again is a no-op.
	results, err = f.engine.Lifecycle().Queue(ctx, a.ID)
	require.NoError(t, err)
	require.Equal(t, lifecycle.NotPending, results[0].Outcome)
}

func insertOptsScheduled(t *testing.T, at time.Time) *river.InsertOpts {
	t.Helper()
	opts, err := lifecycle.Opts{Pending: true}.Apply(&river.InsertOpts{ScheduledAt: at})
	require.NoError(t, err)
	return opts
}

// River's own InsertOpts.Pending: not held; Queue makes it available.
func TestQueueRiverPending(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := setup(t)
	res, err := f.client.Insert(ctx, lcArgs{Name: "river"}, &river.InsertOpts{Pending: true})
	require.NoError(t, err)
	require.Equal(t, rivertype.JobStatePending, res.Job.State)
	require.Nil(t, f.reasons(t, res.Job.ID))
	results, err := f.engine.Lifecycle().Queue(ctx, res.Job.ID)
	require.NoError(t, err)
	require.Equal(t, []lifecycle.QueueResult{{JobID: res.Job.ID, Outcome: lifecycle.Queued, State: rivertype.JobStateAvailable}}, results)
}

// One reason never releases another: pending and suspended, in both orders.
func TestQueueInterleavesWithSuspension(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := setup(t)

	// Pending, then suspended; queue (still held), then activate (runs).
	a := f.insert(t, lcArgs{Name: "a", Instance: "pi-a"}, lifecycle.Opts{Pending: true})
	_, err := f.engine.SuspendProcessInstance(ctx, "pi-a")
	require.NoError(t, err)
	require.Equal(t, []hold.Reason{lifecycle.Pending, hold.Suspended}, f.reasons(t, a.ID))
	results, err := f.engine.Lifecycle().Queue(ctx, a.ID)
	require.NoError(t, err)
	require.Equal(t, lifecycle.StillHeld, results[0].Outcome)
	require.Equal(t, []hold.Reason{hold.Suspended}, f.reasons(t, a.ID))
	_, err = f.engine.ActivateProcessInstance(ctx, "pi-a")
	require.NoError(t, err)
	require.Equal(t, rivertype.JobStateAvailable, f.job(t, a.ID).State)

	// Suspended first (inserted into a suspended instance), then activated:
	// still pending until queued.
	_, err = f.engine.SuspendProcessInstance(ctx, "pi-a")
	require.NoError(t, err)
	b := f.insert(t, lcArgs{Name: "b", Instance: "pi-a"}, lifecycle.Opts{Pending: true})
	require.Equal(t, []hold.Reason{lifecycle.Pending, hold.Suspended}, f.reasons(t, b.ID))
	_, err = f.engine.ActivateProcessInstance(ctx, "pi-a")
	require.NoError(t, err)
	require.Equal(t, []hold.Reason{lifecycle.Pending}, f.reasons(t, b.ID))
	results, err = f.engine.Lifecycle().Queue(ctx, b.ID)
	require.NoError(t, err)
	require.Equal(t, lifecycle.Queued, results[0].Outcome)
	require.Equal(t, rivertype.JobStateAvailable, f.job(t, b.ID).State)

	// River's own pending job, suspended: queuing it makes the activation
	// release it to available instead of back to pending.
	res, err := f.client.Insert(ctx, lcArgs{Name: "c", Instance: "pi-c"},
		&river.InsertOpts{Pending: true, Metadata: workflow.JobContext{ProcessDefinitionKey: "lc_process", ProcessInstanceID: "pi-c"}.InsertOpts().Metadata})
	require.NoError(t, err)
	_, err = f.engine.SuspendProcessInstance(ctx, "pi-c")
	require.NoError(t, err)
	require.Equal(t, []hold.Reason{hold.Suspended}, f.reasons(t, res.Job.ID))
	results, err = f.engine.Lifecycle().Queue(ctx, res.Job.ID)
	require.NoError(t, err)
	require.Equal(t, lifecycle.StillHeld, results[0].Outcome)
	_, err = f.engine.ActivateProcessInstance(ctx, "pi-c")
	require.NoError(t, err)
	require.Equal(t, rivertype.JobStateAvailable, f.job(t, res.Job.ID).State)
}

func TestQueueProcessInstance(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := setup(t)
	p1 := f.insert(t, lcArgs{Name: "1", Instance: "pi-q"}, lifecycle.Opts{Pending: true})
	p2 := f.insert(t, lcArgs{Name: "2", Instance: "pi-q"}, lifecycle.Opts{Pending: true})
	other := f.insert(t, lcArgs{Name: "3", Instance: "pi-other"}, lifecycle.Opts{Pending: true})

	_, err := f.engine.Lifecycle().QueueProcessInstance(ctx, "pi-missing")
	require.ErrorIs(t, err, workflow.ErrNotFound)
	require.ErrorContains(t, err, "pi-missing")

	results, err := f.engine.Lifecycle().QueueProcessInstance(ctx, "pi-q")
	require.NoError(t, err)
	require.Len(t, results, 2)
	for i, id := range []int64{p1.ID, p2.ID} {
		require.Equal(t, lifecycle.QueueResult{JobID: id, Outcome: lifecycle.Queued, State: rivertype.JobStateAvailable}, results[i])
	}
	require.Equal(t, []hold.Reason{lifecycle.Pending}, f.reasons(t, other.ID))
	results, err = f.engine.Lifecycle().QueueProcessInstance(ctx, "pi-q")
	require.NoError(t, err)
	require.Empty(t, results)
}

// A pending job never runs; once queued it starts without waiting for a
// poll (the release wakes the queue's producer).
func TestPendingJobRunsOnceQueued(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := setup(t)
	started := make(chan time.Time, 10)
	workers := river.NewWorkers()
	river.AddWorker(workers, river.WorkFunc(func(ctx context.Context, job *river.Job[lcArgs]) error {
		started <- time.Now()
		return nil
	}))
	config, err := f.engine.ClientConfig(&river.Config{
		Schema: f.schema, Workers: workers, FetchPollInterval: 10 * time.Second, FetchCooldown: 50 * time.Millisecond,
		Queues: map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 2}},
	})
	require.NoError(t, err)
	client, err := river.NewClient(f.engine.Driver(), config)
	require.NoError(t, err)
	require.NoError(t, client.Start(ctx))
	t.Cleanup(func() { _ = client.Stop(context.Background()) })

	job := f.insert(t, lcArgs{Name: "p"}, lifecycle.Opts{Pending: true})
	select {
	case <-started:
		t.Fatal("a pending job ran")
	case <-time.After(500 * time.Millisecond):
	}
	queuedAt := time.Now()
	_, err = f.engine.Lifecycle().Queue(ctx, job.ID)
	require.NoError(t, err)
	select {
	case at := <-started:
		require.Less(t, at.Sub(queuedAt), 5*time.Second, "woken, not polled (poll interval 10 s)")
	case <-time.After(9 * time.Second):
		t.Fatal("the queued job did not start before the poll interval")
	}
}

func TestOptsValidation(t *testing.T) {
	t.Parallel()
	_, err := lifecycle.Opts{DependsOn: []int64{0}}.Apply(nil)
	require.ErrorContains(t, err, "depends_on: 0")
	_, err = lifecycle.Opts{}.AddToMetadata([]byte(`[1]`))
	require.Error(t, err)

	// Bad data straight into metadata is an insert error naming the field.
	ctx := context.Background()
	f := setup(t)
	_, err = f.client.Insert(ctx, lcArgs{}, &river.InsertOpts{Metadata: []byte(`{"bpmn_lifecycle": {"pending": "yes"}}`)})
	require.ErrorContains(t, err, "bpmn_lifecycle.pending")
	_, err = f.client.Insert(ctx, lcArgs{}, &river.InsertOpts{Metadata: []byte(`{"bpmn_lifecycle": {"expires_at": "soon"}}`)})
	require.ErrorContains(t, err, "bpmn_lifecycle.expires_at")
	_, err = f.client.Insert(ctx, lcArgs{}, &river.InsertOpts{Metadata: []byte(`{"bpmn_lifecycle": {"depends_on": ["x"]}}`)})
	require.ErrorContains(t, err, "bpmn_lifecycle.depends_on")
	var target error = workflow.ErrNotFound
	require.False(t, errors.Is(err, target))
}
