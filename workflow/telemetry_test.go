package workflow

// The fixtures of the engine's telemetry tests (TestTelemetryKilledClient,
// TestTelemetryKeysHeldSkipped); package telemetry's tests measure an
// engine's jobs end to end.

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/riverqueue/river"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/riverbpmn/riverbpmn/internal/metrictest"
)

// telArgs is the telemetry tests' job: Mode decides its outcome.
type telArgs struct {
	Instance    string `json:"instance"`
	Definition  string `json:"definition,omitempty"`
	Tenant      string `json:"tenant,omitempty"`
	Mode        string `json:"mode"` // "ok", "fail", "conflict" (the run without a recorded error), "timer"
	SleepMillis int    `json:"sleep_millis,omitempty"`
	RetryCycle  string `json:"retry_cycle,omitempty"`
}

func (telArgs) Kind() string { return "telemetry_work" }

func (a telArgs) JobContext() JobContext {
	def := a.Definition
	if def == "" {
		def = "telemetry"
	}
	jc := JobContext{ProcessInstanceID: a.Instance, ProcessDefinitionKey: def, ActivityID: "task", TenantID: a.Tenant, RetryCycle: a.RetryCycle}
	if a.Mode == "timer" {
		jc.JobType = JobTypeTimer
	}
	return jc
}

type telWorker struct {
	river.WorkerDefaults[telArgs]
}

func (telWorker) Work(ctx context.Context, job *river.Job[telArgs]) error {
	if job.Args.SleepMillis > 0 {
		select {
		case <-time.After(time.Duration(job.Args.SleepMillis) * time.Millisecond):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	switch job.Args.Mode {
	case "fail":
		return errors.New("telemetry test: failing on purpose")
	case "conflict":
		if len(job.Errors) == 0 { // a conflict gives its execution back: attempt stays 1
			return fmt.Errorf("telemetry test: %w", ErrConflict)
		}
	}
	return nil
}

// telReader is a meter provider whose measurements a test reads back
// (metrictest.Reader).
type telReader struct {
	provider *sdkmetric.MeterProvider
	reader   *metrictest.Reader
}

func newTelReader(t *testing.T) *telReader {
	reader := metrictest.NewReader(t)
	return &telReader{provider: reader.Provider, reader: reader}
}

// collect returns riverbpmn's metrics by name.
func (r *telReader) collect(t *testing.T) map[string]metricdata.Metrics {
	t.Helper()
	return r.reader.Collect(t)
}

// sum returns the total of an Int64 sum or gauge (metrictest.Sum).
var sum = metrictest.Sum
