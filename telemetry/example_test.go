package telemetry_test

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdbtest"
	"github.com/riverqueue/river/rivershared/riversharedtest"
	"github.com/riverqueue/river/rivershared/util/testutil"
	"github.com/riverqueue/river/rivertype"
	"github.com/riverqueue/rivercontrib/otelriver"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/riverbpmn/riverbpmn/telemetry"
	"github.com/riverbpmn/riverbpmn/workflow"
)

// ApproveArgs are the args of one step of an approval process.
type ApproveArgs struct {
	Request string `json:"request"`
}

func (ApproveArgs) Kind() string { return "approve" }

func (a ApproveArgs) JobContext() workflow.JobContext {
	return workflow.JobContext{ProcessInstanceID: "request-" + a.Request, ProcessDefinitionKey: "approval", ActivityID: "approve"}
}

// Wiring riverbpmn's instruments and River's otelriver to one meter
// provider and one tracer provider. Here the SDK's meter provider is read by
// a ManualReader, to print what it holds; in an application give it a
// PeriodicReader with an exporter (OTLP, Prometheus), or set the global
// providers (otel.SetMeterProvider) and leave Config.Telemetry empty.
func Example() {
	ctx := context.Background()
	dbPool, err := pgxpool.New(ctx, riversharedtest.TestDatabaseURL())
	if err != nil {
		panic(err)
	}
	defer dbPool.Close()
	schema := testSchema(ctx, dbPool)

	reader := sdkmetric.NewManualReader()
	meterProvider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	tracerProvider := sdktrace.NewTracerProvider()
	defer func() { _ = tracerProvider.Shutdown(ctx) }()

	engine, err := workflow.NewEngine(dbPool, &workflow.Config{
		Schema:    schema,
		Telemetry: telemetry.Config{MeterProvider: meterProvider},
	})
	if err != nil {
		panic(err)
	}
	workers := river.NewWorkers()
	river.AddWorker(workers, river.WorkFunc(func(ctx context.Context, job *river.Job[ApproveArgs]) error { return nil }))
	client, err := workflow.NewClient(engine, &river.Config{
		Queues:  map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 10}},
		Workers: workers,
		Schema:  schema,
		Logger:  slog.New(slog.DiscardHandler),
		// River's spans and metrics; the engine gives each work span the
		// job's BPMN identity (riverbpmn.process_instance_id, ...).
		Middleware: []rivertype.Middleware{otelriver.NewMiddleware(&otelriver.MiddlewareConfig{
			MeterProvider:  meterProvider,
			TracerProvider: tracerProvider,
		})},
		FetchCooldown:     10 * time.Millisecond,
		FetchPollInterval: 50 * time.Millisecond,
	})
	if err != nil {
		panic(err)
	}
	completed, cancel := client.Subscribe(river.EventKindJobCompleted)
	defer cancel()
	if err := client.Start(ctx); err != nil {
		panic(err)
	}
	defer func() { _ = client.Stop(ctx) }()
	if _, err := client.Insert(ctx, ApproveArgs{Request: "4711"}, nil); err != nil {
		panic(err)
	}
	<-completed

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		panic(err)
	}
	for _, scope := range rm.ScopeMetrics {
		for _, m := range scope.Metrics {
			switch m.Name {
			case telemetry.NameJobsTaken, "river.work_count":
				fmt.Printf("%s (%s): %d\n", m.Name, scope.Scope.Name, m.Data.(metricdata.Sum[int64]).DataPoints[0].Value)
			case telemetry.NameExclusiveWait:
				fmt.Printf("%s: %d job\n", m.Name, m.Data.(metricdata.Histogram[float64]).DataPoints[0].Count)
			}
		}
	}
	// Unordered output:
	// riverbpmn.acquisition.jobs (github.com/riverbpmn/riverbpmn): 1
	// riverbpmn.exclusive.wait: 1 job
	// river.work_count (github.com/riverqueue/rivercontrib/otelriver): 1
}

// testSchema returns an isolated schema with River's and riverbpmn's
// migrations applied; an application runs workflow.MigrateUp instead.
func testSchema(ctx context.Context, dbPool *pgxpool.Pool) string {
	engine, err := workflow.NewEngine(dbPool, nil)
	if err != nil {
		panic(err)
	}
	return riverdbtest.TestSchema(ctx, testutil.PanicTB(), engine.Driver(), nil)
}
