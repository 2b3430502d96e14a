package firstprogram_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivershared/riversharedtest"

	"github.com/riverbpmn/riverbpmn/workflow"
)

// The README's first program: the code of its snippets is in this file, and
// `make docs-check` verifies that they match it line for line.

// ChargeCardArgs is the job of activity "charge" of an order's process
// instance. Its job context names the instance and the job definition, which
// gives the job its activity, priority and retry cycle.
type ChargeCardArgs struct {
	OrderID string `json:"order_id"`
}

func (ChargeCardArgs) Kind() string { return "charge_card" }

func (a ChargeCardArgs) JobContext() workflow.JobContext {
	return workflow.JobContext{ProcessInstanceID: "order-" + a.OrderID, JobDefinitionID: "charge-async"}
}

// PackParcelArgs is the job of activity "pack", one per parcel, in the same
// process instance.
type PackParcelArgs struct {
	OrderID string `json:"order_id"`
	Parcel  int    `json:"parcel"`
}

func (PackParcelArgs) Kind() string { return "pack_parcel" }

func (a PackParcelArgs) JobContext() workflow.JobContext {
	return workflow.JobContext{ProcessInstanceID: "order-" + a.OrderID, JobDefinitionID: "pack-async"}
}

// ChargeCardWorker fails its first execution: the retry cycle decides
// when the next one starts.
type ChargeCardWorker struct {
	river.WorkerDefaults[ChargeCardArgs]
}

func (w *ChargeCardWorker) Work(ctx context.Context, job *river.Job[ChargeCardArgs]) error {
	if job.Attempt == 1 {
		return errors.New("card declined")
	}
	return nil
}

// PackParcelWorker takes 100 ms a parcel and records how many parcels of
// one order are being packed at once.
type PackParcelWorker struct {
	river.WorkerDefaults[PackParcelArgs]
	mu            sync.Mutex
	running, most int
}

func (w *PackParcelWorker) Work(ctx context.Context, job *river.Job[PackParcelArgs]) error {
	w.mu.Lock()
	w.running++
	w.most = max(w.most, w.running)
	w.mu.Unlock()
	time.Sleep(100 * time.Millisecond)
	w.mu.Lock()
	w.running--
	w.mu.Unlock()
	return nil
}

// Example is the README's first program: a job definition
// with a retry cycle, a job that fails once and is retried by that cycle,
// and three exclusive jobs of one process instance that run one at a time
// on a client with ten workers.
func Example() {
	ctx := context.Background()
	dbPool, err := pgxpool.New(ctx, riversharedtest.TestDatabaseURL())
	if err != nil {
		panic(err)
	}
	defer dbPool.Close()
	const schema = "riverbpmn_first_program"
	if _, err := dbPool.Exec(ctx, "DROP SCHEMA IF EXISTS "+schema+" CASCADE; CREATE SCHEMA "+schema); err != nil {
		panic(err)
	}

	// River's migrations, then riverbpmn's (riverbpmn migrate up does the same).
	if _, err := workflow.MigrateUp(ctx, dbPool, &workflow.MigrateOpts{Schema: schema}); err != nil {
		panic(err)
	}

	engine, err := workflow.NewEngine(dbPool, &workflow.Config{
		Schema:             schema,
		ProcessDefinitions: []workflow.ProcessDefinition{{Key: "order_fulfilment"}},
		JobDefinitions: []workflow.JobDefinition{
			{ID: "charge-async", ProcessDefinitionKey: "order_fulfilment", ActivityID: "charge", Kind: "charge_card", RetryCycle: "R3/PT1S"},
			{ID: "pack-async", ProcessDefinitionKey: "order_fulfilment", ActivityID: "pack", Kind: "pack_parcel"},
		},
	})
	if err != nil {
		panic(err)
	}

	workers := river.NewWorkers()
	river.AddWorker(workers, &ChargeCardWorker{})
	packer := &PackParcelWorker{}
	river.AddWorker(workers, packer)

	// One call: the engine's driver, middleware, retry policy, schema and logger.
	client, err := workflow.NewClient(engine, &river.Config{
		Queues:            map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 10}},
		Workers:           workers,
		FetchPollInterval: 100 * time.Millisecond,
		Logger:            slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})),
	})
	if err != nil {
		panic(err)
	}
	completed, cancel := client.Subscribe(river.EventKindJobCompleted)
	defer cancel()
	if err := client.Start(ctx); err != nil {
		panic(err)
	}

	charge, err := client.Insert(ctx, ChargeCardArgs{OrderID: "42"}, nil)
	if err != nil {
		panic(err)
	}
	for parcel := 1; parcel <= 3; parcel++ {
		if _, err := client.Insert(ctx, PackParcelArgs{OrderID: "42", Parcel: parcel}, nil); err != nil {
			panic(err)
		}
	}

	for range 4 {
		event := <-completed
		if event.Job.ID == charge.Job.ID {
			firstRun, secondRun := event.Job.Errors[0].At, *event.Job.AttemptedAt
			fmt.Printf("charge_card: %d executions of %d, the second >= 1 s after the first: %v\n",
				event.Job.Attempt, event.Job.MaxAttempts, secondRun.Sub(firstRun) >= time.Second)
		}
	}
	fmt.Printf("pack_parcel: at most %d of order-42's parcels packed at once\n", packer.most)

	if err := client.Stop(ctx); err != nil {
		panic(err)
	}

	// Output:
	// charge_card: 2 executions of 3, the second >= 1 s after the first: true
	// pack_parcel: at most 1 of order-42's parcels packed at once
}
