package timer_test

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river/riverdbtest"
	"github.com/riverqueue/river/rivershared/util/testutil"

	"github.com/riverbpmn/riverbpmn/handlers"
	"github.com/riverbpmn/riverbpmn/riverbpmntest"
	"github.com/riverbpmn/riverbpmn/timer"
	"github.com/riverbpmn/riverbpmn/workflow"
)

// ExampleTimers_List inserts a reminder timer, lists the timers of its
// process instance, and cancels it through the engine's timers handle.
func ExampleTimers_List() {
	ctx := context.Background()
	tb := testutil.PanicTB()
	schema := riverdbtest.TestSchema(ctx, tb, riverbpmntest.Driver(tb), nil)
	bundle := riverbpmntest.New(ctx, tb, schema, nil)

	inserter := handlers.NewTimers(bundle.DBPool, &handlers.TimersConfig{Schema: schema})
	err := pgx.BeginFunc(ctx, bundle.DBPool, func(tx pgx.Tx) error {
		opts := workflow.JobContext{ProcessInstanceID: "order-5", ProcessDefinitionKey: "order", ActivityID: "remind"}.InsertOpts()
		_, err := inserter.InsertTx(ctx, bundle.Client, tx, remindArgs{}, handlers.Timer{Cycle: "R3/PT1H"}, opts)
		return err
	})
	if err != nil {
		panic(err)
	}

	timers := bundle.Engine.Timers()
	page, err := timers.List(ctx, &timer.ListParams{Filter: timer.Filter{ProcessInstanceID: "order-5"}})
	if err != nil {
		panic(err)
	}
	for _, info := range page.Items {
		fmt.Println(info.Type, info.Definition, "repetitions left:", *info.RepetitionsLeft, "last page:", page.Next == "")
		if _, err := timers.Cancel(ctx, info.ID); err != nil {
			panic(err)
		}
	}

	// Output:
	// cycle R3/PT1H repetitions left: 2 last page: true
}
