package telemetry_test

import (
	"context"
	"encoding/json"
	"syscall"
	"testing"
	"time"

	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/riverbpmn/riverbpmn/telemetry"
	"github.com/riverbpmn/riverbpmn/workflow"
)

// BenchmarkInstrumentsPerJob is what the instruments cost one job, outside
// the database: its share of a fetch of 10 jobs, the span hook (no span
// records) and its work (the engine's telemetry layer around an empty work
// function), the job read by the engine's JobReader (ContextReader). Sub-benchmarks: no meter provider ("off": the global no-ops),
// and an SDK meter provider for a job with a job context that takes no
// exclusive key ("sdk"), one that takes a key ("sdk-exclusive": two more
// histograms and a clock read), and a plain River job ("sdk-plain"). Job
// contexts are in the labelled form (JobContext.AddToMetadata); the
// "-array" variants carry the array form of earlier versions, and
// "sdk-object" the object form of migrations before riverbpmn/016 (read the
// general way). The
// cpu-ns/op figure is the process's CPU time per job (garbage collection
// included), the one that holds on a loaded machine; divide it by a job's
// whole cost for the share (riverbpmn bench at the 1 ms cooldown runs about
// 18,000 jobs/s on two cores: about 110 µs of the machine's CPU per job,
// the database's included).
func BenchmarkInstrumentsPerJob(b *testing.B) {
	ctx := context.Background()
	makeJobs := func(b *testing.B, jc *workflow.JobContext, form string) []*rivertype.JobRow {
		b.Helper()
		jobs := make([]*rivertype.JobRow, 10)
		for i := range jobs {
			metadata := []byte(`{}`)
			if jc != nil {
				var err error
				switch form {
				case "labelled":
					metadata, err = jc.AddToMetadata(nil)
				case "array", "object":
					var object []byte
					object, err = json.Marshal(jc) // the object form: fields by JSON name
					require.NoError(b, err)
					if form == "array" {
						object = arrayForm(b, object)
					}
					metadata, err = json.Marshal(map[string]json.RawMessage{"bpmn": object})
				}
				require.NoError(b, err)
			}
			attempted := time.Now()
			jobs[i] = &rivertype.JobRow{ID: int64(i + 1), Kind: "charge_card", Queue: "default", Attempt: 1, MaxAttempts: 3, Metadata: metadata, ScheduledAt: attempted.Add(-time.Second), AttemptedAt: &attempted}
		}
		return jobs
	}
	exclusiveNo, exclusiveYes := false, true
	// Resolved contexts, as the middleware writes them (exclusive is set).
	withContext := &workflow.JobContext{ProcessInstanceID: "order-4711", ProcessDefinitionKey: "order", ActivityID: "charge", JobDefinitionID: "charge-async", TenantID: "acme", RetryCycle: "R3/PT5M", Exclusive: &exclusiveNo}
	withKey := *withContext
	withKey.Exclusive = &exclusiveYes
	work := func(context.Context) error { return nil }
	run := func(b *testing.B, config telemetry.Config, jobs []*rivertype.JobRow) {
		tel, err := telemetry.New(config, telemetry.ContextReader{}, nil)
		require.NoError(b, err)
		hook, ok := tel.Hook().(rivertype.HookWorkBegin)
		require.True(b, ok)
		b.ReportAllocs()
		cpuBefore := cpuTime()
		n := 0
		for i := 0; b.Loop(); i++ {
			job := jobs[i%len(jobs)]
			if i%len(jobs) == 0 {
				tel.Fetched(ctx, "default", "river", jobs)
			}
			_ = hook.WorkBegin(ctx, job)
			_ = tel.Work(ctx, job, work)
			n++
		}
		b.ReportMetric(float64((cpuTime()-cpuBefore).Nanoseconds())/float64(n), "cpu-ns/op")
	}
	sdk := func(b *testing.B, jobs []*rivertype.JobRow) {
		reader := sdkmetric.NewManualReader()
		provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
		defer func() { _ = provider.Shutdown(ctx) }()
		run(b, telemetry.Config{MeterProvider: provider}, jobs)
		var rm metricdata.ResourceMetrics
		require.NoError(b, reader.Collect(ctx, &rm))
	}
	b.Run("off", func(b *testing.B) { run(b, telemetry.Config{}, makeJobs(b, &withKey, "labelled")) })
	b.Run("sdk", func(b *testing.B) { sdk(b, makeJobs(b, withContext, "labelled")) })
	b.Run("sdk-array", func(b *testing.B) { sdk(b, makeJobs(b, withContext, "array")) })
	b.Run("sdk-object", func(b *testing.B) { sdk(b, makeJobs(b, withContext, "object")) })
	b.Run("sdk-exclusive", func(b *testing.B) { sdk(b, makeJobs(b, &withKey, "labelled")) })
	b.Run("sdk-exclusive-array", func(b *testing.B) { sdk(b, makeJobs(b, &withKey, "array")) })
	b.Run("sdk-plain", func(b *testing.B) { sdk(b, makeJobs(b, nil, "labelled")) })
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
