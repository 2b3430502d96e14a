package job_test

import (
	"context"
	"fmt"
	"time"

	"github.com/riverqueue/river/riverdbtest"
	"github.com/riverqueue/river/rivershared/util/testutil"

	"github.com/riverbpmn/riverbpmn/riverbpmntest"
	"github.com/riverbpmn/riverbpmn/workflow"
)

// ShipArgs is the job of the example.
type ShipArgs struct{}

func (ShipArgs) Kind() string { return "ship_order" }

// ExampleJobs_Stop stops a job that waits to run: it is aborted at once and
// never starts.
func ExampleJobs_Stop() {
	ctx := context.Background()
	tb := testutil.PanicTB()
	schema := riverdbtest.TestSchema(ctx, tb, riverbpmntest.Driver(tb), nil)
	bundle := riverbpmntest.New(ctx, tb, schema, &riverbpmntest.Opts{Config: &workflow.Config{
		ProcessDefinitions: []workflow.ProcessDefinition{{Key: "order_fulfilment"}},
	}})
	opts := workflow.JobContext{ProcessDefinitionKey: "order_fulfilment", ProcessInstanceID: "order-8"}.InsertOpts()
	opts.ScheduledAt = time.Now().Add(time.Hour)
	res, err := bundle.Client.Insert(ctx, ShipArgs{}, opts)
	if err != nil {
		panic(err)
	}

	jobs := bundle.Engine.Jobs()
	stop, err := jobs.Stop(ctx, res.Job.ID)
	if err != nil {
		panic(err)
	}
	fmt.Println(stop.State, "->", stop.Outcome)

	status, err := jobs.Status(ctx, res.Job.ID)
	if err != nil {
		panic(err)
	}
	fmt.Println(status.State, status.Status)

	// Output:
	// scheduled -> aborted
	// cancelled ABORTED
}
