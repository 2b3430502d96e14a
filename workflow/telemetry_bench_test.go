package workflow

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// BenchmarkTelemetryPerJob is what the instruments cost one job, outside
// the database: its share of a fetch of 10 jobs and its work (the
// engine's telemetry layer around an empty work function), with no meter
// provider (the global no-ops: "off") and with an SDK meter provider
// ("sdk"). Divide by a job's whole cost (riverbpmn bench: about 300-700 µs
// of CPU per job on two cores at the 1 ms cooldown) for the share.
func BenchmarkTelemetryPerJob(b *testing.B) {
	ctx := context.Background()
	jobs := make([]*rivertype.JobRow, 10)
	for i := range jobs {
		metadata, err := JobContext{ProcessInstanceID: "order-4711", ProcessDefinitionKey: "order", ActivityID: "charge", JobDefinitionID: "charge-async", TenantID: "acme", RetryCycle: "R3/PT5M"}.AddToMetadata(nil)
		require.NoError(b, err)
		attempted := time.Now()
		jobs[i] = &rivertype.JobRow{ID: int64(i + 1), Kind: "charge_card", Queue: "default", Attempt: 1, MaxAttempts: 3, Metadata: metadata, ScheduledAt: attempted.Add(-time.Second), AttemptedAt: &attempted}
	}
	work := func(context.Context) error { return nil }
	run := func(b *testing.B, config *Config) {
		engine, err := NewEngine(nil, config)
		require.NoError(b, err)
		b.ReportAllocs()
		cpuBefore := cpuTime()
		n := 0
		for i := 0; b.Loop(); i++ {
			job := jobs[i%len(jobs)]
			if i%len(jobs) == 0 {
				engine.tel.Fetched(ctx, "default", "river", jobs)
			}
			_ = engine.tel.Work(ctx, job, work)
			n++
		}
		// CPU time, not wall time: the figure that holds on a loaded machine.
		b.ReportMetric(float64((cpuTime()-cpuBefore).Nanoseconds())/float64(n), "cpu-ns/op")
	}
	b.Run("off", func(b *testing.B) { run(b, &Config{}) })
	b.Run("sdk", func(b *testing.B) {
		reader := sdkmetric.NewManualReader()
		provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
		defer func() { _ = provider.Shutdown(ctx) }()
		config := &Config{}
		config.Telemetry.MeterProvider = provider
		run(b, config)
		var rm metricdata.ResourceMetrics
		require.NoError(b, reader.Collect(ctx, &rm))
	})
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
