// Command timers shows riverbpmn's handlers on a River client: a process of
// three steps chained by asynchronous continuations (each step inserts the
// next in its own completing transaction, handlers.ContinueTx) and a timer
// cycle on the same process instance (handlers.Timers), all exclusive within
// the instance.
//
//	DATABASE_URL=postgres://localhost:5432/test go run ./examples/timers
//
// It uses (and first empties) the schema "riverbpmn_timers_example". It
// takes a few seconds: River makes scheduled jobs available every 5 seconds.
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/riverbpmn/riverbpmn/exclusive"
	"github.com/riverbpmn/riverbpmn/handlers"
	"github.com/riverbpmn/riverbpmn/timer"
	"github.com/riverbpmn/riverbpmn/workflow"
)

const schema = "riverbpmn_timers_example"

// The three steps of the order process; each carries the order id.

// ReserveArgs is the first step.
type ReserveArgs struct {
	Order string `json:"order"`
}

// Kind is the River job kind.
func (ReserveArgs) Kind() string { return "reserve" }

// ChargeArgs is the second step.
type ChargeArgs struct {
	Order string `json:"order"`
}

// Kind is the River job kind.
func (ChargeArgs) Kind() string { return "charge" }

// ShipArgs is the third step.
type ShipArgs struct {
	Order string `json:"order"`
}

// Kind is the River job kind.
func (ShipArgs) Kind() string { return "ship" }

// ReminderArgs is the timer: a reminder sent to the customer on a cycle.
type ReminderArgs struct {
	Order string `json:"order"`
}

// Kind is the River job kind.
func (ReminderArgs) Kind() string { return "reminder" }

// journal collects what the workers did, in order.
type journal struct {
	mu    sync.Mutex
	lines []string
	done  chan struct{}
	want  int
}

func (j *journal) add(format string, args ...any) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.lines = append(j.lines, fmt.Sprintf(format, args...))
	if len(j.lines) == j.want {
		close(j.done)
	}
}

// step is a worker for one step that continues with the next one (or ends
// the process when next is nil).
type step[T river.JobArgs] struct {
	river.WorkerDefaults[T]

	pool    *pgxpool.Pool
	journal *journal
	next    func(T) (river.JobArgs, handlers.Step)
}

func (w *step[T]) Work(ctx context.Context, job *river.Job[T]) error {
	jc, err := workflow.JobContextOf(job.JobRow)
	if err != nil {
		return err
	}
	tx, err := w.pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if w.next == nil {
		if _, err := river.JobCompleteTx[*workflow.Driver](ctx, tx, job); err != nil {
			return err
		}
		w.journal.add("%s %s (%s): done, process ends", jc.ProcessInstanceID, job.Kind, jc.JobType)
		return tx.Commit(ctx)
	}
	args, next := w.next(job.Args)
	res, err := handlers.ContinueTx(ctx, tx, job, args, next)
	if err != nil {
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return err
	}
	w.journal.add("%s %s (%s): done, continues with %s", jc.ProcessInstanceID, job.Kind, jc.JobType, res.Job.Kind)
	return nil
}

type reminderWorker struct {
	river.WorkerDefaults[ReminderArgs]

	journal *journal
}

func (w *reminderWorker) Work(ctx context.Context, job *river.Job[ReminderArgs]) error {
	firing, ok := handlers.FiringFromContext(ctx)
	if !ok {
		return errors.New("reminder is not a timer firing: add Timers.Middleware to the client")
	}
	jc, err := workflow.JobContextOf(job.JobRow)
	if err != nil {
		return err
	}
	then := "the cycle ends"
	if !firing.Ended {
		then = fmt.Sprintf("occurrence %d is already scheduled", firing.Occurrence+1)
	}
	w.journal.add("%s reminder (%s): occurrence %d of timer %d fired; %s", jc.ProcessInstanceID, jc.JobType, firing.Occurrence, firing.TimerID, then)
	return nil
}

