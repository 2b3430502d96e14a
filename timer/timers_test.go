package timer_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdbtest"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/handlers"
	"github.com/riverbpmn/riverbpmn/riverbpmntest"
	"github.com/riverbpmn/riverbpmn/timer"
	"github.com/riverbpmn/riverbpmn/workflow"
)

type remindArgs struct{}

func (remindArgs) Kind() string { return "remind" }

// TestTimers tests the timers handle (workflow.Engine.Timers) beyond what
// the timer tests of package handlers show of Get, SetDueDate, Cancel and
// Prune: its one listing.
func TestTimers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	type testBundle struct {
		*riverbpmntest.Bundle

		// insert inserts a timer of cycle in process instance instance.
		insert func(t *testing.T, cycle, instance string) int64
	}
	setup := func(t *testing.T) *testBundle {
		t.Helper()
		schema := riverdbtest.TestSchema(ctx, t, riverbpmntest.Driver(t), nil)
		b := riverbpmntest.New(ctx, t, schema, nil)
		inserter := handlers.NewTimers(b.DBPool, &handlers.TimersConfig{Schema: schema})
		return &testBundle{Bundle: b, insert: func(t *testing.T, cycle, instance string) int64 {
			t.Helper()
			var id int64
			require.NoError(t, pgx.BeginFunc(ctx, b.DBPool, func(tx pgx.Tx) error {
				opts := workflow.JobContext{ProcessInstanceID: instance, ProcessDefinitionKey: "order", ActivityID: "remind"}.InsertOpts()
				res, err := inserter.InsertTx(ctx, b.Client, tx, remindArgs{}, handlers.Timer{Cycle: cycle}, opts)
				if err == nil {
					id = res.TimerID
				}
				return err
			}))
			return id
		}}
	}

	// List: pages by id hold every selected timer once, the last page's
	// Next is empty (never a next page that comes back empty), filters
	// select (one process instance; ended timers only with Ended), Limit 0
	// is 100, and a foreign cursor or an out-of-range limit is refused
	// naming the field and the value.
	t.Run("List", func(t *testing.T) {
		t.Parallel()
		bundle := setup(t)
		var all []int64
		for i := range 7 {
			instance := "order-a"
			if i%2 == 1 {
				instance = "order-b"
			}
			all = append(all, bundle.insert(t, "R/PT1H", instance))
		}
		handle := bundle.Engine.Timers()

		for _, limit := range []int{1, 3, 7} {
			var got []int64
			params := &timer.ListParams{Limit: limit}
			for pages := 1; ; pages++ {
				res, err := handle.List(ctx, params)
				require.NoError(t, err)
				require.NotEmpty(t, res.Items, "limit %d: page %d is not empty", limit, pages)
				for _, info := range res.Items {
					got = append(got, info.ID)
				}
				if res.Next == "" {
					require.Equal(t, (7+limit-1)/limit, pages, "limit %d", limit)
					break
				}
				params.After = res.Next
			}
			require.Equal(t, all, got, "limit %d", limit)
		}

		res, err := handle.List(ctx, &timer.ListParams{Filter: timer.Filter{ProcessInstanceID: "order-b"}})
		require.NoError(t, err)
		require.Len(t, res.Items, 3)
		for _, info := range res.Items {
			require.Equal(t, "order-b", info.ProcessInstanceID)
		}

		_, err = handle.Cancel(ctx, all[0])
		require.NoError(t, err)
		res, err = handle.List(ctx, nil)
		require.NoError(t, err)
		require.Len(t, res.Items, 6, "an ended timer is left out")
		res, err = handle.List(ctx, &timer.ListParams{Filter: timer.Filter{Ended: true}})
		require.NoError(t, err)
		require.Len(t, res.Items, 7, "unless Ended")

		_, err = handle.List(ctx, &timer.ListParams{After: "x1"})
		require.ErrorContains(t, err, `timer: ListParams.After "x1" is not a cursor`)
		_, err = handle.List(ctx, &timer.ListParams{Limit: -1})
		require.ErrorContains(t, err, "timer: ListParams.Limit must be 0 (default 100) to 1000, got -1")
	})

	// Get: a timer with its waiting occurrence; an unknown id wraps both
	// timer.ErrNotFound and the engine's workflow.ErrNotFound.
	t.Run("Get", func(t *testing.T) {
		t.Parallel()
		bundle := setup(t)
		id := bundle.insert(t, "R2/PT1H", "order-c")
		info, err := bundle.Engine.Timers().Get(ctx, id)
		require.NoError(t, err)
		require.Equal(t, id, info.ID)
		require.NotNil(t, info.NextDueAt)
		require.WithinDuration(t, time.Now().Add(time.Hour), *info.NextDueAt, time.Minute)

		_, err = bundle.Engine.Timers().Get(ctx, 1<<40)
		require.ErrorIs(t, err, timer.ErrNotFound)
		require.ErrorIs(t, err, workflow.ErrNotFound)
	})

	// NoPool: on an engine without a pool every call fails.
	t.Run("NoPool", func(t *testing.T) {
		t.Parallel()
		engine, err := workflow.NewEngine(nil, nil)
		require.NoError(t, err)
		_, err = engine.Timers().List(ctx, nil)
		require.ErrorContains(t, err, "no database pool")
		_, err = engine.Timers().Cancel(ctx, 1)
		require.ErrorContains(t, err, "no database pool")
	})
}

var _ river.JobArgs = remindArgs{}
