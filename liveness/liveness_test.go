package liveness_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river/riverdbtest"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/liveness"
	"github.com/riverbpmn/riverbpmn/riverbpmntest"
)

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	require.NoError(t, liveness.Config{}.Validate())
	require.NoError(t, liveness.Config{PingInterval: time.Second, FenceAfter: 3 * time.Second}.Validate())
	require.ErrorContains(t, liveness.Config{PingInterval: -time.Second}.Validate(), "Config.PingInterval must not be negative")
	require.ErrorContains(t, liveness.Config{PingInterval: 3 * time.Second}.Validate(), "FenceAfter (2s) must exceed PingInterval (3s)")
	require.ErrorContains(t, liveness.Config{TakeoverAfter: time.Second}.Validate(), "TakeoverAfter (1s) must be at least FenceAfter + CancelGrace (3s)")
	d := liveness.Config{}.WithDefaults()
	require.Equal(t, d.FenceAfter+d.CancelGrace, d.TakeoverAfter)
}

// testSchema returns the shared pool and a schema migrated with River's and
// riverbpmn's lines.
func testSchema(t *testing.T) (*pgxpool.Pool, string) {
	t.Helper()
	return riverbpmntest.DBPool(t), riverdbtest.TestSchema(context.Background(), t, riverbpmntest.Driver(t), nil)
}

// runningJob writes a running job attempted by clientID now, holding
// exclusive key key.
func runningJob(ctx context.Context, t *testing.T, pool *pgxpool.Pool, schema, clientID, key string) int64 {
	t.Helper()
	s := pgx.Identifier{schema}.Sanitize()
	var id int64
	require.NoError(t, pool.QueryRow(ctx, fmt.Sprintf(`INSERT INTO %s.river_job
		(args, kind, max_attempts, metadata, queue, state, priority, attempt, attempted_at, attempted_by)
		VALUES ('{}', 'k', 1, '{}', 'default', 'running', 1, 1, clock_timestamp(), ARRAY['other', $1::text]) RETURNING id`, s), clientID).Scan(&id))
	_, err := pool.Exec(ctx, fmt.Sprintf(`INSERT INTO %s.river_bpmn_exclusive_lock (key, job_id, attempt, client_id, queue, locked_at)
		VALUES ($1, $2, 1, $3, 'default', now())`, s), key, id, clientID)
	require.NoError(t, err)
	return id
}

