package workflow_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdbtest"
	"github.com/riverqueue/river/rivershared/riversharedtest"
	"github.com/riverqueue/river/rivershared/util/testutil"

	"github.com/riverbpmn/riverbpmn/exclusive"
	"github.com/riverbpmn/riverbpmn/priority"
	"github.com/riverbpmn/riverbpmn/workflow"
)

// StepArgs is one step of an order's process.
type StepArgs struct {
	Step string `json:"step"`
}

func (StepArgs) Kind() string { return "order_step" }

// ExampleAcquisition_exclusive runs a client the way Camunda's job executor
// runs: jobs of one process instance one at a time (exclusive), by priority,
// within a priority range, only of registered deployments. Three jobs of
// one order, queued at once, run one after the other, the most important
// first; the job outside the client's range is left for another client.
func ExampleAcquisition_exclusive() {
	ctx := context.Background()
	dbPool, err := pgxpool.New(ctx, riversharedtest.TestDatabaseURL())
	if err != nil {
		panic(err)
	}
	defer dbPool.Close()

	bootstrap, err := workflow.NewEngine(dbPool, &workflow.Config{})
	if err != nil {
		panic(err)
	}
	schema := riverdbtest.TestSchema(ctx, testutil.PanicTB(), bootstrap.Driver(), nil)
	engine, err := workflow.NewEngine(dbPool, &workflow.Config{Schema: schema, ExclusiveScope: exclusive.ProcessInstance})
	if err != nil {
		panic(err)
	}
	driver, err := engine.NewDriver(workflow.Acquisition{
		ByPriority:      true,
		PriorityRange:   &priority.Range{Min: 0, Max: 100},
		DeploymentAware: true,
		Deployments:     []string{"orders-v1"},
	})
	if err != nil {
		panic(err)
	}

	done := make(chan string, 3)
	workers := river.NewWorkers()
	river.AddWorker(workers, river.WorkFunc(func(ctx context.Context, job *river.Job[StepArgs]) error {
		jc, err := workflow.JobContextOf(job.JobRow)
		if err != nil {
			return err
		}
		done <- fmt.Sprintf("%s %s (priority %d)", jc.ProcessInstanceID, job.Args.Step, *jc.Priority)
		return nil
	}))
	client, err := driver.NewClient(&river.Config{
		FetchCooldown:     10 * time.Millisecond,
		FetchPollInterval: 50 * time.Millisecond,
		Logger:            slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
		Queues:            map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 10}},
		Schema:            schema,
		Workers:           workers,
	})
	if err != nil {
		panic(err)
	}

	for _, step := range []struct {
		name     string
		priority int64
	}{{"ship", 1}, {"charge", 50}, {"audit", 500}, {"reserve", 10}} {
		p := step.priority
		jc := workflow.JobContext{ProcessInstanceID: "order-1", ProcessDefinitionKey: "order", DeploymentID: "orders-v1", Priority: &p}
		if _, err := client.Insert(ctx, StepArgs{Step: step.name}, jc.InsertOpts()); err != nil {
			panic(err)
		}
	}
	if err := client.Start(ctx); err != nil {
		panic(err)
	}
	for range 3 {
		fmt.Println(<-done)
	}
	if err := client.Stop(ctx); err != nil {
		panic(err)
	}

	// Output:
	// order-1 charge (priority 50)
	// order-1 reserve (priority 10)
	// order-1 ship (priority 1)
}
