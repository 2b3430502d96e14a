// Command testworker is a River client with riverbpmn's engine, run as a
// separate OS process by the cross-process tests (stop across processes,
// events across restarts). It works two kinds of jobs until SIGINT/SIGTERM:
//
//   - "testworker_block": prints "started <job id>" and waits for its context
//     to be cancelled, then returns the context's error;
//   - "testworker_noop": does nothing.
//
// Flags: --database-url, --schema, --workers, --events (Config.Events).
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/riverbpmn/riverbpmn/workflow"
)

// BlockArgs is a job that runs until it is stopped.
type BlockArgs struct{}

// Kind is the job's kind.
func (BlockArgs) Kind() string { return "testworker_block" }

// NoopArgs is a job that does nothing.
type NoopArgs struct {
	Seq int `json:"seq"`
}

// Kind is the job's kind.
func (NoopArgs) Kind() string { return "testworker_noop" }

type blockWorker struct {
	river.WorkerDefaults[BlockArgs]
}

// Timeout: none; the job runs until stopped.
func (blockWorker) Timeout(*river.Job[BlockArgs]) time.Duration { return -1 }

func (blockWorker) Work(ctx context.Context, job *river.Job[BlockArgs]) error {
	fmt.Printf("started %d\n", job.ID)
	<-ctx.Done()
	fmt.Printf("cancelled %d: %v\n", job.ID, context.Cause(ctx))
	return ctx.Err()
}

type noopWorker struct {
	river.WorkerDefaults[NoopArgs]
}

func (noopWorker) Work(context.Context, *river.Job[NoopArgs]) error { return nil }

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "testworker:", err)
		os.Exit(1)
	}
}

func run() error {
	var (
		url        = flag.String("database-url", os.Getenv("DATABASE_URL"), "PostgreSQL URL")
		schema     = flag.String("schema", "", "schema")
		maxWorkers = flag.Int("workers", 10, "MaxWorkers of the default queue")
		withEvents = flag.Bool("events", false, "Config.Events")
	)
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	pool, err := pgxpool.New(ctx, *url)
	if err != nil {
		return err
	}
	defer pool.Close()
	config := &workflow.Config{Schema: *schema}
	if *withEvents {
		config.Events = &workflow.EventsConfig{}
	}
	engine, err := workflow.NewEngine(pool, config)
	if err != nil {
		return err
	}
	workers := river.NewWorkers()
	river.AddWorker(workers, blockWorker{})
	river.AddWorker(workers, noopWorker{})
	client, err := workflow.NewClient(engine, &river.Config{
		FetchCooldown:     5 * time.Millisecond,
		FetchPollInterval: 100 * time.Millisecond,
		// Jobs left running by a PostgreSQL restart (their completion was
		// lost) are rescued soon.
		JobTimeout:           2 * time.Second,
		RescueStuckJobsAfter: 5 * time.Second,
		Logger:               slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
		Middleware:           []rivertype.Middleware{engine.Middleware()},
		Queues:               map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: *maxWorkers}},
		Schema:               *schema,
		Workers:              workers,
	})
	if err != nil {
		return err
	}
	if err := client.Start(ctx); err != nil {
		return err
	}
	fmt.Println("ready")
	<-ctx.Done()
	stopCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return client.Stop(stopCtx)
}
