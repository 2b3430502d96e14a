package workflow

import (
	"context"
	"fmt"

	"github.com/riverbpmn/riverbpmn/exclusive"
	"github.com/riverbpmn/riverbpmn/internal/listpage"
	"github.com/riverbpmn/riverbpmn/timer"
)

// The paged forms of the management listings, for a console or any caller
// that shows long lists a page at a time. Each takes a keyset cursor (the
// last id or key of the previous page; the zero value for the first page)
// and a limit, so a page costs the same on the first page as on the last,
// however long the list (an instance with 10,000 jobs included). A page
// shorter than limit is the last one.

// MaxPageSize caps the limit of the paged listings.
const MaxPageSize = 1000

var ()

func checkPageLimit(limit int) error {
	if limit < 1 || limit > MaxPageSize {
		return fmt.Errorf("workflow: limit %d is out of range: a page holds 1 to %d rows", limit, MaxPageSize)
	}
	return nil
}

// ExclusiveLocksPage returns the held exclusive keys (stale ones included)
// that sort after afterKey ("" for the first page), by key, at most limit:
// the paged form of ExclusiveLocks (which orders by age).
//
// Deprecated: use [Engine.Exclusive] and [exclusive.Exclusive.Locks].
func (e *Engine) ExclusiveLocksPage(ctx context.Context, afterKey string, limit int) ([]*ExclusiveLock, error) {
	if err := checkPageLimit(limit); err != nil {
		return nil, err
	}
	res, err := e.Exclusive().Locks(ctx, &exclusive.LocksParams{Limit: limit, After: afterKey})
	if err != nil {
		return nil, err
	}
	return res.Items, nil
}

// ProcessInstanceTimersPage returns the timers of a process instance whose
// id is above afterID (0 for the first page), by id, at most limit: the
// paged form of ProcessInstanceTimers.
//
// Deprecated: use [Engine.Timers] and [timer.Timers.List] with
// ProcessInstanceID (and Ended, for the ended timers too).
func (e *Engine) ProcessInstanceTimersPage(ctx context.Context, processInstanceID string, afterID int64, limit int) ([]*TimerInfo, error) {
	if err := checkInstanceID("process_instance_id", processInstanceID); err != nil {
		return nil, err
	}
	if err := checkPageLimit(limit); err != nil {
		return nil, err
	}
	res, err := e.Timers().List(ctx, instanceTimers(processInstanceID, listpage.ID(afterID), limit))
	if err != nil {
		return nil, err
	}
	return res.Items, nil
}

// instanceTimers selects a page of every timer of a process instance,
// ended ones too, as the deprecated ProcessInstanceTimers listings list
// them.
func instanceTimers(processInstanceID, after string, limit int) *timer.ListParams {
	return &timer.ListParams{Filter: timer.Filter{ProcessInstanceID: processInstanceID, Ended: true}, Limit: limit, After: after}
}
