package bulk_test

import (
	"context"
	"fmt"

	"github.com/riverqueue/river/riverdbtest"
	"github.com/riverqueue/river/rivershared/util/testutil"

	"github.com/riverbpmn/riverbpmn/bulk"
	"github.com/riverbpmn/riverbpmn/riverbpmntest"
	"github.com/riverbpmn/riverbpmn/search"
	"github.com/riverbpmn/riverbpmn/workflow"
)

// ExampleOperations_SuspendJobs suspends every job of process definition
// "invoice" through the engine's bulk handle, a batch at a time, then
// records the activation as a bulk operation that Run runs with saved
// progress, as the console does.
func ExampleOperations_SuspendJobs() {
	ctx := context.Background()
	tb := testutil.PanicTB()
	schema := riverdbtest.TestSchema(ctx, tb, riverbpmntest.Driver(tb), nil)
	bundle := riverbpmntest.New(ctx, tb, schema, nil)
	for i := range 3 {
		jc := workflow.JobContext{ProcessInstanceID: fmt.Sprintf("inv-%d", i), ProcessDefinitionKey: "invoice"}
		if _, err := bundle.Client.Insert(ctx, bulkArgs{}, jc.InsertOpts()); err != nil {
			panic(err)
		}
	}

	ops := bundle.Engine.Bulk()
	invoices := &bulk.Jobs{Filter: search.Filter{ProcessDefinitionKey: "invoice"}}
	p, err := ops.SuspendJobs(ctx, invoices, &bulk.JobOpts{BatchSize: 2})
	if err != nil {
		panic(err)
	}
	fmt.Println("suspended:", p.Changed)

	op, err := ops.Create(ctx, &bulk.Spec{Action: bulk.ActionActivate, Jobs: invoices}, "activate the invoices", "example")
	if err != nil {
		panic(err)
	}
	if err := ops.Run(ctx, op, "example"); err != nil {
		panic(err)
	}
	op, err = ops.Get(ctx, op.ID)
	if err != nil {
		panic(err)
	}
	fmt.Println(op.Description+":", op.State, op.Progress.Changed)

	// Output:
	// suspended: 3
	// activate the invoices: finished 3
}
