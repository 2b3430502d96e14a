package queue_test

import (
	"context"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdbtest"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/queue"
	"github.com/riverbpmn/riverbpmn/riverbpmntest"
)

type noopArgs struct{}

func (noopArgs) Kind() string { return "queue_test_noop" }

type noopWorker struct {
	river.WorkerDefaults[noopArgs]
}

func (noopWorker) Work(context.Context, *river.Job[noopArgs]) error { return nil }

func TestQueues(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	type testBundle struct {
		*riverbpmntest.Bundle
		queues *queue.Queues
	}

	// setup starts a client working queue "default", which records it in
	// River's river_queue.
	setup := func(t *testing.T) *testBundle {
		t.Helper()
		workers := river.NewWorkers()
		river.AddWorker(workers, &noopWorker{})
		schema := riverdbtest.TestSchema(ctx, t, riverbpmntest.Driver(t), nil)
		bundle := riverbpmntest.New(ctx, t, schema, &riverbpmntest.Opts{ClientConfig: &river.Config{
			Queues:  map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 1}},
			Workers: workers,
		}})
		require.NoError(t, bundle.Client.Start(ctx))
		return &testBundle{Bundle: bundle, queues: bundle.Engine.Queues()}
	}

	// waitRecorded waits until River's producer has recorded the queue (it
	// does when it starts).
	waitRecorded := func(t *testing.T, bundle *testBundle, name string) *queue.State {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			st, err := bundle.queues.Get(ctx, name)
			require.NoError(t, err)
			if st.Recorded || time.Now().After(deadline) {
				return st
			}
			time.Sleep(20 * time.Millisecond)
		}
	}

	// A queue a client works is recorded and worked; a queue with jobs and
	// no record is listed too, unworked; List goes by name with a cursor,
	// and Next is empty exactly on the last page.
	t.Run("ListAndGet", func(t *testing.T) {
		t.Parallel()
		bundle := setup(t)
		st := waitRecorded(t, bundle, river.QueueDefault)
		require.True(t, st.Recorded)
		require.True(t, st.Worked)
		require.False(t, st.Paused)
		_, err := bundle.Client.Insert(ctx, noopArgs{}, &river.InsertOpts{Queue: "nobody", ScheduledAt: time.Now().Add(time.Hour)})
		require.NoError(t, err)

		first, err := bundle.queues.List(ctx, &queue.ListParams{Limit: 1})
		require.NoError(t, err)
		require.Len(t, first.Items, 1)
		require.Equal(t, river.QueueDefault, first.Items[0].Name)
		require.Equal(t, river.QueueDefault, first.Next)
		rest, err := bundle.queues.List(ctx, &queue.ListParams{Limit: 1, After: first.Next})
		require.NoError(t, err)
		require.Len(t, rest.Items, 1)
		require.Equal(t, "nobody", rest.Items[0].Name)
		require.False(t, rest.Items[0].Worked)
		require.EqualValues(t, 1, rest.Items[0].Waiting)
		require.Empty(t, rest.Next)

		unknown, err := bundle.queues.Get(ctx, "nobody")
		require.NoError(t, err)
		require.False(t, unknown.Recorded, "River has no record of a queue no client worked")
	})

	// Pause and Resume use River's own: the record says paused, then not.
	t.Run("PauseResume", func(t *testing.T) {
		t.Parallel()
		bundle := setup(t)
		waitRecorded(t, bundle, river.QueueDefault)
		require.NoError(t, bundle.queues.Pause(ctx, river.QueueDefault))
		st, err := bundle.queues.Get(ctx, river.QueueDefault)
		require.NoError(t, err)
		require.True(t, st.Paused)
		require.NoError(t, bundle.queues.Resume(ctx, river.QueueDefault))
		st, err = bundle.queues.Get(ctx, river.QueueDefault)
		require.NoError(t, err)
		require.False(t, st.Paused)

		require.ErrorContains(t, bundle.queues.Pause(ctx, ""), "queue: the queue name is empty")
		_, err = bundle.queues.List(ctx, &queue.ListParams{Limit: 5000})
		require.ErrorContains(t, err, "queue: ListParams.Limit")
	})
}
