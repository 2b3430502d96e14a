// Command timerworker is a River worker process for the timer durability
// test (handlers.TestTimerDurabilityAcrossProcesses): it works "tick" timer
// jobs with riverbpmn's engine and timer middleware until SIGTERM (graceful
// stop) or SIGKILL. Every run is recorded in the table timer_runs of the
// schema: a "started" row committed before the work, and a "completed" row
// written in the transaction that completes the job (river.JobCompleteTx).
//
//	timerworker --database-url URL --schema S --client-id ID
package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/riverbpmn/riverbpmn/handlers"
	"github.com/riverbpmn/riverbpmn/workflow"
)

// TickArgs are the args of the test's timer jobs.
type TickArgs struct {
	N int `json:"n"`
}

// Kind is the River job kind.
func (TickArgs) Kind() string { return "tick" }

type tickWorker struct {
	river.WorkerDefaults[TickArgs]

	pool     *pgxpool.Pool
	schema   string
	clientID string
}

func (w *tickWorker) Work(ctx context.Context, job *river.Job[TickArgs]) error {
	firing, ok := handlers.FiringFromContext(ctx)
	if !ok {
		return fmt.Errorf("job %d is not a timer firing", job.ID)
	}
	table := pgx.Identifier{w.schema, "timer_runs"}.Sanitize()
	if _, err := w.pool.Exec(ctx, "INSERT INTO "+table+" (job_id, timer_id, occurrence, attempt, client_id, pid, event) VALUES ($1, $2, $3, $4, $5, $6, 'started')",
		job.ID, firing.TimerID, firing.Occurrence, job.Attempt, w.clientID, os.Getpid()); err != nil {
		return err
	}
	time.Sleep(time.Duration(rand.IntN(300)) * time.Millisecond) // work
	tx, err := w.pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, "INSERT INTO "+table+" (job_id, timer_id, occurrence, attempt, client_id, pid, event) VALUES ($1, $2, $3, $4, $5, $6, 'completed')",
		job.ID, firing.TimerID, firing.Occurrence, job.Attempt, w.clientID, os.Getpid()); err != nil {
		return err
	}
	done, err := river.JobCompleteTx[*workflow.Driver](ctx, tx, job)
	if err != nil {
		return err
	}
	if done.State != rivertype.JobStateCompleted {
		// River took the job back (rescued it as stuck) while this run
		// worked: this run must not count as its completion.
		return fmt.Errorf("job %d is %s, no longer running; not completed by this run", job.ID, done.State)
	}
	return tx.Commit(ctx)
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "timerworker:", err)
		os.Exit(1)
	}
}

func run() error {
	var databaseURL, schema, clientID string
	flag.StringVar(&databaseURL, "database-url", os.Getenv("DATABASE_URL"), "PostgreSQL URL")
	flag.StringVar(&schema, "schema", "", "schema")
	flag.StringVar(&clientID, "client-id", "", "River client id")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()

	pool, err := pgxpool.New(ctx, databaseURL)
	if err != nil {
		return err
	}
	defer pool.Close()
	engine, err := workflow.NewEngine(pool, &workflow.Config{Schema: schema})
	if err != nil {
		return err
	}
	timers := handlers.NewTimers(pool, &handlers.TimersConfig{Schema: schema})
	workers := river.NewWorkers()
	river.AddWorker(workers, &tickWorker{pool: pool, schema: schema, clientID: clientID})
	client, err := workflow.NewClient(engine, &river.Config{
		ID:                   clientID,
		Schema:               schema,
		Queues:               map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 50}},
		FetchPollInterval:    100 * time.Millisecond,
		FetchCooldown:        20 * time.Millisecond,
		JobTimeout:           5 * time.Second,
		RescueStuckJobsAfter: 10 * time.Second,
		Middleware:           []rivertype.Middleware{engine.Middleware(), timers.Middleware()},
		RetryPolicy:          engine.RetryPolicy(),
		Workers:              workers,
	})
	if err != nil {
		return err
	}
	if err := client.Start(context.Background()); err != nil {
		return err
	}
	fmt.Println("started")
	<-ctx.Done()
	stopCtx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return client.Stop(stopCtx)
}
