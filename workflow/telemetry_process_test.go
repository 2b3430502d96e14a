package workflow

import (
	"context"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/riverbpmn/riverbpmn/internal/longtest"
	"github.com/riverbpmn/riverbpmn/liveness"
	"github.com/riverbpmn/riverbpmn/telemetry"
)

// TestTelemetryKilledClient SIGKILLs a worker process (internal/livenessworker)
// while it runs a job of an exclusive key, and reads back what the leader,
// a client of this process, reports: a dead session and a key held by a
// dead client while the takeover is not yet due (Liveness.TakeoverAfter is
// long enough for a collection to see them), then the takeover, the job
// given back, and neither figure any more.
func TestTelemetryKilledClient(t *testing.T) {
	longtest.Skip(t)
	ctx := context.Background()
	tr := newTelReader(t)
	engine, schema := testEngineWithConfig(t, &Config{
		Telemetry: telemetry.Config{MeterProvider: tr.provider, FiguresInterval: time.Second},
		Liveness:  liveness.Config{TakeoverAfter: 8 * time.Second},
	})
	workers := river.NewWorkers()
	river.AddWorker(workers, telWorker{})
	// The leader works a queue of its own, so the killed worker's job waits
	// for nobody else once given back.
	leader, err := NewClient(engine, &river.Config{
		Queues:              map[string]river.QueueConfig{"telemetry_leader": {MaxWorkers: 1}},
		Workers:             workers,
		SkipUnknownJobCheck: true, // it inserts the worker process's jobs
	})
	require.NoError(t, err)
	require.NoError(t, leader.Start(ctx))
	t.Cleanup(func() {
		stopCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = leader.Stop(stopCtx)
	})
	reported := func(m metricdata.Metrics) bool {
		data, ok := m.Data.(metricdata.Gauge[int64])
		return ok && len(data.DataPoints) > 0
	}
	require.Eventually(t, func() bool { return reported(tr.collect(t)[telemetry.NameDeadSessions]) }, 60*time.Second, 100*time.Millisecond,
		"the client of this process is elected leader and reports the database figures")

	procs := newLivenessProcs(t, schema)
	victim := procs.start()
	_, err = leader.Insert(ctx, livenessArgs{Instance: "pi-killed", SleepMillis: 100, LongFirstRun: true}, nil)
	require.NoError(t, err)
	procs.waitOpenRuns(victim, 1, 30*time.Second)
	procs.kill(victim)

	require.Eventually(t, func() bool {
		metrics := tr.collect(t)
		return sum(metrics[telemetry.NameDeadSessions]) == 1 && sum(metrics[telemetry.NameDeadKeys]) == 1
	}, 30*time.Second, 100*time.Millisecond, "a dead client, holding the key of its running job")
	require.Zero(t, sum(tr.collect(t)[telemetry.NameTakeovers]), "not yet taken over: TakeoverAfter has not passed")

	require.Eventually(t, func() bool {
		metrics := tr.collect(t)
		return sum(metrics[telemetry.NameTakeovers]) == 1 && sum(metrics[telemetry.NameJobsGivenBack]) == 1
	}, 60*time.Second, 100*time.Millisecond, "the leader takes the dead client over and gives its job back")
	require.Eventually(t, func() bool {
		metrics := tr.collect(t)
		return sum(metrics[telemetry.NameDeadSessions]) == 0 && sum(metrics[telemetry.NameDeadKeys]) == 0
	}, 30*time.Second, 100*time.Millisecond, "no dead client once taken over")
}
