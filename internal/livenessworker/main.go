// Command livenessworker is the worker process of riverbpmn's liveness
// acceptance tests (workflow/liveness_process_test.go): one River client
// with the engine's default configuration (so exclusivity by process
// instance and liveness, both on by default), working LivenessArgs jobs, printing one
// line per run start and end on stdout so that the test can rebuild the
// timeline of every process, including one it kills with SIGKILL.
//
//	livenessworker -db URL -schema S -id CLIENT [-workers N] [-stop-timeout D]
//	    [-poll-only] [-liveness-db URL] [-rescue-after D]
//
// -stop-timeout bounds client.Stop on SIGTERM (a deploy's grace period): a
// stop that gives up exits with jobs still running, status 3. -poll-only
// and -liveness-db are for a transaction-mode pooler in -db (River without
// LISTEN; the liveness session on a direct connection). -rescue-after sets
// River's RescueStuckJobsAfter (and JobTimeout to the same).
//
// Output lines: "BEGIN <unix ns> <job id> <attempt> <key>", "END <unix ns>
// <job id> <attempt> <key> <outcome>", and "READY" once the client started.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/riverbpmn/riverbpmn/workflow"
)

// LivenessArgs is the tests' job: SleepMillis of work for one process
// instance. With LongFirstRun, a run of the job that has no error yet (its
// first) works for a minute, so it is still running when the test kills its
// worker; with StuckFirstRun too, that run ignores its context's
// cancellation, as a stuck job does. TimeoutMillis is the job's River
// timeout (Worker.Timeout; 0: the client's JobTimeout).
type LivenessArgs struct {
	Instance      string `json:"instance"`
	SleepMillis   int    `json:"sleep_millis"`
	LongFirstRun  bool   `json:"long_first_run,omitempty"`
	StuckFirstRun bool   `json:"stuck_first_run,omitempty"`
	TimeoutMillis int    `json:"timeout_millis,omitempty"`
	RetryCycle    string `json:"retry_cycle,omitempty"`
}

// Kind is River's job kind.
func (LivenessArgs) Kind() string { return "liveness_work" }

// JobContext makes every job an exclusive job of its instance.
func (a LivenessArgs) JobContext() workflow.JobContext {
	return workflow.JobContext{ProcessInstanceID: a.Instance, ProcessDefinitionKey: "liveness", RetryCycle: a.RetryCycle}
}

type out struct {
	mu sync.Mutex
}

func (o *out) line(format string, args ...any) {
	o.mu.Lock()
	defer o.mu.Unlock()
	fmt.Fprintf(os.Stdout, format+"\n", args...)
}

type worker struct {
	river.WorkerDefaults[LivenessArgs]
	out *out
}

// Timeout is the job's TimeoutMillis.
func (w *worker) Timeout(job *river.Job[LivenessArgs]) time.Duration {
	return time.Duration(job.Args.TimeoutMillis) * time.Millisecond
}

func (w *worker) Work(ctx context.Context, job *river.Job[LivenessArgs]) error {
	w.out.line("BEGIN %d %d %d %s", time.Now().UnixNano(), job.ID, job.Attempt, job.Args.Instance)
	sleep := time.Duration(job.Args.SleepMillis) * time.Millisecond
	if job.Args.LongFirstRun && len(job.Errors) == 0 {
		sleep = time.Minute
		if job.Args.StuckFirstRun {
			ctx = context.WithoutCancel(ctx)
		}
	}
	outcome := "done"
	var err error
	select {
	case <-ctx.Done():
		outcome, err = "cancelled", ctx.Err()
	case <-time.After(sleep):
	}
	w.out.line("END %d %d %d %s %s", time.Now().UnixNano(), job.ID, job.Attempt, job.Args.Instance, outcome)
	return err
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "livenessworker:", err)
		os.Exit(1)
	}
}

func run() error {
	var (
		dbURL   = flag.String("db", "", "database URL")
		schema  = flag.String("schema", "", "schema")
		id      = flag.String("id", "", "River client id")
		workers = flag.Int("workers", 10, "MaxWorkers")
		batch   = flag.Int("batch", 0, "workflow.Config.ExclusiveBatch")
		stopFor = flag.Duration("stop-timeout", 10*time.Second, "how long client.Stop may take on SIGTERM")
		poll    = flag.Bool("poll-only", false, "river.Config.PollOnly")
		direct  = flag.String("liveness-db", "", "database URL of the liveness session (workflow.Config.Liveness.ConnConfig)")
		rescue  = flag.Duration("rescue-after", 0, "river.Config.RescueStuckJobsAfter (0: River's default)")
	)
	flag.Parse()
	if *dbURL == "" || *id == "" {
		return errors.New("-db and -id are required")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	poolConfig, err := pgxpool.ParseConfig(*dbURL)
	if err != nil {
		return err
	}
	poolConfig.ConnConfig.RuntimeParams["application_name"] = *id
	pool, err := pgxpool.NewWithConfig(ctx, poolConfig)
	if err != nil {
		return err
	}
	defer pool.Close()

	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	// Nothing but the schema (and, for the batched test, ExclusiveBatch):
	// what the tests prove holds for an engine configured with nothing.
	config := &workflow.Config{
		Schema:         *schema,
		ExclusiveBatch: *batch,
	}
	if *direct != "" {
		connConfig, err := pgx.ParseConfig(*direct)
		if err != nil {
			return err
		}
		connConfig.RuntimeParams["application_name"] = *id
		config.Liveness.ConnConfig = connConfig
	}
	engine, err := workflow.NewEngine(pool, config)
	if err != nil {
		return err
	}
	o := &out{}
	ws := river.NewWorkers()
	river.AddWorker(ws, &worker{out: o})
	riverConfig := &river.Config{
		ID:       *id,
		Logger:   logger,
		PollOnly: *poll,
		Queues:   map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: *workers}},
		Workers:  ws,
	}
	if *rescue > 0 {
		riverConfig.RescueStuckJobsAfter = *rescue
		riverConfig.JobTimeout = *rescue
	}
	client, err := workflow.NewClient(engine, riverConfig)
	if err != nil {
		return err
	}
	// SIGTERM asks for client.Stop (a graceful stop, as a deploy does), not
	// the hard stop that cancelling Start's context would be.
	if err := client.Start(context.WithoutCancel(ctx)); err != nil {
		return err
	}
	o.line("READY")
	<-ctx.Done()
	stopCtx, cancel := context.WithTimeout(context.Background(), *stopFor)
	defer cancel()
	if err := client.Stop(stopCtx); err != nil {
		// A deploy's grace period ran out: the process exits with its jobs
		// still running, as an orchestrator would end it.
		fmt.Fprintln(os.Stderr, "livenessworker: stop gave up:", err)
		os.Exit(3)
	}
	return nil
}
