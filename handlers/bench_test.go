package handlers_test

import (
	"context"
	"testing"

	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/handlers"
)

// BenchmarkTimerMiddleware measures what the middleware costs a job that is
// not a timer, and one firing of a cycle occurrence (its transaction: lock
// the timer, insert the next occurrence, update the timer).
func BenchmarkTimerMiddleware(b *testing.B) {
	ctx := context.Background()
	noop := func(context.Context) error { return nil }

	b.Run("plain job", func(b *testing.B) {
		mw := handlers.NewTimers(nil, nil).Middleware()
		job := &rivertype.JobRow{ID: 1, Metadata: []byte(`{"bpmn": {"process_definition_key": "p", "job_type": "async"}}`)}
		b.ReportAllocs()
		for b.Loop() {
			_ = mw.Work(ctx, job, noop)
		}
	})

	b.Run("cycle firing", func(b *testing.B) {
		t := b
		s := newTestSetup(t, nil)
		clock := &fakeClock{now: t0}
		timers := handlers.NewTimers(s.pool, &handlers.TimersConfig{Schema: s.schema, Now: clock.Now})
		res := insertTimer(t, s, timers, handlers.Timer{Cycle: "R/PT1S"}, reminderContext(""))
		mw := timers.Middleware()
		job := s.job(t, res.Job.Job.ID)
		var next int64
		capture := func(ctx context.Context) error {
			f, _ := handlers.FiringFromContext(ctx)
			next = f.NextJobID
			return nil
		}
		b.ResetTimer()
		for b.Loop() {
			clock.Set(job.ScheduledAt)
			require.NoError(b, mw.Work(ctx, job, capture))
			b.StopTimer()
			job = s.job(t, next)
			b.StartTimer()
		}
	})
}
