package workflow

import (
	"context"
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
// moment: its backends, and the transactions it committed so far (every
// statement outside a transaction is one).
type livenessCostSample struct {
	backends int
	commits  int64
}

func sampleLivenessCost(ctx context.Context, t *testing.T) livenessCostSample {
	t.Helper()
	var s livenessCostSample
	conn, err := testPool(t).Acquire(ctx)
	require.NoError(t, err)
	defer conn.Release()
	_, err = conn.Exec(ctx, "SELECT pg_stat_clear_snapshot()")
	require.NoError(t, err)
	require.NoError(t, conn.QueryRow(ctx, `SELECT
			(SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND backend_type = 'client backend'),
			(SELECT xact_commit FROM pg_stat_database WHERE datname = current_database())`).Scan(&s.backends, &s.commits))
	return s
}

// TestLivenessCost measures what liveness, on by default, costs an idle
// deployment: four clients (each an engine of its own, as two processes
// would be) run for a window with liveness disabled, then with the default
// configuration, and the database's backends and committed statements are
// compared. Expected from the configuration: one connection per client, and
// per second 1/PingInterval pings per client plus 1/CheckInterval checks of
// the leader (4 x 2 + 1 = 9 with the defaults and 4 clients). It reads counters of the
// whole database, flushed by each backend at most once a second and
// noisy on a loaded machine (hence the wide bounds on the rate), so it
// belongs to `make test-long` (run it alone on its database for clean
// figures).
func TestLivenessCost(t *testing.T) {
	longtest.Skip(t)
	ctx := context.Background()
	const (
		clients = 4
		window  = 40 * time.Second
	)

	measure := func(t *testing.T, config Config) (backends int, perSecond float64) {
		t.Helper()
		schema := exclSchema(t)
		config.Schema = schema
		var (
			started []*river.Client[pgx.Tx]
			pools   []*pgxpool.Pool
		)
		for range clients {
			pool := exclNodePool(t, 4)
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
		before := sampleLivenessCost(ctx, t)
		time.Sleep(window)
		after := sampleLivenessCost(ctx, t)
		for _, client := range started {
			stopCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
			require.NoError(t, client.Stop(stopCtx))
			cancel()
		}
		for _, pool := range pools {
			pool.Close()
		}
		return after.backends, float64(after.commits-before.commits) / window.Seconds()
	}

	offBackends, offRate := measure(t, Config{Liveness: liveness.Config{Disabled: true}})
	onBackends, onRate := measure(t, Config{})
	d := liveness.Config{}.WithDefaults()
	expectedRate := float64(clients)/d.PingInterval.Seconds() + 1/d.CheckInterval.Seconds()
	t.Logf("liveness off: %d backends, %.1f statements/s; on (default): %d backends, %.1f statements/s; "+
		"liveness costs %d connections for %d clients and %.1f statements/s (expected from the defaults: %d and %.1f)",
		offBackends, offRate, onBackends, onRate, onBackends-offBackends, clients, onRate-offRate, clients, expectedRate)

	require.GreaterOrEqual(t, onBackends-offBackends, clients, "each client holds a connection of its own for its session")
	require.Greater(t, onRate-offRate, expectedRate/4, "the pings and checks show in the database's counters")
	require.Less(t, onRate-offRate, expectedRate*2+2, "liveness costs about one ping per client per PingInterval and one check per CheckInterval")
}
