package workflow_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivershared/riversharedtest"

	"github.com/riverbpmn/riverbpmn/workflow"
)

// ShipOrderArgs are the args of a typed River job that knows its BPMN
// identity.
type ShipOrderArgs struct {
	OrderID string `json:"order_id"`
}

func (ShipOrderArgs) Kind() string { return "ship_order" }

// JobContext places the job in process instance "order-<id>", as a job of
// job definition "ship-async" (which gives it its process definition,
// activity, priority and retry cycle).
func (a ShipOrderArgs) JobContext() workflow.JobContext {
	return workflow.JobContext{
		ProcessInstanceID: "order-" + a.OrderID,
		JobDefinitionID:   "ship-async",
	}
}

type ShipOrderWorker struct {
	river.WorkerDefaults[ShipOrderArgs]
}

func (w *ShipOrderWorker) Work(ctx context.Context, job *river.Job[ShipOrderArgs]) error {
	jc, err := workflow.JobContextOf(job.JobRow)
	if err != nil {
		return err
	}
	fmt.Printf("shipping for %s (activity %s, job definition %s)\n", jc.ProcessInstanceID, jc.ActivityID, jc.JobDefinitionID)
	return nil
}

// Example shows the whole setup: an engine with a declared job definition, a
// River client wired to it in one call, and a typed job that carries its job
// context.
func Example() {
	ctx := context.Background()

	dbPool, err := pgxpool.New(ctx, riversharedtest.TestDatabaseURL())
	if err != nil {
		panic(err)
	}
	defer dbPool.Close()

	// A schema with River's and riverbpmn's migrations applied; in an
	// application: workflow.MigrateUp(ctx, dbPool, &workflow.MigrateOpts{}).
	schema := testSchema(ctx, dbPool)

	engine, err := workflow.NewEngine(dbPool, &workflow.Config{
		Schema:             schema,
		ProcessDefinitions: []workflow.ProcessDefinition{{Key: "order_fulfilment"}},
		JobDefinitions: []workflow.JobDefinition{{
			ID: "ship-async", ProcessDefinitionKey: "order_fulfilment", ActivityID: "ship", Kind: "ship_order",
			RetryCycle: "R5/PT1M",
		}},
	})
	if err != nil {
		panic(err)
	}

	workers := river.NewWorkers()
	river.AddWorker(workers, &ShipOrderWorker{})

	// One call: the engine's driver, middleware, retry policy and schema.
	client, err := workflow.NewClient(engine, &river.Config{
		Logger:  slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
		Queues:  map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 10}},
		Workers: workers,
	})
	if err != nil {
		panic(err)
	}

	completed, cancel := client.Subscribe(river.EventKindJobCompleted)
	defer cancel()
	if err := client.Start(ctx); err != nil {
		panic(err)
	}

	if _, err := client.Insert(ctx, ShipOrderArgs{OrderID: "42"}, nil); err != nil {
		panic(err)
	}
	<-completed

	if err := client.Stop(ctx); err != nil {
		panic(err)
	}

	// Output:
	// shipping for order-42 (activity ship, job definition ship-async)
}

// ExampleJobContext_InsertOpts gives a job its context at insert, for args
// that do not carry one.
func ExampleJobContext_InsertOpts() {
	opts := workflow.JobContext{
		ProcessInstanceID:    "pi-7",
		ProcessDefinitionKey: "invoice",
		ActivityID:           "send_reminder",
	}.InsertOpts()
	opts.Queue = "reminders" // other options as usual

	fmt.Println(string(opts.Metadata))
	// Output:
	// {"bpmn":{"instance":"pi-7","process":"invoice","activity":"send_reminder"}}
}

// ExampleJobContext_Validate shows the error for a bad value: it names the
// field and the value.
func ExampleJobContext_Validate() {
	err := workflow.JobContext{ProcessDefinitionKey: "invoice", ActivityID: "send\treminder"}.Validate()
	fmt.Println(err)
	// Output:
	// workflow: invalid job context: activity_id "send\treminder": contains control character U+0009
}
