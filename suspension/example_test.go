package suspension_test

import (
	"context"
	"fmt"

	"github.com/riverqueue/river/riverdbtest"
	"github.com/riverqueue/river/rivershared/util/testutil"
	"github.com/riverqueue/river/rivertype"

	"github.com/riverbpmn/riverbpmn/riverbpmntest"
	"github.com/riverbpmn/riverbpmn/suspension"
	"github.com/riverbpmn/riverbpmn/workflow"
)

// ChargeArgs is the payment job of the example.
type ChargeArgs struct{}

func (ChargeArgs) Kind() string { return "charge_payment" }

// ExampleSuspensions_SuspendJobDefinition stops the payment jobs of every
// order (the payment service is down) without losing them, then lets them
// go again: a suspended job is held, never fetched, and goes back exactly
// where it was going when activated.
func ExampleSuspensions_SuspendJobDefinition() {
	ctx := context.Background()
	tb := testutil.PanicTB()
	schema := riverdbtest.TestSchema(ctx, tb, riverbpmntest.Driver(tb), nil)
	bundle := riverbpmntest.New(ctx, tb, schema, &riverbpmntest.Opts{Config: &workflow.Config{
		ProcessDefinitions: []workflow.ProcessDefinition{{Key: "order"}},
		JobDefinitions: []workflow.JobDefinition{{
			ID: "charge-async", ProcessDefinitionKey: "order", ActivityID: "charge", Kind: "charge_payment",
		}},
	}})
	insert := func(order string) *rivertype.JobRow {
		res, err := bundle.Client.Insert(ctx, ChargeArgs{},
			workflow.JobContext{ProcessInstanceID: order, JobDefinitionID: "charge-async"}.InsertOpts())
		if err != nil {
			panic(err)
		}
		return res.Job
	}
	suspensions := bundle.Engine.Suspensions()

	before := insert("order-1")
	res, err := suspensions.SuspendJobDefinition(ctx, "charge-async", &suspension.Opts{IncludeJobs: true})
	if err != nil {
		panic(err)
	}
	fmt.Printf("suspended %d existing job(s)\n", res.Jobs)
	after := insert("order-2")
	fmt.Printf("new job: %s, suspended %t\n", after.State, workflow.IsJobSuspended(after))

	res, err = suspensions.ActivateJobDefinition(ctx, "charge-async", &suspension.Opts{IncludeJobs: true})
	if err != nil {
		panic(err)
	}
	fmt.Printf("activated %d job(s)\n", res.Jobs)
	for _, id := range []int64{before.ID, after.ID} {
		job, err := bundle.Client.JobGet(ctx, id)
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
