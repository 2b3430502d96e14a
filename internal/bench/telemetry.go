package bench

import (
	"context"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/riverbpmn/riverbpmn/exclusive"
	"github.com/riverbpmn/riverbpmn/liveness"
	"github.com/riverbpmn/riverbpmn/telemetry"
	"github.com/riverbpmn/riverbpmn/workflow"
)

// telemetryCollectEvery is how often the telemetry mode's reader collects,
// as a periodic exporter would (more often than the usual 60 s, so that
// collections happen during the run).
const telemetryCollectEvery = time.Second

// telemetryMode is the none mode with riverbpmn's instruments recording into
// an OpenTelemetry SDK meter provider whose reader collects every second;
// the none mode has no provider (the global no-ops), so comparing the two
// gives the instruments' cost when on.
func telemetryMode() Mode {
	return Mode{
		Name:         "telemetry",
		Summary:      "the none mode with riverbpmn's OpenTelemetry instruments recording into an SDK meter provider (a reader collecting every second)",
		Target:       0.99,
		StressTarget: 0.93,
		Versus:       "none",
		VersusTarget: 0.98,
		// Run only when named: it measures the cost of an option, not a
		// feature every deployment pays for.
		Diagnostic: true,
		Setup:      telemetrySide,
	}
}

func telemetrySide(_ context.Context, env *Env) (*Side, error) {
	reader := sdkmetric.NewManualReader()
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	// The base engine's configuration (no exclusivity, no liveness), with
	// the provider.
	engine, err := workflow.NewEngine(env.Pool, &workflow.Config{
		Schema:         env.Options.Schema,
		ExclusiveScope: exclusive.None,
		Liveness:       liveness.Config{Disabled: true},
		Telemetry:      telemetry.Config{MeterProvider: provider},
	})
	if err != nil {
		return nil, err
	}
	side, err := env.engineSide(engine, workflow.Acquisition{})
	if err != nil {
		return nil, err
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		ticker := time.NewTicker(telemetryCollectEvery)
		defer ticker.Stop()
		var rm metricdata.ResourceMetrics
		for {
			select {
			case <-stop:
				return
			case <-ticker.C:
				_ = reader.Collect(context.Background(), &rm)
			}
		}
	}()
	side.Cleanup = func(ctx context.Context) error {
		close(stop)
		<-done
		return provider.Shutdown(ctx)
	}
	return side, nil
}
