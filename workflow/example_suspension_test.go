package workflow_test

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdbtest"
	"github.com/riverqueue/river/rivershared/riversharedtest"
	"github.com/riverqueue/river/rivershared/util/testutil"
	"github.com/riverqueue/river/rivertype"

	"github.com/riverbpmn/riverbpmn/workflow"
)

// ExampleEngine_SuspendJobDefinition stops the payment jobs of every order
// (the payment service is down) without losing them, then lets them go
// again: a suspended job is held, never fetched, and goes back exactly where
// it was going when activated.
func ExampleEngine_SuspendJobDefinition() {
	ctx := context.Background()
	dbPool, err := pgxpool.New(ctx, riversharedtest.TestDatabaseURL())
	if err != nil {
		panic(err)
	}
	defer dbPool.Close()

	config := &workflow.Config{
		ProcessDefinitions: []workflow.ProcessDefinition{{Key: "order"}},
		JobDefinitions: []workflow.JobDefinition{{
			ID: "charge-async", ProcessDefinitionKey: "order", ActivityID: "charge", Kind: "charge_payment",
		}},
	}
	bootstrap, err := workflow.NewEngine(dbPool, config)
	if err != nil {
		panic(err)
	}
	config.Schema = riverdbtest.TestSchema(ctx, testutil.PanicTB(), bootstrap.Driver(), nil)
	engine, err := workflow.NewEngine(dbPool, config)
	if err != nil {
		panic(err)
	}
	client, err := workflow.NewClient(engine, &river.Config{
		Schema: config.Schema,
	})
	if err != nil {
		panic(err)
	}
	insert := func(order string) *rivertype.JobRow {
		res, err := client.Insert(ctx, ChargeArgs{},
			workflow.JobContext{ProcessInstanceID: order, JobDefinitionID: "charge-async"}.InsertOpts())
		if err != nil {
			panic(err)
		}
		return res.Job
	}

	before := insert("order-1")
	res, err := engine.SuspendJobDefinition(ctx, "charge-async", &workflow.SuspendOpts{IncludeJobs: true})
	if err != nil {
		panic(err)
	}
	fmt.Printf("suspended %d existing job(s)\n", res.Jobs)
	after := insert("order-2")
	fmt.Printf("new job: %s, suspended %t\n", after.State, workflow.IsJobSuspended(after))

	res, err = engine.ActivateJobDefinition(ctx, "charge-async", &workflow.SuspendOpts{IncludeJobs: true})
	if err != nil {
		panic(err)
	}
	fmt.Printf("activated %d job(s)\n", res.Jobs)
	for _, id := range []int64{before.ID, after.ID} {
		job, err := client.JobGet(ctx, id)
		if err != nil {
			panic(err)
		}
		fmt.Printf("job of %s: %s\n", map[int64]string{before.ID: "order-1", after.ID: "order-2"}[id], job.State)
	}

	// Output:
	// suspended 1 existing job(s)
	// new job: pending, suspended true
	// activated 2 job(s)
	// job of order-1: available
	// job of order-2: available
}
