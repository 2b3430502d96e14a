package workflow

import (
	"context"
	"github.com/jackc/pgx/v5"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/rivershared/riverpilot"
	"github.com/riverqueue/river/rivershared/startstop"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/exclusive"
	"github.com/riverbpmn/riverbpmn/liveness"
)

// recordingDriver records every pilot River asks our driver for, and counts
// the fetches each one serves.
type recordingDriver struct {
	*Driver

	mu     sync.Mutex
	pilots []*recordingPilot
}

func (d *recordingDriver) PluginPilot() riverpilot.Pilot {
	p := &recordingPilot{Pilot: d.Driver.PluginPilot()}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.pilots = append(d.pilots, p)
	return p
}

type recordingPilot struct {
	riverpilot.Pilot

	fetches atomic.Int64
}

func (p *recordingPilot) JobGetAvailable(ctx context.Context, exec riverdriver.Executor, state riverpilot.ProducerState, params *riverdriver.JobGetAvailableParams) (*riverdriver.JobGetAvailableResult, error) {
	p.fetches.Add(1)
	return p.Pilot.JobGetAvailable(ctx, exec, state, params)
}

// TestTwoClientsGetTheirOwnPilot builds two clients from one driver, checks
// each got a distinct riverbpmn pilot, and that both fetch with it while they
// work a batch of jobs together.
//
// The engine opts out of what wraps the pilot by default (liveness) and of
// exclusivity, so the clients' pilots are riverbpmn's plain one.
func TestTwoClientsGetTheirOwnPilot(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	engine, schema := testEngineWithConfig(t, &Config{ExclusiveScope: exclusive.None, Liveness: liveness.Config{Disabled: true}})
	driver := &recordingDriver{Driver: engine.Driver()}

	var worked atomic.Int64
	workers := river.NewWorkers()
	river.AddWorker(workers, river.WorkFunc(func(ctx context.Context, job *river.Job[shipArgs]) error {
		worked.Add(1)
		return nil
	}))
	newClient := func() *river.Client[pgx.Tx] {
		client, err := river.NewClient(driver, &river.Config{
			FetchCooldown:     5 * time.Millisecond,
			FetchPollInterval: 10 * time.Millisecond,
			Middleware:        []rivertype.Middleware{engine.Middleware()},
			Queues:            map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 2}},
			Schema:            schema,
			TestOnly:          true,
			Workers:           workers,
		})
		require.NoError(t, err)
		return client
	}
	clientA, clientB := newClient(), newClient()

	require.Len(t, driver.pilots, 2, "River asks the driver for one pilot per client")
	require.NotSame(t, driver.pilots[0], driver.pilots[1])
	for _, p := range driver.pilots {
		require.IsType(t, &pilot{}, p.Pilot)
	}
	require.NotSame(t, driver.pilots[0].Pilot, driver.pilots[1].Pilot)

	const jobCount = 200
	params := make([]river.InsertManyParams, jobCount)
	for i := range params {
		params[i] = river.InsertManyParams{Args: shipArgs{OrderID: "o"}, InsertOpts: validContext("pi").InsertOpts()}
	}
	_, err := clientA.InsertMany(ctx, params)
	require.NoError(t, err)

	for _, client := range []*river.Client[pgx.Tx]{clientA, clientB} {
		require.NoError(t, client.Start(ctx))
	}
	require.Eventually(t, func() bool { return worked.Load() == jobCount }, 20*time.Second, 10*time.Millisecond)
	for _, client := range []*river.Client[pgx.Tx]{clientA, clientB} {
		require.NoError(t, client.Stop(ctx))
	}
	for i, p := range driver.pilots {
		require.Positive(t, p.fetches.Load(), "client %d fetched through its riverbpmn pilot", i)
	}
}

// TestMaintenanceServicesHaveDistinctTypes: River keys the leader's
// maintenance services by type name, so two services of one type would
// replace each other. With every feature that adds one switched on, each
// service has a type of its own, none of them a shared function adapter.
func TestMaintenanceServicesHaveDistinctTypes(t *testing.T) {
	engine, err := NewEngine(testPool(t), &Config{Events: &EventsConfig{}})
	require.NoError(t, err)
	services := newPilot(engine.Driver()).PluginMaintenanceServices()
	require.GreaterOrEqual(t, len(services), 4, "suspension schedule, lifecycle, timer pruner, events pruner")
	seen := map[string]bool{}
	for _, service := range services {
		name := reflect.TypeOf(service).String()
		require.False(t, seen[name], "two maintenance services of type %s", name)
		require.NotEqual(t, reflect.TypeOf(startstop.StartStopFunc(nil)).String(), name, "a shared adapter type")
		seen[name] = true
	}
}
