package workflow_test

import (
	"context"
	"errors"
	"log"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/riverbpmn/riverbpmn/liveness"
	"github.com/riverbpmn/riverbpmn/workflow"
)

// Example_deploy is a worker process as an orchestrator runs it: its jobs'
// connections go through a transaction-mode pooler (PgBouncer), its
// liveness session on a direct connection, and on SIGTERM it stops within
// the deploy's grace period. When the stop gives up with jobs still
// running, the process exits: its liveness session ends with it, and the
// jobs are given back to the other workers within seconds, without using
// an attempt. See docs/operating/deploys.md.
func Example_deploy() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()

	// Jobs, fetches and inserts through the pooler: pgx without prepared
	// statements, River without LISTEN.
	dbPool, err := pgxpool.New(ctx, os.Getenv("POOLER_URL")+"?default_query_exec_mode=exec")
	if err != nil {
		log.Fatal(err)
	}
	defer dbPool.Close()
	// The liveness session holds a session-level advisory lock: a direct
	// connection to PostgreSQL.
	direct, err := pgx.ParseConfig(os.Getenv("POSTGRES_DIRECT_URL"))
	if err != nil {
		log.Fatal(err)
	}
	engine, err := workflow.NewEngine(dbPool, &workflow.Config{
		Schema:   "app",
		Liveness: liveness.Config{ConnConfig: direct},
	})
	if err != nil {
		log.Fatal(err)
	}
	workers := river.NewWorkers()
	// ... river.AddWorker(workers, ...)
	client, err := workflow.NewClient(engine, &river.Config{
		PollOnly: true,
		Queues:   map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 10}},
		Workers:  workers,
	})
	if err != nil {
		log.Fatal(err)
	}
	// Start's context is not the signal's: cancelling it would cancel the
	// running jobs at once, where SIGTERM asks for a graceful stop.
	if err := client.Start(context.WithoutCancel(ctx)); err != nil {
		log.Fatal(err)
	}

	<-ctx.Done()
	// A little less than the orchestrator's grace period (Kubernetes:
	// terminationGracePeriodSeconds, 30 s by default).
	stopCtx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
	defer cancel()
	if err := client.Stop(stopCtx); errors.Is(err, context.DeadlineExceeded) {
		// Jobs still run: exit anyway. Their session ends with the process
		// and the leader gives them back (no attempt used).
		log.Print("stop gave up; exiting with jobs running: they are given back to the other workers")
	}
}
