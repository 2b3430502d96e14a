package workflow_test

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdbtest"
	"github.com/riverqueue/river/rivershared/riversharedtest"
	"github.com/riverqueue/river/rivershared/util/testutil"

	"github.com/riverbpmn/riverbpmn/workflow"
)

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
