package instance_test

import (
	"context"
	"fmt"

	"github.com/riverqueue/river/riverdbtest"
	"github.com/riverqueue/river/rivershared/util/testutil"

	"github.com/riverbpmn/riverbpmn/instance"
	"github.com/riverbpmn/riverbpmn/riverbpmntest"
)

// ExampleInstances_Jobs inserts jobs of a called instance under its root,
// then shows the root's call tree and the called instance's jobs.
func ExampleInstances_Jobs() {
	ctx := context.Background()
	tb := testutil.PanicTB()
	schema := riverdbtest.TestSchema(ctx, tb, riverbpmntest.Driver(tb), nil)
	bundle := riverbpmntest.New(ctx, tb, schema, nil)
	for _, args := range []stepArgs{{Instance: "order-1"}, {Instance: "payment-1", Root: "order-1", Parent: "order-1"}, {Instance: "payment-1", Root: "order-1", Parent: "order-1"}} {
		if _, err := bundle.Client.Insert(ctx, args, nil); err != nil {
			panic(err)
		}
	}

	tree, err := bundle.Engine.Instances().Tree(ctx, &instance.TreeParams{Root: "order-1"})
	if err != nil {
		panic(err)
	}
	for _, m := range tree {
		fmt.Printf("depth %d: %s, %d unfinished jobs\n", m.Depth, m.ProcessInstanceID, m.Unfinished)
	}
	jobs, err := bundle.Engine.Instances().Jobs(ctx, &instance.JobsParams{ProcessInstanceID: "payment-1"})
	if err != nil {
		panic(err)
	}
	for _, job := range jobs.Items {
		fmt.Printf("payment-1 job: %s, %s\n", job.Kind, job.State)
	}
	fmt.Printf("next page: %q\n", jobs.Next)
	// Output:
	// depth 0: order-1, 1 unfinished jobs
	// depth 1: payment-1, 2 unfinished jobs
	// payment-1 job: instance_test_step, available
	// payment-1 job: instance_test_step, available
	// next page: ""
}
