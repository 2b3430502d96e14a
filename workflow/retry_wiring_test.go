package workflow

import (
	"bytes"
	"context"
	"log/slog"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"
)

// lockedBuffer is a log destination several goroutines write to.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

type retryWiringArgs struct{}

func (retryWiringArgs) Kind() string { return "retry_wiring" }

// TestRetryPolicyWiringCheckedAtStart: a client whose retries are decided by
// another policy than the engine's logs an error naming the fix when it
// starts; a client with the engine's policy, however it got it (NewClient,
// by hand, one policy shared by two clients), logs none. Either way the
// client starts.
func TestRetryPolicyWiringCheckedAtStart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	engine, schema := testEngine(t)

	// start builds a client that works jobs from config (completed with
	// what every case needs), starts it and returns what it logged.
	start := func(t *testing.T, build func(*river.Config) (*river.Client[pgx.Tx], error), config *river.Config) string {
		t.Helper()
		var logs lockedBuffer
		workers := river.NewWorkers()
		river.AddWorker(workers, river.WorkFunc(func(context.Context, *river.Job[retryWiringArgs]) error { return nil }))
		config.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
		config.Queues = map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 1}}
		config.Schema = schema
		config.TestOnly = true
		config.Workers = workers
		client, err := build(config)
		require.NoError(t, err)
		require.NoError(t, client.Start(ctx))
		require.NoError(t, client.Stop(ctx))
		return logs.String()
	}
	withNewClient := func(config *river.Config) (*river.Client[pgx.Tx], error) { return NewClient(engine, config) }
	byHand := func(config *river.Config) (*river.Client[pgx.Tx], error) {
		return river.NewClient(engine.Driver(), config)
	}

	t.Run("NewClient", func(t *testing.T) {
		require.NotContains(t, start(t, withNewClient, &river.Config{}), "RetryPolicy")
	})

	t.Run("NewClientWithAPolicyOfItsOwn", func(t *testing.T) {
		// Kept as the engine policy's Fallback: still the engine's.
		require.NotContains(t, start(t, withNewClient, &river.Config{RetryPolicy: &river.DefaultClientRetryPolicy{}}), "RetryPolicy")
	})

	t.Run("ByHandWithoutTheEnginesPolicy", func(t *testing.T) {
		logs := start(t, byHand, &river.Config{Middleware: []rivertype.Middleware{engine.Middleware()}})
		require.Contains(t, logs, "level=ERROR")
		require.Contains(t, logs, "river.Config.RetryPolicy is not the engine's *workflow.RetryPolicy")
		require.Contains(t, logs, "Build the client with workflow.NewClient(engine, config)")
	})

	t.Run("ByHandWithAnotherPolicy", func(t *testing.T) {
		logs := start(t, byHand, &river.Config{Middleware: []rivertype.Middleware{engine.Middleware()}, RetryPolicy: &river.DefaultClientRetryPolicy{}})
		require.Contains(t, logs, "workflow.NewClient(engine, config)")
	})

	t.Run("ByHandWithTheEnginesPolicy", func(t *testing.T) {
		logs := start(t, byHand, &river.Config{Middleware: []rivertype.Middleware{engine.Middleware()}, RetryPolicy: engine.RetryPolicy()})
		require.NotContains(t, logs, "RetryPolicy")
	})

	t.Run("DriverNewClient", func(t *testing.T) {
		// A driver of NewDriver builds its clients the same way.
		driver, err := engine.NewDriver(Acquisition{ByPriority: true})
		require.NoError(t, err)
		logs := start(t, driver.NewClient, &river.Config{})
		require.NotContains(t, logs, "RetryPolicy")
		require.NotContains(t, logs, "level=ERROR")

		_, err = (&Driver{}).NewClient(&river.Config{})
		require.ErrorContains(t, err, "the driver has no engine")
	})

	t.Run("OnePolicySharedByTwoClients", func(t *testing.T) {
		shared := engine.RetryPolicy()
		first := start(t, withNewClient, &river.Config{RetryPolicy: shared})
		second := start(t, withNewClient, &river.Config{RetryPolicy: shared})
		require.NotContains(t, first+second, "RetryPolicy")
	})
}
