package handlers_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/handlers"
	"github.com/riverbpmn/riverbpmn/timer"
	"github.com/riverbpmn/riverbpmn/workflow"
)

// TestPruneTimers: Timers().Prune deletes timers that ended before the cut-off
// and whose occurrence jobs have all finished; it keeps a running timer, a
// timer that ended after the cut-off, and an ended timer whose last
// occurrence is still retrying, until that finishes. A client's leader
// prunes by itself after Config.Timers.Retention.
func TestPruneTimers(t *testing.T) {
	ctx := context.Background()
	clock := &fakeClock{now: t0}
	s := newTestSetup(t, nil)
	timers := handlers.NewTimers(s.pool, &handlers.TimersConfig{Schema: s.schema, Now: clock.Now})
	jobs := pgx.Identifier{s.schema, "river_job"}.Sanitize()
	setState := func(id int64, state string) {
		t.Helper()
		_, err := s.pool.Exec(ctx, fmt.Sprintf("UPDATE %s SET state = $2::text::"+pgx.Identifier{s.schema, "river_job_state"}.Sanitize()+", finalized_at = CASE WHEN $2::text IN ('completed', 'cancelled', 'discarded') THEN now() END WHERE id = $1", jobs), id, state)
		require.NoError(t, err)
	}
	exists := func(id int64) bool {
		t.Helper()
		_, err := s.engine.Timers().Get(ctx, id)
		if err != nil {
			require.ErrorIs(t, err, workflow.ErrNotFound)
			return false
		}
		return true
	}

	// Fired once and done: its only job completed.
	done := insertTimer(t, s, timers, handlers.Timer{Duration: "PT1M"}, reminderContext(""))
	clock.Set(min(1))
	require.True(t, fire(t, s, timers, done.Job.Job.ID).Ended)
	setState(done.Job.Job.ID, "completed")
	// Cancelled while waiting: its job was cancelled with it.
	cancelled := insertTimer(t, s, timers, handlers.Timer{Cycle: "R/PT1M"}, reminderContext(""))
	_, err := s.engine.Timers().Cancel(ctx, cancelled.TimerID)
	require.NoError(t, err)
	// Ended, but its last occurrence failed and waits to be retried.
	retrying := insertTimer(t, s, timers, handlers.Timer{Duration: "PT1M"}, reminderContext(""))
	clock.Set(min(3))
	require.True(t, fire(t, s, timers, retrying.Job.Job.ID).Ended)
	setState(retrying.Job.Job.ID, "retryable")
	// Still cycling.
	cycling := insertTimer(t, s, timers, handlers.Timer{Cycle: "R/PT1M"}, reminderContext(""))

	// Nothing ended before the cut-off (the timers' own clock started at t0;
	// the cancel used the wall clock): nothing goes.
	n, err := s.engine.Timers().Prune(ctx, t0)
	require.NoError(t, err)
	require.Zero(t, n)

	n, err = s.engine.Timers().Prune(ctx, time.Now().Add(time.Minute))
	require.NoError(t, err)
	require.EqualValues(t, 2, n)
	require.False(t, exists(done.TimerID))
	require.False(t, exists(cancelled.TimerID))
	require.True(t, exists(retrying.TimerID), "its last occurrence may still run")
	require.True(t, exists(cycling.TimerID), "not ended")

	// The retry fails for good: the timer goes at the next prune.
	setState(retrying.Job.Job.ID, "discarded")
	n, err = s.engine.Timers().Prune(ctx, time.Now().Add(time.Minute))
	require.NoError(t, err)
	require.EqualValues(t, 1, n)
	require.False(t, exists(retrying.TimerID))

	// A pruned timer's occurrence run again (an operator retried it) ends
	// quietly: nothing follows.
	require.True(t, fire(t, s, timers, done.Job.Job.ID).Ended)

	// The leader prunes on its own, with a retention of a millisecond.
	ended := insertTimer(t, s, timers, handlers.Timer{Cycle: "R/PT1M"}, reminderContext(""))
	_, err = s.engine.Timers().Cancel(ctx, ended.TimerID)
	require.NoError(t, err)
	engine, err := workflow.NewEngine(s.pool, &workflow.Config{Schema: s.schema, Timers: timer.Config{Retention: time.Millisecond}})
	require.NoError(t, err)
	workers := river.NewWorkers()
	river.AddWorker(workers, river.WorkFunc(func(context.Context, *river.Job[reminderArgs]) error { return nil }))
	client, err := workflow.NewClient(engine, &river.Config{
		Queues:  map[string]river.QueueConfig{"unused": {MaxWorkers: 1}},
		Workers: workers,
	})
	require.NoError(t, err)
	require.NoError(t, client.Start(ctx))
	t.Cleanup(func() { _ = client.Stop(context.Background()) })
	require.Eventually(t, func() bool { return !exists(ended.TimerID) }, 20*time.Second, 50*time.Millisecond)
	require.True(t, exists(cycling.TimerID))

	_, err = workflow.NewEngine(s.pool, &workflow.Config{Schema: s.schema, Timers: timer.Config{Retention: -1}})
	require.NoError(t, err, "a negative retention keeps ended timers forever")
	_, err = workflow.NewEngine(s.pool, &workflow.Config{Schema: s.schema, Timers: timer.Config{Retention: time.Hour}, TimerRetention: time.Minute})
	require.ErrorContains(t, err, "Config.Timers.Retention (1h0m0s) and the deprecated Config.TimerRetention (1m0s) differ")
}
