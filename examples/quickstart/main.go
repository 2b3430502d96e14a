// Command quickstart shows riverbpmn on a River client: it migrates a schema,
// starts a client on riverbpmn's driver, inserts typed jobs that carry their
// BPMN job context, works them, and prints one line per job.
//
//	DATABASE_URL=postgres://localhost:5432/test go run ./examples/quickstart
//
// It uses (and first empties) the schema "riverbpmn_quickstart".
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sort"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/riverbpmn/riverbpmn/priority"
	"github.com/riverbpmn/riverbpmn/workflow"
)

const schema = "riverbpmn_quickstart"

// orderJob is what every job of the order process carries: the order, which
// is also the process instance.
type orderJob struct {
	OrderID string `json:"order_id"`
}

// JobContext gives each job its BPMN identity: process instance
// "order-<id>" of process "order_fulfilment".
func (o orderJob) jobContext(activity string) workflow.JobContext {
	return workflow.JobContext{
		ProcessInstanceID:    "order-" + o.OrderID,
		ProcessDefinitionKey: "order_fulfilment",
		ActivityID:           activity,
		JobDefinitionID:      activity + "-async",
		DeploymentID:         "quickstart-v1",
	}
}

// ReserveStockArgs is the async continuation of the "reserve_stock" task.
type ReserveStockArgs struct{ orderJob }

// Kind is the River job kind.
func (ReserveStockArgs) Kind() string { return "reserve_stock" }

// JobContext implements workflow.JobArgsWithJobContext.
func (a ReserveStockArgs) JobContext() workflow.JobContext { return a.jobContext("reserve_stock") }

// ChargePaymentArgs is the async continuation of the "charge_payment" task.
type ChargePaymentArgs struct {
	orderJob
	AmountCents int64 `json:"amount_cents"`
}

// Kind is the River job kind.
func (ChargePaymentArgs) Kind() string { return "charge_payment" }

// JobContext implements workflow.JobArgsWithJobContext.
func (a ChargePaymentArgs) JobContext() workflow.JobContext { return a.jobContext("charge_payment") }

type reserveStockWorker struct {
	river.WorkerDefaults[ReserveStockArgs]
}

func (w *reserveStockWorker) Work(ctx context.Context, job *river.Job[ReserveStockArgs]) error {
	return nil // stock is always there in a quickstart
}

type chargePaymentWorker struct {
	river.WorkerDefaults[ChargePaymentArgs]
}

func (w *chargePaymentWorker) Work(ctx context.Context, job *river.Job[ChargePaymentArgs]) error {
	jc, err := workflow.JobContextOf(job.JobRow)
	if err != nil {
		return err
	}
	if job.Args.AmountCents > 100_000 {
		// Declined for good: no retry would help.
		return river.JobCancel(fmt.Errorf("%s: amount %d declined", jc.ProcessInstanceID, job.Args.AmountCents))
	}
	return nil
}

func main() {
	if err := run(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()

	databaseURL := os.Getenv("DATABASE_URL")
	if databaseURL == "" {
		return errors.New("set DATABASE_URL (make example does it for you)")
	}
	dbPool, err := pgxpool.New(ctx, databaseURL)
	if err != nil {
		return err
	}
	defer dbPool.Close()

	if err := resetSchema(ctx, dbPool); err != nil {
		return err
	}
	if _, err := workflow.MigrateUp(ctx, dbPool, &workflow.MigrateOpts{Schema: schema}); err != nil {
		return err
	}

	engine, err := workflow.NewEngine(dbPool, &workflow.Config{
		Schema: schema,
		ProcessDefinitions: []workflow.ProcessDefinition{
			{Key: "order_fulfilment", DeploymentID: "quickstart-v1"},
		},
		JobDefinitions: []workflow.JobDefinition{
			{ID: "reserve_stock-async", ProcessDefinitionKey: "order_fulfilment", ActivityID: "reserve_stock",
				Kind: "reserve_stock", RetryCycle: "R3/PT1S"},
			{ID: "charge_payment-async", ProcessDefinitionKey: "order_fulfilment", ActivityID: "charge_payment",
				Kind: "charge_payment", RetryCycle: "PT1S,PT2S", Priority: priority.Constant(10)},
		},
	})
	if err != nil {
		return err
	}
	workers := river.NewWorkers()
	river.AddWorker(workers, &reserveStockWorker{})
	river.AddWorker(workers, &chargePaymentWorker{})

	client, err := river.NewClient(engine.Driver(), &river.Config{
		Logger:      slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
		Middleware:  []rivertype.Middleware{engine.Middleware()},
		Queues:      map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 10}},
		RetryPolicy: engine.RetryPolicy(),
		Schema:      schema,
		Workers:     workers,
	})
	if err != nil {
		return err
	}

	finished, unsubscribe := client.Subscribe(river.EventKindJobCompleted, river.EventKindJobCancelled, river.EventKindJobFailed)
	defer unsubscribe()
	if err := client.Start(ctx); err != nil {
		return err
	}
	defer func() { _ = client.Stop(context.Background()) }()

	orders := []struct {
		id     string
		amount int64
	}{{"1001", 4_999}, {"1002", 250_000}, {"1003", 1_250}}
	var params []river.InsertManyParams
	for _, o := range orders {
		params = append(params,
			river.InsertManyParams{Args: ReserveStockArgs{orderJob{o.id}}},
			river.InsertManyParams{Args: ChargePaymentArgs{orderJob{o.id}, o.amount}},
		)
	}
	inserted, err := client.InsertMany(ctx, params)
	if err != nil {
		return err
	}

	var lines []jobLine
	for len(lines) < len(inserted) {
		select {
		case event := <-finished:
			if event.Kind == river.EventKindJobFailed {
				continue // a retryable failure; the job comes back
			}
			line, err := describe(event)
			if err != nil {
				return err
			}
			lines = append(lines, line)
		case <-ctx.Done():
			return fmt.Errorf("waiting for jobs: %w (%d of %d finished)", ctx.Err(), len(lines), len(inserted))
		}
	}

	sort.Slice(lines, func(i, j int) bool { return lines[i].jobID < lines[j].jobID })
	for _, line := range lines {
		fmt.Println(line.text)
	}
	return nil
}

type jobLine struct {
	jobID int64
	text  string
}

// describe turns a finished job into its output line: kind, process
// instance, outcome.
func describe(event *river.Event) (jobLine, error) {
	jc, err := workflow.JobContextOf(event.Job)
	if err != nil {
		return jobLine{}, err
	}
	outcome := string(event.Job.State)
	if event.Job.State == rivertype.JobStateCancelled && len(event.Job.Errors) > 0 {
		outcome += " (" + event.Job.Errors[len(event.Job.Errors)-1].Error + ")"
	}
	return jobLine{
		jobID: event.Job.ID,
		text: fmt.Sprintf("%-15s process_instance=%-11s priority=%-3d retry_cycle=%-9s %s",
			event.Job.Kind, jc.ProcessInstanceID, *jc.Priority, jc.RetryCycle, outcome),
	}, nil
}

// resetSchema gives every run an empty schema of its own.
func resetSchema(ctx context.Context, dbPool *pgxpool.Pool) error {
	ident := pgx.Identifier{schema}.Sanitize()
	_, err := dbPool.Exec(ctx, "DROP SCHEMA IF EXISTS "+ident+" CASCADE; CREATE SCHEMA "+ident)
	return err
}
