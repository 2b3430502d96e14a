package workflow_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdbtest"
	"github.com/riverqueue/river/rivershared/riversharedtest"
	"github.com/riverqueue/river/rivershared/util/testutil"

	"github.com/riverbpmn/riverbpmn/events"
	"github.com/riverbpmn/riverbpmn/workflow"
)

// ExampleEngine_SubscribeEvents follows job status events. The subscriber
// could run in any other process connected to the database; with a Name,
// it would resume where it stopped after a restart.
func ExampleEngine_SubscribeEvents() {
	ctx := context.Background()
	dbPool, err := pgxpool.New(ctx, riversharedtest.TestDatabaseURL())
	if err != nil {
		panic(err)
	}
	defer dbPool.Close()
	schema := riverdbtest.TestSchema(ctx, testutil.PanicTB(), mustEngine(dbPool, &workflow.Config{}).Driver(), nil)

	// Clients of an engine with Config.Events switch events on when they
	// start; the elected leader prunes events older than a day.
	config := shipOrderConfig(schema)
	config.Events = &workflow.EventsConfig{Retention: 24 * time.Hour}
	engine := mustEngine(dbPool, config)
	defer engine.DisableEvents(ctx) //nolint:errcheck // the example's schema is reused by tests

	workers := river.NewWorkers()
	river.AddWorker(workers, &ShipOrderWorker{})
	client, err := workflow.NewClient(engine, &river.Config{
		Logger:  slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
		Queues:  map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 10}},
		Schema:  schema,
		Workers: workers,
	})
	if err != nil {
		panic(err)
	}
	if err := client.Start(ctx); err != nil {
		panic(err)
	}
	defer client.Stop(ctx) //nolint:errcheck

	if _, err := client.Insert(ctx, ShipOrderArgs{OrderID: "7"}, nil); err != nil {
		panic(err)
	}

	subCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var received []events.Event
	err = engine.SubscribeEvents(subCtx, &events.SubscribeConfig{From: &events.Cursor{}},
		func(_ context.Context, batch []events.Event) error {
			for _, ev := range batch {
				received = append(received, ev)
				if ev.Status == events.Succeeded {
					cancel()
				}
			}
			return nil
		})
	if !errors.Is(err, context.Canceled) {
		panic(err)
	}
	for _, ev := range received {
		fmt.Println(ev.Status, ev.Kind, ev.ProcessInstanceID)
	}

	// Output:
	// shipping for order-7 (activity ship, job definition ship-async)
	// RUNNING ship_order order-7
	// SUCCEEDED ship_order order-7
}

// ExampleEngine_StopJob stops a job that waits to run: it is aborted at once
// and never starts.
func ExampleEngine_StopJob() {
	ctx := context.Background()
	dbPool, err := pgxpool.New(ctx, riversharedtest.TestDatabaseURL())
	if err != nil {
		panic(err)
	}
	defer dbPool.Close()
	schema := riverdbtest.TestSchema(ctx, testutil.PanicTB(), mustEngine(dbPool, &workflow.Config{}).Driver(), nil)
	engine := mustEngine(dbPool, shipOrderConfig(schema))

	client, err := workflow.NewClient(engine, &river.Config{
		Schema: schema,
	})
	if err != nil {
		panic(err)
	}
	res, err := client.Insert(ctx, ShipOrderArgs{OrderID: "8"}, &river.InsertOpts{ScheduledAt: time.Now().Add(time.Hour)})
	if err != nil {
		panic(err)
	}

	stop, err := engine.StopJob(ctx, res.Job.ID)
	if err != nil {
		panic(err)
	}
	fmt.Println(stop.State, "->", stop.Outcome)

	status, err := engine.JobStatus(ctx, res.Job.ID)
	if err != nil {
		panic(err)
	}
	fmt.Println(status.State, status.Status)

	// Output:
	// scheduled -> aborted
	// cancelled ABORTED
}

func mustEngine(dbPool *pgxpool.Pool, config *workflow.Config) *workflow.Engine {
	engine, err := workflow.NewEngine(dbPool, config)
	if err != nil {
		panic(err)
	}
	return engine
}

// shipOrderConfig declares the process and job definition that ShipOrderArgs
// names, on schema.
func shipOrderConfig(schema string) *workflow.Config {
	return &workflow.Config{
		Schema:             schema,
		ProcessDefinitions: []workflow.ProcessDefinition{{Key: "order_fulfilment"}},
		JobDefinitions: []workflow.JobDefinition{{
			ID: "ship-async", ProcessDefinitionKey: "order_fulfilment", ActivityID: "ship", Kind: "ship_order",
		}},
	}
}
