package handlers_test

import (
	"context"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/riverbpmn/riverbpmn/handlers"
	"github.com/riverbpmn/riverbpmn/workflow"
)

// ReminderArgs is the job of a timer's occurrences.
type ReminderArgs struct {
	Order string `json:"order"`
}

func (ReminderArgs) Kind() string { return "reminder" }

// docsTimers is the timers guide's snippet (docs/guides/timers.md): a
// client wired with the timers' middleware, and a timer cycle inserted in
// the business transaction. It is compiled, not run; the handlers tests run
// the same calls.
func docsTimers(ctx context.Context, dbPool *pgxpool.Pool, engine *workflow.Engine, workers *river.Workers, schema string) error {
	timers := handlers.NewTimers(dbPool, &handlers.TimersConfig{Schema: schema})
	client, err := workflow.NewClient(engine, &river.Config{
		Middleware: []rivertype.Middleware{timers.Middleware()}, // after the engine's, which NewClient puts first
		Queues:     map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 10}},
		Workers:    workers,
	})
	if err != nil {
		return err
	}

	tx, err := dbPool.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	jobContext := workflow.JobContext{ProcessInstanceID: "order-42", ProcessDefinitionKey: "order_fulfilment", ActivityID: "remind"}
	_, err = timers.InsertTx(ctx, client, tx, ReminderArgs{Order: "42"},
		handlers.Timer{Cycle: "R3/PT10H"}, // or Date: "2026-03-01T09:00:00Z", Duration: "PT5M",
		jobContext.InsertOpts())           // Cycle: "0 0 9 ? * MON-FRI" (cron, Spring dialect)
	if err != nil {
		return err
	}
	return tx.Commit(ctx)
}

var _ = docsTimers
