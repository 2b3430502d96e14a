package handlers_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertest"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/handlers"
	"github.com/riverbpmn/riverbpmn/timer"
	"github.com/riverbpmn/riverbpmn/workflow"
)

type reminderArgs struct {
	Order string `json:"order"`
}

func (reminderArgs) Kind() string { return "reminder" }

var t0 = time.Date(2026, 3, 2, 8, 0, 0, 0, time.UTC)

func min(n int) time.Time { return t0.Add(time.Duration(n) * time.Minute) }

func reminderContext(retryCycle string) *river.InsertOpts {
	priority, exclusive := int64(7), false
	return workflow.JobContext{
		ProcessInstanceID:    "order-1",
		ProcessDefinitionKey: "order",
		ActivityID:           "remind",
		RetryCycle:           retryCycle,
		Priority:             &priority,
		Exclusive:            &exclusive,
	}.InsertOpts()
}

// insertTimer inserts a reminder timer at the clock's time.
func insertTimer(t testing.TB, s *testSetup, timers *handlers.Timers, tm handlers.Timer, opts *river.InsertOpts) *handlers.TimerInsertResult {
	t.Helper()
	client := s.insertClient(t)
	var res *handlers.TimerInsertResult
	s.inTx(t, func(tx pgx.Tx) {
		var err error
		res, err = timers.InsertTx(context.Background(), client, tx, reminderArgs{Order: "1"}, tm, opts)
		require.NoError(t, err)
	})
	return res
}

// fire runs the timer middleware for a job, as a client does when the job
// starts, with a worker that does nothing.
func fire(t *testing.T, s *testSetup, timers *handlers.Timers, jobID int64) *handlers.Firing {
	t.Helper()
	var firing *handlers.Firing
	err := timers.Middleware().Work(context.Background(), s.job(t, jobID), func(ctx context.Context) error {
		firing, _ = handlers.FiringFromContext(ctx)
		return nil
	})
	require.NoError(t, err)
	require.NotNil(t, firing)
	return firing
}

