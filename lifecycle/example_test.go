package lifecycle_test

import (
	"context"
	"fmt"

	"github.com/riverqueue/river/riverdbtest"
	"github.com/riverqueue/river/rivershared/util/testutil"
	"github.com/riverqueue/river/rivertype"

	"github.com/riverbpmn/riverbpmn/internal/sqltemplate"
	"github.com/riverbpmn/riverbpmn/lifecycle"
	"github.com/riverbpmn/riverbpmn/riverbpmntest"
	"github.com/riverbpmn/riverbpmn/workflow"
)

// ChargeArgs is the job of the example.
type ChargeArgs struct{}

func (ChargeArgs) Kind() string { return "charge_payment" }

// ExampleLifecycle_Queue inserts a shipping job that waits for two other
// jobs (prerequisites) and is inserted pending (it runs only once queued):
// it becomes available when both hold reasons are gone, in whichever order.
func ExampleLifecycle_Queue() {
	ctx := context.Background()
	tb := testutil.PanicTB()
	schema := riverdbtest.TestSchema(ctx, tb, riverbpmntest.Driver(tb), nil)
	bundle := riverbpmntest.New(ctx, tb, schema, &riverbpmntest.Opts{Config: &workflow.Config{
		ProcessDefinitions: []workflow.ProcessDefinition{{Key: "order"}},
	}})
	client, jobs := bundle.Client, bundle.Engine.Lifecycle()
	insert := func(opts lifecycle.Opts) *rivertype.JobRow {
		insertOpts, err := opts.Apply(workflow.JobContext{ProcessDefinitionKey: "order", ProcessInstanceID: "order-1"}.InsertOpts())
		if err != nil {
			panic(err)
		}
		res, err := client.Insert(ctx, ChargeArgs{}, insertOpts)
		if err != nil {
			panic(err)
		}
		return res.Job
	}

	pack := insert(lifecycle.Opts{})
	invoice := insert(lifecycle.Opts{})
	ship := insert(lifecycle.Opts{Pending: true, DependsOn: []int64{pack.ID, invoice.ID}})
	fmt.Println("ship:", ship.State)

	results, err := jobs.Queue(ctx, ship.ID)
	if err != nil {
		panic(err)
	}
	fmt.Println("queue ship:", results[0].Outcome)

	// Complete the prerequisites as River's completer would (a worker
	// would do it by returning nil).
	complete := sqltemplate.Render(`UPDATE /* TEMPLATE: schema */river_job SET state = 'completed', finalized_at = now() WHERE id = $1`, schema)
	if _, err := bundle.DBPool.Exec(ctx, complete, pack.ID); err != nil {
		panic(err)
	}
	progress, err := jobs.Dependencies(ctx, ship.ID)
	if err != nil {
		panic(err)
	}
	fmt.Printf("ship: %d of %d prerequisites done, held for %v\n", progress.Done, progress.Total, progress.Reasons)
	if _, err := bundle.DBPool.Exec(ctx, complete, invoice.ID); err != nil {
		panic(err)
	}
	job, err := client.JobGet(ctx, ship.ID)
	if err != nil {
		panic(err)
	}
	fmt.Println("ship:", job.State)

	// Output:
	// ship: pending
	// queue ship: still_held
	// ship: 1 of 2 prerequisites done, held for [prerequisites]
	// ship: available
}
