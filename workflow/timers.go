package workflow

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/riverqueue/river/rivershared/startstop"

	"github.com/riverbpmn/riverbpmn/internal/roundloop"
	"github.com/riverbpmn/riverbpmn/timer"
)

// MaxProcessInstanceTimers caps how many timers ProcessInstanceTimers
// returns.
const MaxProcessInstanceTimers = 10_000

// TimerInfo describes one timer (a timer event and its whole cycle): see
// timer.Info. Timers are inserted with handlers.Timers.InsertTx.
type TimerInfo = timer.Info

// ErrTimerNotWaiting is wrapped by SetTimerDueDate's error when the timer
// has no occurrence waiting to fire (its latest is running or finished).
var ErrTimerNotWaiting = timer.ErrNotWaiting

func (e *Engine) timerStore() *timer.Store { return &timer.Store{Schema: e.config.Schema} }

// timerError wraps ErrNotFound for an unknown timer id.
func timerError(what string, id int64, err error) error {
	if errors.Is(err, timer.ErrNotFound) {
		return fmt.Errorf("workflow: %s timer %d: %w", what, id, fmt.Errorf("timer %d: %w", id, ErrNotFound))
	}
	return fmt.Errorf("workflow: %s timer %d: %w", what, id, err)
}

// ProcessInstanceTimers returns the timers of a process instance, oldest
// first (at most MaxProcessInstanceTimers), with the due date of the
// occurrence waiting to fire and the repetitions left after it. An empty id
// is an error naming the field.
func (e *Engine) ProcessInstanceTimers(ctx context.Context, processInstanceID string) ([]*TimerInfo, error) {
	if problem := identifierProblem(processInstanceID, true); problem != "" {
		return nil, &JobContextError{Field: "process_instance_id", Value: processInstanceID, Problem: problem}
	}
	if e.dbPool == nil {
		return nil, errNoPool
	}
	timers, err := e.timerStore().List(ctx, e.dbPool, processInstanceID, MaxProcessInstanceTimers)
	if err != nil {
		return nil, fmt.Errorf("workflow: listing timers of process instance %q: %w", processInstanceID, err)
	}
	return timers, nil
}

// Timer returns one timer. An unknown id gives an error wrapping
// ErrNotFound.
func (e *Engine) Timer(ctx context.Context, timerID int64) (*TimerInfo, error) {
	if e.dbPool == nil {
		return nil, errNoPool
	}
	info, err := e.timerStore().Get(ctx, e.dbPool, timerID)
	if err != nil {
		return nil, timerError("reading", timerID, err)
	}
	return info, nil
}

// SetTimerDueDate moves the due date of the timer's occurrence waiting to
// fire (Camunda's setJobDuedate). With cascade, an ISO-8601 cycle keeps the
// move as its repeat offset: every later occurrence is shifted by the same
// amount (R2/PT30M moved +15m fires at +45m, then +75m). Cron cycles, date
// and duration timers are never shifted. It returns the offset added. An
// unknown id wraps ErrNotFound; a timer with no waiting occurrence wraps
// ErrTimerNotWaiting.
func (e *Engine) SetTimerDueDate(ctx context.Context, timerID int64, due time.Time, cascade bool) (time.Duration, error) {
	if e.dbPool == nil {
		return 0, errNoPool
	}
	shift, err := e.timerStore().SetDueDate(ctx, e.dbPool, timerID, due, cascade)
	if err != nil {
		return 0, timerError("setting the due date of", timerID, err)
	}
	return shift, nil
}

// CancelTimer ends a timer and its cycle: its occurrences that have not
// started (the waiting one, and earlier ones waiting to be retried) are
// cancelled, and no further occurrence is created. A running occurrence
// finishes. It returns the cancelled jobs' ids. An unknown id wraps
// ErrNotFound.
func (e *Engine) CancelTimer(ctx context.Context, timerID int64) ([]int64, error) {
	if e.dbPool == nil {
		return nil, errNoPool
	}
	ids, err := e.timerStore().Cancel(ctx, e.dbPool, timerID)
	if err != nil {
		return nil, timerError("cancelling", timerID, err)
	}
	return ids, nil
}

// DefaultTimerRetention is how long an ended timer is kept unless
// Config.TimerRetention says otherwise: River's default retention of
// completed jobs, so a timer goes about when its last occurrence does.
const DefaultTimerRetention = 24 * time.Hour

// timerPruneInterval is how often the leader prunes ended timers.
const timerPruneInterval = time.Hour

// PruneTimers deletes the timers that ended before endedBefore and whose
// occurrence jobs have all finished, and returns how many it deleted. The
// elected leader does it every hour with Config.TimerRetention.
func (e *Engine) PruneTimers(ctx context.Context, endedBefore time.Time) (int64, error) {
	if e.dbPool == nil {
		return 0, errNoPool
	}
	n, err := e.timerStore().Prune(ctx, e.dbPool, endedBefore)
	if err != nil {
		return n, fmt.Errorf("workflow: %w", err)
	}
	return n, nil
}

// timerPruner is the leader's service deleting ended timers after
// Config.TimerRetention. It has a type of its own: River keys maintenance
// services by type name.
type timerPruner struct {
	startstop.BaseStartStop

	engine    *Engine
	retention time.Duration
}

// timerServices returns the timer pruner, unless the engine keeps ended
// timers forever or has no pool.
func (e *Engine) timerServices() []startstop.Service {
	if e == nil || e.dbPool == nil || e.config.TimerRetention < 0 {
		return nil
	}
	retention := e.config.TimerRetention
	if retention == 0 {
		retention = DefaultTimerRetention
	}
	return []startstop.Service{&timerPruner{engine: e, retention: retention}}
}

// Start starts the pruner's rounds until Stop (or ctx's end).
func (p *timerPruner) Start(ctx context.Context) error {
	ctx, shouldStart, started, stopped := p.StartInit(ctx)
	if !shouldStart {
		return nil
	}
	roundloop.Go(ctx, started, stopped, func(ctx context.Context) time.Duration {
		if _, err := p.engine.PruneTimers(ctx, time.Now().Add(-p.retention)); err != nil && ctx.Err() == nil {
			p.engine.logger().WarnContext(ctx, "riverbpmn: pruning ended timers failed", slog.String("error", err.Error()))
		}
		return timerPruneInterval
	})
	return nil
}

// TimerFilter selects timers across process instances (TimersPage).
type TimerFilter = timer.Filter

// TimersPage returns one page of the timers f selects, of every process
// instance and the timer start events, by id, after timer id afterID (0 for
// the first page), at most limit (1 to MaxPageSize), with the due date of
// the occurrence waiting to fire and the repetitions left.
func (e *Engine) TimersPage(ctx context.Context, f *TimerFilter, afterID int64, limit int) ([]*TimerInfo, error) {
	if err := checkPageLimit(limit); err != nil {
		return nil, err
	}
	if e.dbPool == nil {
		return nil, errNoPool
	}
	if f == nil {
		f = &TimerFilter{}
	}
	timers, err := e.timerStore().ListAllPage(ctx, e.dbPool, f, afterID, limit)
	if err != nil {
		return nil, fmt.Errorf("workflow: listing timers: %w", err)
	}
	return timers, nil
}