// TestKeeperFencesAndTakeover: a session whose backend is terminated is
// fenced by its Keeper at its next ping (OnLost), which opens a new one; the
// takeover gives back exactly the jobs the dead session fetched (not those
// of the new session), without using an execution, and frees their keys.
func TestKeeperFencesAndTakeover(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, schema := testSchema(t)
	s := pgx.Identifier{schema}.Sanitize()

	var lost atomic.Uint64
	keeper := liveness.NewKeeper(liveness.Config{PingInterval: 50 * time.Millisecond, FenceAfter: time.Second}, liveness.KeeperConfig{
		ConnConfig: pool.Config().ConnConfig.Copy(), Schema: schema, ClientID: "client-a",
		OnLost: func(gen uint64) { lost.Store(gen) },
	})
	require.NoError(t, keeper.Open(ctx))
	t.Cleanup(func() { keeper.Close(context.Background()) })

	_, cancel, gen, err := keeper.Begin(ctx)
	require.NoError(t, err)
	cancel()
	keeper.End()
	require.Equal(t, uint64(1), gen)

	oldJob := runningJob(ctx, t, pool, schema, "client-a", "key-old")
	var pid int32
	require.NoError(t, pool.QueryRow(ctx, fmt.Sprintf(`SELECT pid FROM %s.river_bpmn_client_session WHERE client_id = 'client-a'`, s)).Scan(&pid))
	// Nothing is due while the session lives.
	takeovers, err := liveness.TakeOver(ctx, pool, schema, 0, nil, nil)
	require.NoError(t, err)
	require.Empty(t, takeovers)

	_, err = pool.Exec(ctx, `SELECT pg_terminate_backend($1)`, pid)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return lost.Load() == 1 }, 5*time.Second, 10*time.Millisecond, "the Keeper fences its lost session")
	require.Equal(t, uint64(1), keeper.FencedThrough())
	require.Eventually(t, func() bool { return keeper.Sessions.Load() == 2 }, 5*time.Second, 10*time.Millisecond, "and opens a new one")
	newJob := runningJob(ctx, t, pool, schema, "client-a", "key-new")

	// The Keeper may see its connection gone before the terminated backend
	// has exited and let go of its advisory lock (what "dead" means), so the
	// first looks may still find the session alive.
	require.Eventually(t, func() bool {
		takeovers, err = liveness.TakeOver(ctx, pool, schema, 0, nil, nil)
		require.NoError(t, err)
		return len(takeovers) > 0
	}, 5*time.Second, 20*time.Millisecond, "the dead session is taken over once its backend has exited")
	require.Len(t, takeovers, 1)
	require.Equal(t, "client-a", takeovers[0].ClientID)
	require.Equal(t, []int64{oldJob}, takeovers[0].JobIDs, "only the dead session's job")
	require.Equal(t, 1, takeovers[0].FreedKeys)

	var (
		state   string
		attempt int
		errs    string
	)
	require.NoError(t, pool.QueryRow(ctx, fmt.Sprintf(`SELECT state::text, attempt, errors[1]->>'error' FROM %s.river_job WHERE id = $1`, s), oldJob).Scan(&state, &attempt, &errs))
	require.Equal(t, "available", state)
	require.Zero(t, attempt, "the dead run used up no execution")
	require.Contains(t, errs, "client client-a (session ")
	require.NoError(t, pool.QueryRow(ctx, fmt.Sprintf(`SELECT state::text FROM %s.river_job WHERE id = $1`, s), newJob).Scan(&state))
	require.Equal(t, "running", state, "the live session's job is left alone")

	var held []string
	rows, err := pool.Query(ctx, fmt.Sprintf(`SELECT key FROM %s.river_bpmn_exclusive_lock WHERE job_id IS NOT NULL ORDER BY key`, s))
	require.NoError(t, err)
	held, err = pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	require.Equal(t, []string{"key-new"}, held)

	takeovers, err = liveness.TakeOver(ctx, pool, schema, 0, nil, nil)
	require.NoError(t, err)
	require.Empty(t, takeovers, "a session is taken over once")

	// A clean close leaves no session behind.
	keeper.Close(ctx)
	var sessions int
	require.NoError(t, pool.QueryRow(ctx, fmt.Sprintf(`SELECT count(*) FROM %s.river_bpmn_client_session`, s)).Scan(&sessions))
	require.Zero(t, sessions)
	_, _, _, err = keeper.Begin(ctx)
	require.ErrorIs(t, err, liveness.ErrNotLive)
}

// TestTakeoverWaits: a dead session is given back only TakeoverAfter after
// it was first seen dead.
func TestTakeoverWaits(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, schema := testSchema(t)
	keeper := liveness.NewKeeper(liveness.Config{}, liveness.KeeperConfig{
		ConnConfig: pool.Config().ConnConfig.Copy(), Schema: schema, ClientID: "client-b",
	})
	require.NoError(t, keeper.Open(ctx))
	job := runningJob(ctx, t, pool, schema, "client-b", "key")
	var pid int32
	require.NoError(t, pool.QueryRow(ctx, fmt.Sprintf(`SELECT pid FROM %s.river_bpmn_client_session`, pgx.Identifier{schema}.Sanitize())).Scan(&pid))
	keeper.Close(ctx) // stops pinging; the row is deleted...
	// ...so register a dead one by hand: a session whose backend is gone.
	_, err := pool.Exec(ctx, fmt.Sprintf(`INSERT INTO %s.river_bpmn_client_session (client_id, pid, lock_class, lock_obj, started_at)
		VALUES ('client-b', $1, 1, 1, now() - interval '1 minute')`, pgx.Identifier{schema}.Sanitize()), pid)
	require.NoError(t, err)

	takeovers, err := liveness.TakeOver(ctx, pool, schema, time.Second, nil, nil)
	require.NoError(t, err)
	require.Empty(t, takeovers, "first seen dead now: not due yet")
	time.Sleep(1100 * time.Millisecond)
	takeovers, err = liveness.TakeOver(ctx, pool, schema, time.Second, nil, nil)
	require.NoError(t, err)
	require.Len(t, takeovers, 1)
	require.Equal(t, []int64{job}, takeovers[0].JobIDs)
}
