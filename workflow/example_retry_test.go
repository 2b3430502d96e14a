package workflow_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdbtest"
	"github.com/riverqueue/river/rivershared/riversharedtest"
	"github.com/riverqueue/river/rivershared/util/testutil"
	"github.com/riverqueue/river/rivertype"

	"github.com/riverbpmn/riverbpmn/incident"
	"github.com/riverbpmn/riverbpmn/retrypolicy"
	"github.com/riverbpmn/riverbpmn/workflow"
)

// ExampleRetryPolicy shows Camunda's interval-index rule for a list cycle:
// the k-th failure waits the k-th entry, and after retries were raised above
// the list's length the first entry is used until the count is back in range.
func ExampleRetryPolicy() {
	policy := &workflow.RetryPolicy{}
	job := &rivertype.JobRow{
		MaxAttempts: 4, // set at insert: 3 entries, 4 executions
		Metadata:    []byte(`{"bpmn": {"process_definition_key": "invoice", "retry_cycle": "PT10M,PT17M,PT20M"}}`),
	}
	for job.Attempt = 1; job.Attempt < job.MaxAttempts; job.Attempt++ {
		wait := time.Until(policy.NextRetry(job)).Round(time.Minute)
		fmt.Printf("failure of execution %d: retry in %s\n", job.Attempt, wait)
	}

	job.Attempt, job.MaxAttempts = 2, 8 // SetJobRetries(ctx, id, 6) after the first failure
	fmt.Printf("raised to 6 left: retry in %s\n", time.Until(policy.NextRetry(job)).Round(time.Minute))

	// Output:
	// failure of execution 1: retry in 10m0s
	// failure of execution 2: retry in 17m0s
	// failure of execution 3: retry in 20m0s
	// raised to 6 left: retry in 10m0s
}

// ChargeCardArgs are the args of a job that fails until the card is fixed.
type ChargeCardArgs struct {
	OrderID string `json:"order_id"`
}

func (ChargeCardArgs) Kind() string { return "charge_card" }

func (a ChargeCardArgs) JobContext() workflow.JobContext {
	return workflow.JobContext{ProcessInstanceID: "order-" + a.OrderID, JobDefinitionID: "charge-async"}
}

// cardFixed says whether ChargeCardWorker succeeds.
var cardFixed atomic.Bool

type ChargeCardWorker struct {
	river.WorkerDefaults[ChargeCardArgs]
}

func (w *ChargeCardWorker) Work(ctx context.Context, job *river.Job[ChargeCardArgs]) error {
	if !cardFixed.Load() {
		return errors.New("card declined")
	}
	return nil
}

// ExampleEngine_Jobs runs a job with the retry cycle "R2/PT0.1S" (2
// executions, 0.1 s apart) until it is discarded with a failedJob incident
// (engine.Incidents().List), then revives it with engine.Jobs().SetRetries.
func ExampleEngine_Jobs() {
	ctx := context.Background()

	dbPool, err := pgxpool.New(ctx, riversharedtest.TestDatabaseURL())
	if err != nil {
		panic(err)
	}
	defer dbPool.Close()

	// A schema with River's and riverbpmn's migrations applied; in an
	// application: workflow.MigrateUp(ctx, dbPool, &workflow.MigrateOpts{}).
	schema := testSchema(ctx, dbPool)

	engine, err := workflow.NewEngine(dbPool, &workflow.Config{
		Schema:             schema,
		Retry:              retrypolicy.Config{DefaultCycle: "R5/PT1M"}, // for job definitions without a cycle of their own
		ProcessDefinitions: []workflow.ProcessDefinition{{Key: "order_fulfilment"}},
		JobDefinitions: []workflow.JobDefinition{{
			ID: "charge-async", ProcessDefinitionKey: "order_fulfilment", ActivityID: "charge", Kind: "charge_card",
			RetryCycle: "R2/PT0.1S",
		}},
	})
	if err != nil {
		panic(err)
	}

	workers := river.NewWorkers()
	river.AddWorker(workers, &ChargeCardWorker{})
	client, err := workflow.NewClient(engine, &river.Config{
		FetchCooldown:     20 * time.Millisecond,
		FetchPollInterval: 50 * time.Millisecond,
		Logger:            slog.New(slog.DiscardHandler),
		Queues:            map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 10}},
		Schema:            schema,
		Workers:           workers,
	})
	if err != nil {
		panic(err)
	}
	events, cancel := client.Subscribe(river.EventKindJobCompleted, river.EventKindJobFailed)
	defer cancel()
	if err := client.Start(ctx); err != nil {
		panic(err)
	}

	res, err := client.Insert(ctx, ChargeCardArgs{OrderID: "42"}, nil)
	if err != nil {
		panic(err)
	}
	fmt.Printf("max attempts %d\n", res.Job.MaxAttempts)

	for event := range events {
		fmt.Printf("execution %d: %s\n", event.Job.Attempt, event.Job.State)
		if event.Job.State == rivertype.JobStateDiscarded {
			break
		}
	}
	incidents, err := engine.Incidents().List(ctx, &incident.ListParams{Oldest: true})
	if err != nil {
		panic(err)
	}
	for _, incident := range incidents.Items {
		fmt.Printf("incident %s: job definition %s, activity %s, instance %s: %s\n",
			incident.Type, incident.JobDefinitionID, incident.ActivityID, incident.ProcessInstanceID, incident.Message)
	}

	cardFixed.Store(true)
	if err := engine.Jobs().SetRetries(ctx, res.Job.ID, 1); err != nil {
		panic(err)
	}
	event := <-events
	fmt.Printf("execution %d: %s\n", event.Job.Attempt, event.Job.State)
	incidents, err = engine.Incidents().List(ctx, nil)
	if err != nil {
		panic(err)
	}
	fmt.Printf("open incidents: %d\n", len(incidents.Items))

	if err := client.Stop(ctx); err != nil {
		panic(err)
	}

	// Output:
	// max attempts 2
	// execution 1: available
	// execution 2: discarded
	// incident failedJob: job definition charge-async, activity charge, instance order-42: card declined
	// execution 3: completed
	// open incidents: 0
}

// testSchema returns an isolated schema with River's and riverbpmn's
// migrations applied.
func testSchema(ctx context.Context, dbPool *pgxpool.Pool) string {
	engine, err := workflow.NewEngine(dbPool, nil)
	if err != nil {
		panic(err)
	}
	return riverdbtest.TestSchema(ctx, testutil.PanicTB(), engine.Driver(), nil)
}