func TestTimerCycleVectorsInDatabase(t *testing.T) {
	ctx := context.Background()
	s := newTestSetup(t, nil)
	clock := &fakeClock{now: t0}
	timers := handlers.NewTimers(s.pool, &handlers.TimersConfig{Schema: s.schema, Now: clock.Now})

	t.Run("R2/PT5M fires at t0+5m and t0+10m, then stops", func(t *testing.T) {
		clock.Set(t0)
		res := insertTimer(t, s, timers, handlers.Timer{Cycle: "R2/PT5M"}, reminderContext(""))
		require.Equal(t, min(5), res.DueAt)
		job1 := s.job(t, res.Job.Job.ID)
		require.Equal(t, min(5), job1.ScheduledAt.UTC())
		require.Equal(t, rivertype.JobStateScheduled, job1.State)
		jc, err := workflow.JobContextOf(job1)
		require.NoError(t, err)
		require.Equal(t, workflow.JobTypeTimer, jc.JobType)
		require.Equal(t, int64(7), *jc.Priority)
		require.False(t, *jc.Exclusive)

		clock.Set(min(5))
		f := fire(t, s, timers, job1.ID)
		require.False(t, f.Ended)
		require.Equal(t, min(10), f.Next)
		job2 := s.job(t, f.NextJobID)
		require.Equal(t, min(10), job2.ScheduledAt.UTC())
		require.JSONEq(t, string(job1.EncodedArgs), string(job2.EncodedArgs))
		require.Equal(t, job1.Kind, job2.Kind)
		jc2, err := workflow.JobContextOf(job2)
		require.NoError(t, err)
		require.Equal(t, jc, jc2, "the job context is copied (instance, activity, priority, exclusivity, retry cycle)")
		require.Equal(t, job1.MaxAttempts, job2.MaxAttempts)

		listed, err := s.engine.Timers().List(ctx, &timer.ListParams{Filter: timer.Filter{ProcessInstanceID: "order-1", Ended: true}})
		require.NoError(t, err)
		info := listed.Items[len(listed.Items)-1]
		require.Equal(t, res.TimerID, info.ID)
		require.Equal(t, int64(2), info.Occurrence)
		require.Equal(t, min(10), *info.NextDueAt)
		require.Equal(t, int64(0), *info.RepetitionsLeft)

		clock.Set(min(10))
		f = fire(t, s, timers, job2.ID)
		require.True(t, f.Ended)
		require.Zero(t, f.NextJobID)
		info, err = s.engine.Timers().Get(ctx, res.TimerID)
		require.NoError(t, err)
		require.Equal(t, timer.EndFinished, info.EndReason)
		require.Equal(t, int64(2), info.Occurrence)
	})

	t.Run("R3/<future start>/PT1H first fires at the start", func(t *testing.T) {
		clock.Set(t0)
		res := insertTimer(t, s, timers, handlers.Timer{Cycle: "R3/2026-03-03T00:00:00Z/PT1H"}, reminderContext(""))
		start := time.Date(2026, 3, 3, 0, 0, 0, 0, time.UTC)
		require.Equal(t, start, res.DueAt)
		clock.Set(start)
		f := fire(t, s, timers, res.Job.Job.ID)
		require.Equal(t, start.Add(time.Hour), f.Next)
	})

	t.Run("a late firing skips the missed slots", func(t *testing.T) {
		clock.Set(t0)
		res := insertTimer(t, s, timers, handlers.Timer{Cycle: "R/PT1M"}, reminderContext(""))
		require.Equal(t, min(1), res.DueAt)
		clock.Set(min(3).Add(30 * time.Second))
		f := fire(t, s, timers, res.Job.Job.ID)
		require.Equal(t, min(4), f.Next, "the slots at +2m and +3m are skipped, not caught up")
	})

	t.Run("R2/PT30M moved +15m with cascade: t0+45m, then +30m", func(t *testing.T) {
		clock.Set(t0)
		res := insertTimer(t, s, timers, handlers.Timer{Cycle: "R2/PT30M"}, reminderContext(""))
		require.Equal(t, min(30), res.DueAt)
		shift, err := s.engine.Timers().SetDueDate(ctx, res.TimerID, min(45), true)
		require.NoError(t, err)
		require.Equal(t, 15*time.Minute, shift)
		require.Equal(t, min(45), s.job(t, res.Job.Job.ID).ScheduledAt.UTC())

		clock.Set(min(45))
		f := fire(t, s, timers, res.Job.Job.ID)
		require.Equal(t, min(75), f.Next)
		clock.Set(min(75))
		f = fire(t, s, timers, f.NextJobID)
		require.True(t, f.Ended)
	})

	t.Run("without cascade only the one occurrence moves", func(t *testing.T) {
		clock.Set(t0)
		res := insertTimer(t, s, timers, handlers.Timer{Cycle: "R2/PT30M"}, reminderContext(""))
		shift, err := s.engine.Timers().SetDueDate(ctx, res.TimerID, min(45), false)
		require.NoError(t, err)
		require.Zero(t, shift)
		clock.Set(min(45))
		f := fire(t, s, timers, res.Job.Job.ID)
		require.Equal(t, min(60), f.Next)
	})

	t.Run("a cron cycle moved with cascade does not shift the next", func(t *testing.T) {
		clock.Set(t0)
		res := insertTimer(t, s, timers, handlers.Timer{Cycle: "0 0/30 * * * ?"}, reminderContext(""))
		require.Equal(t, min(30), res.DueAt)
		shift, err := s.engine.Timers().SetDueDate(ctx, res.TimerID, min(45), true)
		require.NoError(t, err)
		require.Zero(t, shift)
		clock.Set(min(45))
		f := fire(t, s, timers, res.Job.Job.ID)
		require.Equal(t, min(60), f.Next)
	})

	t.Run("an occurrence beyond year 9999 ends the cycle", func(t *testing.T) {
		far := time.Date(8500, 1, 1, 0, 0, 0, 0, time.UTC)
		clock.Set(far)
		res := insertTimer(t, s, timers, handlers.Timer{Cycle: "R/P1000Y"}, reminderContext(""))
		require.Equal(t, 9500, res.DueAt.Year())
		clock.Set(res.DueAt)
		f := fire(t, s, timers, res.Job.Job.ID)
		require.True(t, f.Ended)
		info, err := s.engine.Timers().Get(ctx, res.TimerID)
		require.NoError(t, err)
		require.Equal(t, timer.EndBeyondMaxYear, info.EndReason)
	})

	t.Run("a second run of one occurrence creates nothing; the database refuses a second copy", func(t *testing.T) {
		clock.Set(t0)
		res := insertTimer(t, s, timers, handlers.Timer{Cycle: "R/PT1M"}, reminderContext(""))
		clock.Set(min(1))
		first := fire(t, s, timers, res.Job.Job.ID)
		again := fire(t, s, timers, res.Job.Job.ID)
		require.Equal(t, first.NextJobID, again.NextJobID)

		// Even SQL that bypasses Go cannot add a second occurrence 2.
		_, err := s.pool.Exec(ctx, fmt.Sprintf(
			`INSERT INTO %s.river_job (args, kind, max_attempts, metadata, priority, queue, state, unique_key, unique_states)
			 VALUES ('{}', 'reminder', 3, '{}', 1, 'default', 'scheduled', $1, B'11111111')`,
			pgx.Identifier{s.schema}.Sanitize()), timer.UniqueKey(res.TimerID, 2))
		var pgErr *pgconn.PgError
		require.True(t, errors.As(err, &pgErr), "%v", err)
		require.Equal(t, "23505", pgErr.Code, "unique violation")
	})

	t.Run("cancel ends the cycle and cancels waiting occurrences", func(t *testing.T) {
		clock.Set(t0)
		res := insertTimer(t, s, timers, handlers.Timer{Cycle: "R/PT1M"}, reminderContext(""))
		clock.Set(min(1))
		f := fire(t, s, timers, res.Job.Job.ID)
		// The firing occurrence runs (River would have moved it to running).
		_, err := s.pool.Exec(ctx, fmt.Sprintf("UPDATE %s.river_job SET state = 'running', attempt = 1, attempted_at = now() WHERE id = $1",
			pgx.Identifier{s.schema}.Sanitize()), res.Job.Job.ID)
		require.NoError(t, err)
		ids, err := s.engine.Timers().Cancel(ctx, res.TimerID)
		require.NoError(t, err)
		require.Equal(t, []int64{f.NextJobID}, ids, "the firing job is not waiting; its successor is")
		require.Equal(t, rivertype.JobStateCancelled, s.job(t, f.NextJobID).State)
		info, err := s.engine.Timers().Get(ctx, res.TimerID)
		require.NoError(t, err)
		require.Equal(t, timer.EndCancelled, info.EndReason)
		require.Nil(t, info.NextDueAt)

		_, err = s.engine.Timers().SetDueDate(ctx, res.TimerID, min(5), false)
		require.ErrorIs(t, err, workflow.ErrTimerNotWaiting)
		_, err = s.engine.Timers().Cancel(ctx, 1<<40)
		require.ErrorIs(t, err, workflow.ErrNotFound)
	})

	t.Run("date and duration timers fire once", func(t *testing.T) {
		clock.Set(t0)
		res := insertTimer(t, s, timers, handlers.Timer{Duration: "PT5M"}, reminderContext(""))
		require.Equal(t, min(5), res.DueAt)
		clock.Set(min(5))
		require.True(t, fire(t, s, timers, res.Job.Job.ID).Ended)

		res = insertTimer(t, s, timers, handlers.Timer{Date: "2026-03-02T10:00:00+01:00"}, reminderContext(""))
		require.Equal(t, min(60), res.DueAt)
	})
}

