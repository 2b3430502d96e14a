package index_test

import (
	"context"
	"fmt"

	"github.com/riverqueue/river/riverdbtest"
	"github.com/riverqueue/river/rivershared/util/testutil"

	"github.com/riverbpmn/riverbpmn/index"
	"github.com/riverbpmn/riverbpmn/riverbpmntest"
	"github.com/riverbpmn/riverbpmn/workflow"
)

// ExampleIndexes_List builds the fetch-order index a client fetching by
// priority and due date reads, then lists the enabled indexes.
func ExampleIndexes_List() {
	ctx := context.Background()
	tb := testutil.PanicTB()
	schema := riverdbtest.TestSchema(ctx, tb, riverbpmntest.Driver(tb), nil)
	bundle := riverbpmntest.New(ctx, tb, schema, nil)
	indexes := bundle.Engine.Indexes()
	if err := indexes.Disable(ctx, index.FetchOrder.Names()...); err != nil { // a reused test schema may have some
		panic(err)
	}

	name := workflow.FetchOrderIndex(workflow.Acquisition{ByPriority: true, ByDueDate: true})
	if err := indexes.Enable(ctx, name); err != nil {
		panic(err)
	}
	res, err := indexes.List(ctx, &index.ListParams{Family: index.FetchOrder.Name(), Enabled: true})
	if err != nil {
		panic(err)
	}
	for _, in := range res.Items {
		fmt.Printf("%s index %s\n", in.Family, in.Name)
	}
	// Output:
	// fetch-order index river_bpmn_fetch_pd
}
