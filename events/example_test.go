package events_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdbtest"
	"github.com/riverqueue/river/rivershared/util/testutil"

	"github.com/riverbpmn/riverbpmn/events"
	"github.com/riverbpmn/riverbpmn/riverbpmntest"
	"github.com/riverbpmn/riverbpmn/workflow"
)

// ShipArgs is the job of the examples: shipping an order, in process
// instance "order-<OrderID>".
type ShipArgs struct {
	OrderID string `json:"order_id"`
}

func (ShipArgs) Kind() string { return "ship_order" }

func (a ShipArgs) JobContext() workflow.JobContext {
	return workflow.JobContext{ProcessDefinitionKey: "order_fulfilment", ProcessInstanceID: "order-" + a.OrderID}
}

// ShipWorker ships an order.
type ShipWorker struct {
	river.WorkerDefaults[ShipArgs]
}

func (ShipWorker) Work(context.Context, *river.Job[ShipArgs]) error { return nil }

// ExampleEvents_Subscribe follows job status events. The subscriber could
// run in any other process connected to the database; with a Name, it would
// resume where it stopped after a restart.
func ExampleEvents_Subscribe() {
	ctx := context.Background()
	tb := testutil.PanicTB()
	schema := riverdbtest.TestSchema(ctx, tb, riverbpmntest.Driver(tb), nil)

	workers := river.NewWorkers()
	river.AddWorker(workers, &ShipWorker{})
	bundle := riverbpmntest.New(ctx, tb, schema, &riverbpmntest.Opts{
		// Clients of an engine with Config.Events switch events on when
		// they start; the elected leader prunes events older than a day.
		Config: &workflow.Config{Events: &events.Config{Retention: 24 * time.Hour}},
		ClientConfig: &river.Config{
			Logger:  slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
			Queues:  map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 10}},
			Workers: workers,
		},
	})
	defer bundle.Engine.Events().Disable(ctx) //nolint:errcheck // the example's schema is reused by tests
	if err := bundle.Client.Start(ctx); err != nil {
		panic(err)
	}
	defer bundle.Client.Stop(ctx) //nolint:errcheck

	if _, err := bundle.Client.Insert(ctx, ShipArgs{OrderID: "7"}, nil); err != nil {
		panic(err)
	}

	subCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var received []events.Event
	err := bundle.Engine.Events().Subscribe(subCtx, &events.SubscribeConfig{From: &events.Cursor{}},
		func(_ context.Context, batch []events.Event) error {
			for _, ev := range batch {
				received = append(received, ev)
				if ev.Status == events.Succeeded {
					cancel()
				}
			}
			return nil
		})
	if !errors.Is(err, context.Canceled) {
		panic(err)
	}
	for _, ev := range received {
		fmt.Println(ev.Status, ev.Kind, ev.ProcessInstanceID)
	}

	// Output:
	// RUNNING ship_order order-7
	// SUCCEEDED ship_order order-7
}

// ExampleEvents_List pages through the events of one process instance,
// newest first, as an operator reads them: each page's Next is the After of
// the next one, and the last page's Next is empty.
func ExampleEvents_List() {
	ctx := context.Background()
	tb := testutil.PanicTB()
	schema := riverdbtest.TestSchema(ctx, tb, riverbpmntest.Driver(tb), nil)
	bundle := riverbpmntest.New(ctx, tb, schema, nil)
	handle := bundle.Engine.Events()
	if err := handle.Enable(ctx); err != nil {
		panic(err)
	}
	defer handle.Disable(ctx) //nolint:errcheck // the example's schema is reused by tests

	// Three jobs of order 9 are stopped before they run: three ABORTED
	// events.
	for range 3 {
		res, err := bundle.Client.Insert(ctx, ShipArgs{OrderID: "9"}, &river.InsertOpts{ScheduledAt: time.Now().Add(time.Hour)})
		if err != nil {
			panic(err)
		}
		if _, err := bundle.Engine.Jobs().Stop(ctx, res.Job.ID); err != nil {
			panic(err)
		}
	}

	params := &events.ListParams{ProcessInstanceID: "order-9", Limit: 2}
	for {
		page, err := handle.List(ctx, params)
		if err != nil {
			panic(err)
		}
		fmt.Println("page of", len(page.Items), "last:", page.Next == "")
		if page.Next == "" {
			break
		}
		params.After = page.Next
	}

	// Output:
	// page of 2 last: false
	// page of 1 last: true
}