func TestTimerInsertRejectsBadInput(t *testing.T) {
	ctx := context.Background()
	s := newTestSetup(t, nil)
	timers := handlers.NewTimers(s.pool, &handlers.TimersConfig{Schema: s.schema})
	client := s.insertClient(t)
	for _, tc := range []struct {
		timer handlers.Timer
		want  string
	}{
		{handlers.Timer{Cycle: "R0/PT5M"}, `"R0/PT5M": zero repetitions`},
		{handlers.Timer{Cycle: "R3/PT5MM"}, `"R3/PT5MM"`},
		{handlers.Timer{Cycle: "0 0 12 * *"}, `"0 0 12 * *": 5 fields`},
		{handlers.Timer{Cycle: "0 0 0 31 2 ?"}, `"0 0 0 31 2 ?": has no occurrence after`},
		{handlers.Timer{Date: "2026-02-30T00:00:00Z"}, `"2026-02-30T00:00:00Z": day 30 out of range`},
		{handlers.Timer{Date: "tomorrow"}, `"tomorrow"`},
		{handlers.Timer{Duration: "5 minutes"}, `"5 minutes"`},
		{handlers.Timer{Cycle: "R3/2020-01-01T00:00:00Z/PT1H"}, "has no occurrence after"},
		{handlers.Timer{}, "exactly one of Date, Duration and Cycle"},
		{handlers.Timer{Date: "2026-01-01T00:00:00Z", Cycle: "R/PT1H"}, "exactly one"},
	} {
		tx, err := s.pool.Begin(ctx)
		require.NoError(t, err)
		_, err = timers.InsertTx(ctx, client, tx, reminderArgs{}, tc.timer, reminderContext(""))
		require.Error(t, err, "%+v", tc.timer)
		require.ErrorIs(t, err, timer.ErrInvalid)
		require.Contains(t, err.Error(), tc.want)
		require.NoError(t, tx.Rollback(ctx))
	}
	tx, err := s.pool.Begin(ctx)
	require.NoError(t, err)
	_, err = timers.InsertTx(ctx, client, tx, reminderArgs{}, handlers.Timer{Duration: "PT1M"}, nil)
	require.ErrorContains(t, err, "process_definition_key")
	require.NoError(t, tx.Rollback(ctx))

	var n int
	require.NoError(t, s.pool.QueryRow(ctx, fmt.Sprintf("SELECT count(*) FROM %s.river_bpmn_timer", pgx.Identifier{s.schema}.Sanitize())).Scan(&n))
	require.Zero(t, n)
}

