package session_test

import (
	"context"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdbtest"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/riverbpmntest"
	"github.com/riverbpmn/riverbpmn/session"
)

type noopArgs struct{}

func (noopArgs) Kind() string { return "session_test_noop" }

type noopWorker struct {
	river.WorkerDefaults[noopArgs]
}

func (noopWorker) Work(context.Context, *river.Job[noopArgs]) error { return nil }

// TestSessions: a client that works jobs (liveness is on by default) opens
// a session that List shows alive, with Alive and without; once the client
// has stopped, no session is alive.
func TestSessions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	workers := river.NewWorkers()
	river.AddWorker(workers, &noopWorker{})
	schema := riverdbtest.TestSchema(ctx, t, riverbpmntest.Driver(t), nil)
	bundle := riverbpmntest.New(ctx, t, schema, &riverbpmntest.Opts{ClientConfig: &river.Config{
		Queues:  map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 1}},
		Workers: workers,
	}})
	sessions := bundle.Engine.Sessions()

	require.NoError(t, bundle.Client.Start(ctx))

	var (
		alive *session.ListResult
		err   error
	)
	require.Eventually(t, func() bool {
		alive, err = sessions.List(ctx, &session.ListParams{Alive: true})
		require.NoError(t, err)
		return len(alive.Items) > 0
	}, 10*time.Second, 20*time.Millisecond, "the started client's session")
	require.Len(t, alive.Items, 1)
	require.True(t, alive.Items[0].Alive)
	require.Empty(t, alive.Next)
	all, err := sessions.List(ctx, nil)
	require.NoError(t, err)
	require.Equal(t, alive.Items[0].ID, all.Items[len(all.Items)-1].ID, "the newest session, listed without Alive too")

	stopCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	require.NoError(t, bundle.Client.Stop(stopCtx))
	require.Eventually(t, func() bool {
		alive, err = sessions.List(ctx, &session.ListParams{Alive: true})
		require.NoError(t, err)
		return len(alive.Items) == 0
	}, 10*time.Second, 20*time.Millisecond, "no session alive once the client stopped")
	_, err = sessions.List(ctx, &session.ListParams{After: "x"})
	require.ErrorContains(t, err, `session: ListParams.After "x"`)
}
