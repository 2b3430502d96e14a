package workflow

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/exclusive"
	"github.com/riverbpmn/riverbpmn/internal/longtest"
	"github.com/riverbpmn/riverbpmn/liveness"
)

// livenessCostSample is what the database shows of its clients at one
// moment: its backends, and how many of them hold a live liveness session of
// the schema. pg_stat_activity is current; the statements are counted by
// the clients themselves (statementCounter), since the database's own
// counters (pg_stat_database.xact_commit) are flushed by each backend when
// it next goes idle, up to seconds late on a loaded machine.
type livenessCostSample struct {
	backends int
	sessions int
}

func sampleLivenessCost(ctx context.Context, t *testing.T, pool *pgxpool.Pool, schema string) livenessCostSample {
	t.Helper()
	var s livenessCostSample
	require.NoError(t, pool.QueryRow(ctx, `SELECT
			(SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND backend_type = 'client backend'),
			(SELECT count(*) FROM pg_stat_activity WHERE pid IN (
				SELECT pid FROM `+pgx.Identifier{schema, "river_bpmn_client_session"}.Sanitize()+` WHERE superseded_at IS NULL))`).Scan(&s.backends, &s.sessions))
	return s
}

// statementCounter is a pgx tracer that counts the statements its
// connections send, each query and each statement of a batch: set on the
// clients' pool configuration, it counts what the clients ask of the
// database, their liveness sessions' dedicated connections included (they
// are opened from a copy of the same configuration).
type statementCounter struct{ n atomic.Int64 }

func (c *statementCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	c.n.Add(1)
	return ctx
}

func (c *statementCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (c *statementCounter) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	return ctx
}

func (c *statementCounter) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {
	c.n.Add(1)
}

func (c *statementCounter) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

// livenessCostDatabase creates a database for this test alone, dropped when
// it ends, so that the counters it reads are its clients' and not those of
// the tests of other packages running beside it, and returns the pool
// configuration of the test database pointed at it.
func livenessCostDatabase(t *testing.T) *pgxpool.Config {
	t.Helper()
	ctx := context.Background()
	admin := testPool(t)
	name := fmt.Sprintf("riverbpmn_liveness_cost_%d", os.Getpid())
	ident := pgx.Identifier{name}.Sanitize()
	_, err := admin.Exec(ctx, "DROP DATABASE IF EXISTS "+ident+" WITH (FORCE)")
	require.NoError(t, err)
	_, err = admin.Exec(ctx, "CREATE DATABASE "+ident)
	require.NoError(t, err)
	t.Cleanup(func() {
		_, err := admin.Exec(context.Background(), "DROP DATABASE IF EXISTS "+ident+" WITH (FORCE)")
		require.NoError(t, err)
	})
	config := admin.Config()
	config.ConnConfig.Database = name
	return config
}

// TestLivenessCost measures what liveness, on by default, costs an idle
// deployment: four clients (each an engine of its own, as two processes
// would be) run for a window with liveness disabled, then with the default
// configuration, and the database's backends and committed statements are
// compared. Expected from the configuration: one connection per client, and
// per second 1/PingInterval pings per client plus 1/CheckInterval checks of
// the leader (4 x 2 + 1 = 9 with the defaults and 4 clients). The
// statements are counted by the clients' connections (statementCounter), the
// backends in a database of its own (the test database has the tests of
// other packages running beside it); the bounds on the rate leave room for
// River's own periodic work, which is the same on both sides but not in
// step. It takes 90 s, so it belongs to `make test-long`.
func TestLivenessCost(t *testing.T) {
	longtest.Skip(t)
	ctx := context.Background()
	const (
		clients = 4
		window  = 40 * time.Second
	)

	dbConfig := livenessCostDatabase(t)
	sampler := poolOf(t, dbConfig, 1)

	measure := func(t *testing.T, config Config) (sample livenessCostSample, perSecond float64) {
		t.Helper()
		counter := &statementCounter{}
		clientConfig := dbConfig.Copy()
		clientConfig.ConnConfig.Tracer = counter
		config.Schema = "liveness_cost_" + strconv.FormatBool(!config.Liveness.Disabled)
		_, err := sampler.Exec(ctx, "CREATE SCHEMA "+config.Schema)
		require.NoError(t, err)
		_, err = MigrateUp(ctx, sampler, &MigrateOpts{Schema: config.Schema})
		require.NoError(t, err)
		var (
			started []*river.Client[pgx.Tx]
			pools   []*pgxpool.Pool
		)
		for range clients {
			pool := poolOf(t, clientConfig, 4)
			pools = append(pools, pool)
			engine, err := NewEngine(pool, &config)
			require.NoError(t, err)
			workers := river.NewWorkers()
			river.AddWorker(workers, &defaultExclWorker{timeline: &exclusive.Timeline{}})
			// River's defaults otherwise (a fetch poll a second): an idle
			// deployment as it runs out of the box.
			client, err := NewClient(engine, &river.Config{
				Queues:  map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 3}},
				Workers: workers,
			})
			require.NoError(t, err)
			require.NoError(t, client.Start(ctx))
			started = append(started, client)
		}
		time.Sleep(3 * time.Second) // sessions open, leader elected, pools warm
		before := counter.n.Load()
		time.Sleep(window)
		after := sampleLivenessCost(ctx, t, sampler, config.Schema)
		statements := counter.n.Load() - before
		for _, client := range started {
			stopCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
			require.NoError(t, client.Stop(stopCtx))
			cancel()
		}
		for _, pool := range pools {
			pool.Close()
		}
		return after, float64(statements) / window.Seconds()
	}

	off, offRate := measure(t, Config{Liveness: liveness.Config{Disabled: true}})
	on, onRate := measure(t, Config{})
	d := liveness.Config{}.WithDefaults()
	expectedRate := float64(clients)/d.PingInterval.Seconds() + 1/d.CheckInterval.Seconds()
	t.Logf("liveness off: %d backends, %.1f statements/s; on (default): %d backends, %d of them sessions, %.1f statements/s; "+
		"liveness costs %d connections for %d clients and %.1f statements/s (expected from the defaults: %d and %.1f)",
		off.backends, offRate, on.backends, on.sessions, onRate, on.sessions, clients, onRate-offRate, clients, expectedRate)

	// The pools open and close connections as their load comes and goes,
	// so the backend totals differ by more than the sessions: the sessions'
	// own connections are counted instead.
	require.Zero(t, off.sessions)
	require.Equal(t, clients, on.sessions, "each client holds a connection of its own for its session")
	require.Greater(t, onRate-offRate, expectedRate/2, "the pings and checks are sent")
	require.Less(t, onRate-offRate, expectedRate*2+2, "liveness costs about one ping per client per PingInterval and one check per CheckInterval")
}