func main() {
	if err := run(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "timers:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()

	databaseURL := os.Getenv("DATABASE_URL")
	if databaseURL == "" {
		return errors.New("set DATABASE_URL")
	}
	dbPool, err := pgxpool.New(ctx, databaseURL)
	if err != nil {
		return err
	}
	defer dbPool.Close()
	ident := pgx.Identifier{schema}.Sanitize()
	if _, err := dbPool.Exec(ctx, "DROP SCHEMA IF EXISTS "+ident+" CASCADE; CREATE SCHEMA "+ident); err != nil {
		return err
	}
	if _, err := workflow.MigrateUp(ctx, dbPool, &workflow.MigrateOpts{Schema: schema}); err != nil {
		return err
	}

	engine, err := workflow.NewEngine(dbPool, &workflow.Config{
		Schema:         schema,
		ExclusiveScope: exclusive.ProcessInstance, // steps and timer of one order never overlap
	})
	if err != nil {
		return err
	}
	timers := handlers.NewTimers(dbPool, &handlers.TimersConfig{Schema: schema})

	j := &journal{done: make(chan struct{}), want: 5} // three steps, two reminders
	workers := river.NewWorkers()
	river.AddWorker(workers, &step[ReserveArgs]{pool: dbPool, journal: j, next: func(a ReserveArgs) (river.JobArgs, handlers.Step) {
		return ChargeArgs(a), handlers.Step{ActivityID: "charge"}
	}})
	river.AddWorker(workers, &step[ChargeArgs]{pool: dbPool, journal: j, next: func(a ChargeArgs) (river.JobArgs, handlers.Step) {
		return ShipArgs(a), handlers.Step{ActivityID: "ship"}
	}})
	river.AddWorker(workers, &step[ShipArgs]{pool: dbPool, journal: j})
	river.AddWorker(workers, &reminderWorker{journal: j})

	client, err := river.NewClient(engine.Driver(), &river.Config{
		Logger:      slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
		Middleware:  []rivertype.Middleware{engine.Middleware(), timers.Middleware()},
		Queues:      map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 10}},
		RetryPolicy: engine.RetryPolicy(),
		Schema:      schema,
		Workers:     workers,
	})
	if err != nil {
		return err
	}
	if err := client.Start(ctx); err != nil {
		return err
	}
	defer func() { _ = client.Stop(context.Background()) }()

	// Start process instance order-42: its first step and a reminder timer
	// R2/PT1S, in one transaction.
	tx, err := dbPool.Begin(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback(ctx) }()
	instance := workflow.JobContext{ProcessInstanceID: "order-42", ProcessDefinitionKey: "order"}
	first := instance
	first.ActivityID, first.JobType = "reserve", workflow.JobTypeAsync
	if _, err := client.InsertTx(ctx, tx, ReserveArgs{Order: "42"}, first.InsertOpts()); err != nil {
		return err
	}
	reminder := instance
	reminder.ActivityID = "remind"
	res, err := timers.InsertTx(ctx, client, tx, ReminderArgs{Order: "42"}, handlers.Timer{Cycle: "R2/PT1S"}, reminder.InsertOpts())
	if err != nil {
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return err
	}
	fmt.Printf("order-42 started; reminder timer %d (R2/PT1S) first due %s\n", res.TimerID, res.DueAt.Format(time.RFC3339))

	select {
	case <-j.done:
	case <-ctx.Done():
		return fmt.Errorf("waiting for the process: %w", ctx.Err())
	}
	for _, line := range j.lines {
		fmt.Println(line)
	}
	listed, err := engine.Timers().List(ctx, &timer.ListParams{Filter: timer.Filter{ProcessInstanceID: "order-42", Ended: true}})
	if err != nil {
		return err
	}
	for _, info := range listed.Items {
		fmt.Printf("timer %d: %s, %d occurrences, ended: %s\n", info.ID, info.Definition, info.Occurrence, info.EndReason)
	}
	return nil
}
