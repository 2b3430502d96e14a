package workflow

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/exclusive"
)

// TestExclusiveScopeSetWhileAClientStarts: a client that starts while
// another scope is being recorded either is alive when SetExclusiveScope
// checks (the scope is refused) or reads the new scope and refuses to start;
// never both succeed. First in the gap itself: the lock held, no client
// alive, a client starts and opens its session, then the scope is written;
// the client must see it. Then a client start and SetExclusiveScope run
// concurrently, several rounds.
func TestExclusiveScopeSetWhileAClientStarts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	schema := exclSchema(t)
	timeline := &exclusive.Timeline{}
	tool, err := NewEngine(testPool(t), &Config{Schema: schema})
	require.NoError(t, err)
	_, err = tool.ForceExclusiveScope(ctx, exclusive.ProcessInstance)
	require.NoError(t, err)

	// The gap: what SetExclusiveScope does between its check and its write.
	tx, err := testPool(t).Begin(ctx)
	require.NoError(t, err)
	defer func() { _ = tx.Rollback(ctx) }()
	_, err = tx.Exec(ctx, tool.sql(exclusiveScopeLockSQL), AdvisoryLockClassExclusiveScope)
	require.NoError(t, err)
	alive, err := tool.AliveClients(ctx)
	require.NoError(t, err)
	require.Empty(t, alive)
	started := make(chan error, 1)
	go func() {
		_, _, err := startDefaultsClient(t, schema, Config{}, timeline, nil)
		started <- err
	}()
	// The client records its scope (the old one is still in force), opens
	// its session and waits for the lock.
	require.Eventually(t, func() bool {
		alive, err := tool.AliveClients(ctx)
		require.NoError(t, err)
		return len(alive) == 1
	}, 30*time.Second, 10*time.Millisecond)
	select {
	case err := <-started:
		t.Fatalf("the client started while the scope was being recorded: %v", err)
	case <-time.After(200 * time.Millisecond):
	}
	_, err = exclusive.SetScope(ctx, tx, schema, exclusive.RootProcessInstance, "")
	require.NoError(t, err)
	require.NoError(t, tx.Commit(ctx))
	err = <-started
	require.ErrorIs(t, err, exclusive.ErrScopeMismatch, "the client reads the scope recorded meanwhile")
	require.Eventually(t, func() bool {
		alive, err := tool.AliveClients(ctx)
		require.NoError(t, err)
		return len(alive) == 0
	}, 10*time.Second, 10*time.Millisecond, "the refused client closed its session")

	// Concurrently: exactly one of the two succeeds, every round.
	outcomes := map[string]int{}
	for round := range 8 {
		_, err := tool.ForceExclusiveScope(ctx, exclusive.ProcessInstance)
		require.NoError(t, err)
		clientErr := make(chan error, 1)
		var stop func()
		go func() {
			time.Sleep(time.Duration(rand.IntN(80)) * time.Millisecond)
			_, client, err := startDefaultsClient(t, schema, Config{}, timeline, nil)
			if err == nil {
				stop = func() {
					stopCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
					defer cancel()
					require.NoError(t, client.Stop(stopCtx))
				}
			}
			clientErr <- err
		}()
		time.Sleep(time.Duration(rand.IntN(80)) * time.Millisecond)
		_, setErr := tool.SetExclusiveScope(ctx, exclusive.RootProcessInstance)
		startErr := <-clientErr
		switch {
		case setErr == nil && startErr == nil:
			t.Fatalf("round %d: the scope was recorded and a client of the old one started", round)
		case setErr == nil:
			require.ErrorIs(t, startErr, exclusive.ErrScopeMismatch, "round %d", round)
			outcomes["client refused"]++
		case startErr == nil:
			require.True(t, errors.Is(setErr, ErrClientsAlive), "round %d: %v", round, setErr)
			outcomes["scope refused"]++
			stop()
		default:
			t.Fatalf("round %d: both failed: %v; %v", round, setErr, startErr)
		}
		require.Eventually(t, func() bool {
			alive, err := tool.AliveClients(ctx)
			require.NoError(t, err)
			return len(alive) == 0
		}, 10*time.Second, 10*time.Millisecond)
	}
	t.Logf("outcomes: %v", outcomes)
}
