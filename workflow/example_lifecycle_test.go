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

	"github.com/riverbpmn/riverbpmn/lifecycle"
	"github.com/riverbpmn/riverbpmn/workflow"
)

// ExampleEngine_QueueJobs inserts a shipping job that waits for two other
// jobs (prerequisites) and is inserted pending (it runs only once queued):
// it becomes available when both hold reasons are gone, in whichever order.
func ExampleEngine_QueueJobs() {
	ctx := context.Background()
	dbPool, err := pgxpool.New(ctx, riversharedtest.TestDatabaseURL())
	if err != nil {
		panic(err)
	}
	defer dbPool.Close()
	config := &workflow.Config{ProcessDefinitions: []workflow.ProcessDefinition{{Key: "order"}}}
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

	results, err := engine.QueueJobs(ctx, ship.ID)
	if err != nil {
		panic(err)
	}
	fmt.Println("queue ship:", results[0].Outcome)

	// Complete the prerequisites as River's completer would (a worker
	// would do it by returning nil).
	if _, err := dbPool.Exec(ctx, fmt.Sprintf(`UPDATE %q.river_job SET state = 'completed', finalized_at = now() WHERE id = $1`, config.Schema), pack.ID); err != nil {
		panic(err)
	}
	progress, err := engine.JobDependencies(ctx, ship.ID)
	if err != nil {
		panic(err)
	}
	fmt.Printf("ship: %d of %d prerequisites done, held for %v\n", progress.Done, progress.Total, progress.Reasons)
	if _, err := dbPool.Exec(ctx, fmt.Sprintf(`UPDATE %q.river_job SET state = 'completed', finalized_at = now() WHERE id = $1`, config.Schema), invoice.ID); err != nil {
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
