package workflow_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivershared/riversharedtest"

	"github.com/riverbpmn/riverbpmn/workflow"
)

// ExampleNewClient wires a River client to an engine in one call. A client
// built by hand on the engine's driver that forgets the engine's middleware
// is refused, with an error saying what to add, rather than silently storing
// jobs without their job context.
func ExampleNewClient() {
	ctx := context.Background()
	dbPool, err := pgxpool.New(ctx, riversharedtest.TestDatabaseURL())
	if err != nil {
		panic(err)
	}
	defer dbPool.Close()

	engine, err := workflow.NewEngine(dbPool, &workflow.Config{
		Schema:             testSchema(ctx, dbPool), // the schema is given once, here
		ProcessDefinitions: []workflow.ProcessDefinition{{Key: "order_fulfilment"}},
		JobDefinitions: []workflow.JobDefinition{{
			ID: "ship-async", ProcessDefinitionKey: "order_fulfilment", ActivityID: "ship", Kind: "ship_order",
			RetryCycle: "R3/PT5M",
		}},
	})
	if err != nil {
		panic(err)
	}

	// Half wired: the engine's driver, but not its middleware.
	wired, err := engine.ClientConfig(nil)
	if err != nil {
		panic(err)
	}
	halfWired, err := river.NewClient(engine.Driver(), &river.Config{Schema: wired.Schema})
	if err != nil {
		panic(err)
	}
	_, err = halfWired.Insert(ctx, ShipOrderArgs{OrderID: "7"}, nil)
	fmt.Println("half wired:", errors.Is(err, workflow.ErrClientNotWired))

	// Wired in one call: driver, middleware, retry policy, schema, logger.
	client, err := workflow.NewClient(engine, &river.Config{})
	if err != nil {
		panic(err)
	}
	res, err := client.Insert(ctx, ShipOrderArgs{OrderID: "7"}, nil)
	if err != nil {
		panic(err)
	}
	jc, err := workflow.JobContextOf(res.Job)
	if err != nil {
		panic(err)
	}
	fmt.Printf("wired: job definition %s, activity %s, retry cycle %s, %d executions\n",
		jc.JobDefinitionID, jc.ActivityID, jc.RetryCycle, res.Job.MaxAttempts)

	// Output:
	// half wired: true
	// wired: job definition ship-async, activity ship, retry cycle R3/PT5M, 3 executions
}

// ExampleEngine_ClientConfig completes a river.Config for a driver of the
// engine's (here one that acquires by priority), keeping what the caller set.
func ExampleEngine_ClientConfig() {
	engine, err := workflow.NewEngine(nil, &workflow.Config{Schema: "billing"})
	if err != nil {
		panic(err)
	}
	driver, err := engine.NewDriver(workflow.Acquisition{ByPriority: true})
	if err != nil {
		panic(err)
	}
	config, err := engine.ClientConfig(&river.Config{MaxAttempts: 5})
	if err != nil {
		panic(err)
	}
	fmt.Println(config.Schema, len(config.Middleware), config.MaxAttempts)
	_ = driver // driver.NewClient(config) builds its clients

	_, err = engine.ClientConfig(&river.Config{Schema: "public"})
	fmt.Println(err)

	// Output:
	// billing 1 5
	// workflow: river.Config.Schema "public" differs from workflow.Config.Schema "billing": the management API would read another schema than the client works; set the schema once, in workflow.Config.Schema
}
