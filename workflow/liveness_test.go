package workflow

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/exclusive"
	"github.com/riverbpmn/riverbpmn/liveness"
)

// TestLivenessOffIsStock: with Config.Liveness.Disabled the client's pilot
// is riverbpmn's plain pilot (no session, no extra connection, no
// statement), with exclusivity on or off; liveness is on by default, and
// off on an engine without a pool (whose clients cannot work jobs).
func TestLivenessOffIsStock(t *testing.T) {
	t.Parallel()
	for _, scope := range []exclusive.Scope{exclusive.None, exclusive.ProcessInstance} {
		engine, err := NewEngine(testPool(t), &Config{ExclusiveScope: scope, Liveness: liveness.Config{Disabled: true}})
		require.NoError(t, err)
		_, isPlain := engine.Driver().PluginPilot().(*pilot)
		require.True(t, isPlain, "scope %v", scope)
	}
	engine, err := NewEngine(testPool(t), &Config{})
	require.NoError(t, err)
	_, isLive := engine.Driver().PluginPilot().(*livenessPilot)
	require.True(t, isLive, "liveness is on by default")

	engine, err = NewEngine(nil, &Config{})
	require.NoError(t, err)
	_, isPlain := engine.Driver().PluginPilot().(*pilot)
	require.True(t, isPlain, "no pool, no liveness")
}

func TestLivenessConfigErrors(t *testing.T) {
	t.Parallel()
	_, err := NewEngine(testPool(t), &Config{Liveness: liveness.Config{PingInterval: 5 * time.Second}})
	require.ErrorContains(t, err, "workflow: Config.Liveness: liveness: Config.FenceAfter (2s) must exceed PingInterval (5s)")
	_, err = NewEngine(testPool(t), &Config{Liveness: liveness.Config{StallAfter: 2 * time.Second}})
	require.ErrorContains(t, err, "workflow: Config.Liveness: liveness: Config.StallAfter (2s) must exceed FenceAfter + PingInterval (2.5s)")
}

// TestLivenessNeedsMiddleware: a client with liveness refuses to start
// without the engine's middleware, which is what cancels its jobs when it
// loses its liveness.
func TestLivenessNeedsMiddleware(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	engine, schema := testEngineWithConfig(t, &Config{Liveness: liveness.Config{}})
	workers := river.NewWorkers()
	river.AddWorker(workers, &exclWorker{rec: newExclRecorder(exclusive.None)})
	client, err := river.NewClient(engine.Driver(), &river.Config{
		Logger:   slog.New(slog.DiscardHandler),
		Queues:   map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 1}},
		Schema:   schema,
		TestOnly: true,
		Workers:  workers,
	})
	require.NoError(t, err)
	err = client.Start(ctx)
	// The engine's wiring check (ErrClientNotWired) answers first; liveness
	// keeps its own check for clients that pass it some other way.
	require.ErrorIs(t, err, ErrClientNotWired)
}

// TestLivenessClientRestart: a client with liveness works jobs, stops
// cleanly (its session goes), and works again after a restart with a new
// session.
func TestLivenessClientRestart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	schema := exclSchema(t)
	rec := newExclRecorder(exclusive.ProcessInstance)
	node := newExclNode(t, schema, rec, exclNodeOpts{scope: exclusive.ProcessInstance, maxWorkers: 2, poolConns: 4, poll: 100 * time.Millisecond, cooldown: 10 * time.Millisecond, liveness: true})
	sessions := func() int {
		list, err := node.engine.ClientSessions(ctx)
		require.NoError(t, err)
		return len(list)
	}
	for round := range 2 {
		require.NoError(t, node.client.Start(ctx))
		require.Equal(t, 1, sessions(), "round %d: one session while it runs", round)
		insertExcl(ctx, t, node.client, []exclArgs{{Instance: "pi"}, {Instance: "pi"}})
		require.Eventually(t, func() bool { return rec.finishedCount.Load() == int64(2*(round+1)) }, 10*time.Second, 10*time.Millisecond)
		require.NoError(t, node.client.Stop(ctx))
		require.Zero(t, sessions(), "round %d: a clean stop deletes the session", round)
	}
}

// TestLivenessWithNewClient: a client built by NewClient (which adds the
// engine's middleware itself) opens its liveness session. ClientConfig used
// to add the middleware without marking it used, so such a client refused
// to start with "Config.Liveness needs the engine's middleware".
func TestLivenessWithNewClient(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	engine, schema := testEngineWithConfig(t, &Config{Liveness: liveness.Config{}})
	workers := river.NewWorkers()
	river.AddWorker(workers, &exclWorker{rec: newExclRecorder(exclusive.None)})
	client, err := NewClient(engine, &river.Config{
		Logger:  slog.New(slog.DiscardHandler),
		Queues:  map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 1}},
		Schema:  schema,
		Workers: workers,
	})
	require.NoError(t, err)
	require.NoError(t, client.Start(ctx))
	t.Cleanup(func() { _ = client.Stop(context.Background()) })
	require.Eventually(t, func() bool {
		sessions, err := engine.ClientSessions(ctx)
		require.NoError(t, err)
		return len(sessions) == 1 && sessions[0].Alive
	}, 10*time.Second, 20*time.Millisecond)
}
