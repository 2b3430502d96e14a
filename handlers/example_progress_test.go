package handlers_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdbtest"
	"github.com/riverqueue/river/rivershared/riversharedtest"
	"github.com/riverqueue/river/rivershared/util/testutil"

	"github.com/riverbpmn/riverbpmn/handlers"
	"github.com/riverbpmn/riverbpmn/workflow"
)

// ImportArgs imports a list of files.
type ImportArgs struct {
	Files []string `json:"files"`
}

func (ImportArgs) Kind() string { return "import_files" }

type ImportWorker struct {
	river.WorkerDefaults[ImportArgs]
}

func (w *ImportWorker) Work(ctx context.Context, job *river.Job[ImportArgs]) error {
	progress, err := handlers.Progress(ctx)
	if err != nil {
		return err
	}
	progress.SetTotal(int64(len(job.Args.Files)))
	for range job.Args.Files {
		// ... import the file ...
		progress.Advance(1)
	}
	return nil
}

// ExampleProgress reports a job's progress from its work; the engine reads it
// back (as do `riverbpmn progress` and River UI, under metadata
// "bpmn_progress").
func ExampleProgress() {
	ctx := context.Background()
	dbPool, err := pgxpool.New(ctx, riversharedtest.TestDatabaseURL())
	if err != nil {
		panic(err)
	}
	defer dbPool.Close()
	probe, err := workflow.NewEngine(dbPool, nil)
	if err != nil {
		panic(err)
	}
	schema := riverdbtest.TestSchema(ctx, testutil.PanicTB(), probe.Driver(), nil)
	engine, err := workflow.NewEngine(dbPool, &workflow.Config{Schema: schema})
	if err != nil {
		panic(err)
	}

	workers := river.NewWorkers()
	river.AddWorker(workers, &ImportWorker{})
	client, err := workflow.NewClient(engine, &river.Config{
		Logger:  slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
		Queues:  map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 1}},
		Schema:  schema,
		Workers: workers,
	})
	if err != nil {
		panic(err)
	}
	completed, cancel := client.Subscribe(river.EventKindJobCompleted)
	defer cancel()
	if err := client.Start(ctx); err != nil {
		panic(err)
	}
	res, err := client.Insert(ctx, ImportArgs{Files: []string{"a.csv", "b.csv", "c.csv"}}, nil)
	if err != nil {
		panic(err)
	}
	<-completed
	if err := client.Stop(ctx); err != nil {
		panic(err)
	}

	status, err := engine.JobStatus(ctx, res.Job.ID)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%s: %d/%d (%.0f%%)\n", status.Status, status.Progress.Done, status.Progress.Total, *status.Progress.Percent)

	// Output:
	// SUCCEEDED: 3/3 (100%)
}
