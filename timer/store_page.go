package timer

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// ListPage returns one page of the timers of a process instance, by id: those
// with an id above afterID (0 for the first page), at most limit. Keyset
// paging, so a page costs the same however many timers the instance has.
func (s *Store) ListPage(ctx context.Context, db Executor, processInstanceID string, afterID int64, limit int) ([]*Info, error) {
	return s.ListAllPage(ctx, db, &Filter{ProcessInstanceID: processInstanceID, Ended: true}, afterID, limit)
}

// Filter selects timers (ListAllPage, Timers.List).
type Filter struct {
	// ProcessInstanceID keeps the timers of that process instance ("" any).
	ProcessInstanceID string
	// JobDefinitionID and ActivityID keep timers of that job definition or
	// activity ("" any).
	JobDefinitionID, ActivityID string
	// ProcessDefinitionKey keeps timers whose occurrence job (the latest)
	// belongs to that process definition ("" any): ended timers whose job
	// is gone have none.
	ProcessDefinitionKey string
	// StartEvents keeps only timer start events (no process instance).
	StartEvents bool
	// DueFrom and DueBefore keep timers whose waiting occurrence is due in
	// that window (zero: unbounded).
	DueFrom, DueBefore time.Time
	// Ended keeps the ended timers too.
	Ended bool
}

// ListAllPage returns one page of the timers f selects, of every process
// instance and the timer start events, by id: those with an id above
// afterID (0 for the first page), at most limit (timer_list.sql, the one
// statement of every timer listing).
func (s *Store) ListAllPage(ctx context.Context, db Executor, f *Filter, afterID int64, limit int) ([]*Info, error) {
	var from, before *time.Time
	if !f.DueFrom.IsZero() {
		from = &f.DueFrom
	}
	if !f.DueBefore.IsZero() {
		before = &f.DueBefore
	}
	rows, err := db.Query(ctx, s.sql("timer_list.sql"), afterID, f.JobDefinitionID, f.ActivityID, f.StartEvents, from, before, f.Ended, limit,
		f.ProcessDefinitionKey, f.ProcessInstanceID)
	if err != nil {
		return nil, err
	}
	return collectInfos(rows)
}

// collectInfos reads the timers of rows (timer_select.sql's columns).
func collectInfos(rows pgx.Rows) ([]*Info, error) {
	defer rows.Close()
	out := []*Info{}
	for rows.Next() {
		i, err := scanInfo(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, i)
	}
	return out, rows.Err()
}