// A failing cycle, by Camunda's rules: a timer R4/PT1M whose firings fail, with the
// retry cycle R2/PT10M. The cycle goes on at +1m, +2m, +3m, +4m while each
// failed occurrence is retried 10 minutes after its failure, on its own
// schedule, and discarded after its second execution. Worked with River's
// own executor (rivertest.Worker) on a fake clock.
func TestTimerFailingCycleKeepsCycling(t *testing.T) {
	ctx := context.Background()
	s := newTestSetup(t, nil)
	clock := &fakeClock{now: t0}
	timers := handlers.NewTimers(s.pool, &handlers.TimersConfig{Schema: s.schema, Now: clock.Now})

	succeedFrom := map[int64]int{} // job id -> first attempt that succeeds (0: never)
	worker := river.WorkFunc(func(ctx context.Context, job *river.Job[reminderArgs]) error {
		if n := succeedFrom[job.ID]; n > 0 && job.Attempt >= n {
			return nil
		}
		return errors.New("mail server down")
	})
	tw := rivertest.NewWorker(t, s.engine.Driver(), &river.Config{
		Schema:      s.schema,
		Middleware:  []rivertype.Middleware{s.engine.Middleware(), timers.Middleware()},
		RetryPolicy: &shiftedRetryPolicy{clock: clock},
		Test:        river.TestConfig{Time: clock},
	}, worker)
	work := func(at time.Time, jobID int64) *rivertype.JobRow {
		t.Helper()
		clock.Set(at)
		var row *rivertype.JobRow
		s.inTx(t, func(tx pgx.Tx) {
			job, err := s.insertClient(t).JobGetTx(ctx, tx, jobID)
			require.NoError(t, err)
			require.False(t, job.ScheduledAt.After(at), "job %d is due at %s, not yet at %s", jobID, job.ScheduledAt, at)
			res, _ := tw.WorkJob(ctx, t, tx, job)
			row = res.Job
		})
		return row
	}

	res := insertTimer(t, s, timers, handlers.Timer{Cycle: "R4/PT1M"}, reminderContext("R2/PT10M"))
	require.Equal(t, 2, res.Job.Job.MaxAttempts, "R2/PT10M: two executions")

	occurrences := []int64{res.Job.Job.ID}
	for k := 1; k <= 4; k++ {
		row := work(min(k), occurrences[k-1])
		require.Equal(t, rivertype.JobStateRetryable, row.State, "occurrence %d failed", k)
		require.Equal(t, min(k+10), row.ScheduledAt.UTC(), "occurrence %d retries 10m after its failure", k)
		info, err := s.engine.Timers().Get(ctx, res.TimerID)
		require.NoError(t, err)
		if k < 4 {
			require.Equal(t, int64(k+1), info.Occurrence, "the failure did not stop the cycle")
			require.Equal(t, min(k+1), *info.NextDueAt)
			require.Equal(t, int64(4-k-1), *info.RepetitionsLeft)
			occurrences = append(occurrences, info.JobID)
		} else {
			require.Equal(t, timer.EndFinished, info.EndReason, "R4: the fourth occurrence is the last")
		}
	}

	// The retries run on their own schedule and create no occurrences.
	succeedFrom[occurrences[1]] = 2
	for k := 1; k <= 4; k++ {
		row := work(min(k+10), occurrences[k-1])
		if k == 2 {
			require.Equal(t, rivertype.JobStateCompleted, row.State)
		} else {
			require.Equal(t, rivertype.JobStateDiscarded, row.State, "occurrence %d: no executions left", k)
		}
	}
	var n int
	require.NoError(t, s.pool.QueryRow(ctx, fmt.Sprintf("SELECT count(*) FROM %s.river_job WHERE kind = 'reminder'", pgx.Identifier{s.schema}.Sanitize())).Scan(&n))
	require.Equal(t, 4, n, "four occurrences, each one job")
}

// TestTimerInsertReturnsStoredState: InsertTx's result has the state its
// first occurrence is stored in: available for one near due (so that the
// first fetch after its due date takes it), scheduled for a later one.
func TestTimerInsertReturnsStoredState(t *testing.T) {
	t.Parallel()
	s := newTestSetup(t, nil)
	timers := handlers.NewTimers(s.pool, &handlers.TimersConfig{Schema: s.schema})
	for _, tc := range []struct {
		duration string
		want     rivertype.JobState
	}{{"PT3S", rivertype.JobStateAvailable}, {"PT1H", rivertype.JobStateScheduled}} {
		res := insertTimer(t, s, timers, handlers.Timer{Duration: tc.duration}, reminderContext(""))
		stored := s.job(t, res.Job.Job.ID)
		require.Equal(t, tc.want, stored.State, tc.duration)
		require.Equal(t, stored.State, res.Job.Job.State, "%s: the result says the stored state", tc.duration)
	}
}
