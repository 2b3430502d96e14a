package timer

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/riverbpmn/riverbpmn/internal/sqltemplate"
)

// ListPage returns one page of the timers of a process instance, by id: those
// with an id above afterID (0 for the first page), at most limit. Keyset
// paging, so a page costs the same however many timers the instance has.
func (s *Store) ListPage(ctx context.Context, db Executor, processInstanceID string, afterID int64, limit int) ([]*Info, error) {
	rows, err := db.Query(ctx, s.sql("timer_select.sql")+" WHERE t.process_instance_id = $1 AND t.id > $2 ORDER BY t.id LIMIT $3",
		processInstanceID, afterID, limit)
	if err != nil {
		return nil, err
	}
	return collectInfos(rows)
}

// Filter selects timers across process instances (ListAllPage).
type Filter struct {
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
// afterID (0 for the first page), at most limit.
func (s *Store) ListAllPage(ctx context.Context, db Executor, f *Filter, afterID int64, limit int) ([]*Info, error) {
	var from, before *time.Time
	if !f.DueFrom.IsZero() {
		from = &f.DueFrom
	}
	if !f.DueBefore.IsZero() {
		before = &f.DueBefore
	}
	rows, err := db.Query(ctx, s.sql("timer_select.sql")+`
WHERE t.id > $1
    AND ($2::text = '' OR t.job_definition_id = $2::text)
    AND ($3::text = '' OR t.activity_id = $3::text)
    AND (NOT $4::boolean OR t.process_instance_id IS NULL)
    AND ($5::timestamptz IS NULL OR (t.ended_at IS NULL AND j.scheduled_at >= $5::timestamptz))
    AND ($6::timestamptz IS NULL OR (t.ended_at IS NULL AND j.scheduled_at < $6::timestamptz))
    AND ($7::boolean OR t.ended_at IS NULL)
    AND ($9::text = '' OR `+sqltemplate.Render("/* TEMPLATE: schema */river_bpmn_ctx_definition(j.metadata)", s.Schema)+` = $9::text)
ORDER BY t.id
LIMIT $8`, afterID, f.JobDefinitionID, f.ActivityID, f.StartEvents, from, before, f.Ended, limit, f.ProcessDefinitionKey)
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
