package workflow

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/riverqueue/river/rivershared/startstop"

	"github.com/riverbpmn/riverbpmn/internal/listpage"
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
//
// Deprecated: use [timer.ErrNotWaiting].
var ErrTimerNotWaiting = timer.ErrNotWaiting

// Timers returns the handle on the timers of the engine's schema (package
// timer): List pages through them with filters, Get reads one, SetDueDate
// moves one, Cancel ends one, Prune deletes ended ones. Timers are inserted
// with handlers.Timers.InsertTx. On an engine without a pool every call
// fails.
func (e *Engine) Timers() *timer.Timers {
	return e.timers.get(func() *timer.Timers {
		return timer.New(timer.HandleConfig{DB: e.db(), Schema: e.config.Schema, NotFound: ErrNotFound})
	})
}

// timersConfig is Config.Timers, with the deprecated Config.TimerRetention
// when Timers.Retention is zero.
func (c *Config) timersConfig() timer.Config {
	t := c.Timers
	if t.Retention == 0 {
		t.Retention = c.TimerRetention
	}
	return t
}

// validateTimers refuses Config.Timers.Retention and the deprecated
// Config.TimerRetention set to different values.
func validateTimers(c *Config) error {
	if c.Timers.Retention != 0 && c.TimerRetention != 0 && c.Timers.Retention != c.TimerRetention {
		return fmt.Errorf("workflow: Config.Timers.Retention (%s) and the deprecated Config.TimerRetention (%s) differ: set only Config.Timers.Retention", c.Timers.Retention, c.TimerRetention)
	}
	return nil
}

// ProcessInstanceTimers returns the timers of a process instance, oldest
// first (at most MaxProcessInstanceTimers), with the due date of the
// occurrence waiting to fire and the repetitions left after it. An empty id
// is an error naming the field.
//
// Deprecated: use [Engine.Timers] and [timer.Timers.List] with
// ProcessInstanceID (and Ended, for the ended timers too).
func (e *Engine) ProcessInstanceTimers(ctx context.Context, processInstanceID string) ([]*TimerInfo, error) {
	if err := checkInstanceID("process_instance_id", processInstanceID); err != nil {
		return nil, err
	}
	return allPages(MaxProcessInstanceTimers, func(after string) ([]*TimerInfo, string, error) {
		res, err := e.Timers().List(ctx, instanceTimers(processInstanceID, after, listpage.MaxLimit))
		if err != nil {
			return nil, "", err
		}
		return res.Items, res.Next, nil
	})
}

// Timer returns one timer.
//
// Deprecated: use [Engine.Timers] and [timer.Timers.Get].
func (e *Engine) Timer(ctx context.Context, timerID int64) (*TimerInfo, error) {
	return e.Timers().Get(ctx, timerID)
}

// SetTimerDueDate moves the due date of the timer's occurrence waiting to
// fire.
//
// Deprecated: use [Engine.Timers] and [timer.Timers.SetDueDate].
func (e *Engine) SetTimerDueDate(ctx context.Context, timerID int64, due time.Time, cascade bool) (time.Duration, error) {
	return e.Timers().SetDueDate(ctx, timerID, due, cascade)
}

// CancelTimer ends a timer and its cycle.
//
// Deprecated: use [Engine.Timers] and [timer.Timers.Cancel].
func (e *Engine) CancelTimer(ctx context.Context, timerID int64) ([]int64, error) {
	return e.Timers().Cancel(ctx, timerID)
}

// DefaultTimerRetention is how long an ended timer is kept by default.
//
// Deprecated: use [timer.DefaultRetention].
const DefaultTimerRetention = timer.DefaultRetention

// PruneTimers deletes the timers that ended before endedBefore and whose
// occurrence jobs have all finished.
//
// Deprecated: use [Engine.Timers] and [timer.Timers.Prune].
func (e *Engine) PruneTimers(ctx context.Context, endedBefore time.Time) (int64, error) {
	return e.Timers().Prune(ctx, endedBefore)
}

// timerServices returns the timer pruner, unless the engine keeps ended
// timers forever or has no pool.
func (e *Engine) timerServices() []startstop.Service {
	if e == nil || e.dbPool == nil {
		return nil
	}
	if p := e.Timers().Pruner(e.config.timersConfig(), e.logger()); p != nil {
		return []startstop.Service{p}
	}
	return nil
}

// TimerFilter selects timers across process instances (TimersPage).
//
// Deprecated: use [timer.ListParams] with [timer.Timers.List].
type TimerFilter = timer.Filter

// TimersPage returns one page of the timers f selects, by id, after timer
// id afterID (0 for the first page), at most limit (1 to MaxPageSize).
//
// Deprecated: use [Engine.Timers] and [timer.Timers.List].
func (e *Engine) TimersPage(ctx context.Context, f *TimerFilter, afterID int64, limit int) ([]*TimerInfo, error) {
	if err := checkPageLimit(limit); err != nil {
		return nil, err
	}
	p := &timer.ListParams{Limit: limit}
	if f != nil {
		p.Filter = *f
	}
	if afterID > 0 {
		p.After = strconv.FormatInt(afterID, 10)
	}
	res, err := e.Timers().List(ctx, p)
	if err != nil {
		return nil, err
	}
	return res.Items, nil
}
