package workflow

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river/rivertype"

	"github.com/riverbpmn/riverbpmn/exclusive"
)

// The paged forms of the management listings, for a console or any caller
// that shows long lists a page at a time. Each takes a keyset cursor (the
// last id or key of the previous page; the zero value for the first page)
// and a limit, so a page costs the same on the first page as on the last,
// however long the list (an instance with 10,000 jobs included). A page
// shorter than limit is the last one.

// MaxPageSize caps the limit of the paged listings.
const MaxPageSize = 1000

var (
	processInstanceJobsPageSQL = mustReadSQL("process_instance_jobs_page.sql")
	jobDefinitionsPageSQL      = mustReadSQL("job_definitions_page.sql")
)

func checkPageLimit(limit int) error {
	if limit < 1 || limit > MaxPageSize {
		return fmt.Errorf("workflow: limit %d is out of range: a page holds 1 to %d rows", limit, MaxPageSize)
	}
	return nil
}

// ProcessInstanceJobsPage returns the jobs of one process instance whose id
// is above afterID (0 for the first page), by id, at most limit: the paged
// form of ProcessInstanceJobs.
func (e *Engine) ProcessInstanceJobsPage(ctx context.Context, processInstanceID string, afterID int64, limit int) ([]*rivertype.JobRow, error) {
	if problem := identifierProblem(processInstanceID, true); problem != "" {
		return nil, &JobContextError{Field: "process_instance_id", Value: processInstanceID, Problem: problem}
	}
	if err := checkPageLimit(limit); err != nil {
		return nil, err
	}
	if e.dbPool == nil {
		return nil, errNoPool
	}
	rows, err := e.dbPool.Query(ctx, e.sql(processInstanceJobsPageSQL), processInstanceID, afterID, limit)
	if err != nil {
		return nil, fmt.Errorf("workflow: listing jobs of process instance %q: %w", processInstanceID, err)
	}
	jobs, _, err := scanJobRows(rows)
	if err != nil {
		return nil, fmt.Errorf("workflow: listing jobs of process instance %q: %w", processInstanceID, err)
	}
	return jobs, nil
}

// JobDefinitionsPage returns the stored job definitions whose id sorts after
// afterID ("" for the first page), by id, at most limit, with their run-time
// state: the paged form of JobDefinitions. Definitions declared in Config
// but not stored yet are not listed (JobDefinitions lists them).
func (e *Engine) JobDefinitionsPage(ctx context.Context, afterID string, limit int) ([]*JobDefinitionSummary, error) {
	if err := checkPageLimit(limit); err != nil {
		return nil, err
	}
	if e.dbPool == nil {
		return nil, errNoPool
	}
	return e.storedJobDefinitions(ctx, afterID, limit)
}

// storedJobDefinitions returns the stored job definitions whose id sorts
// after afterID, by id, at most limit (unchecked), with their run-time state.
// Ids are never empty (a CHECK of river_bpmn_job_definition), so afterID ""
// lists them from the first.
func (e *Engine) storedJobDefinitions(ctx context.Context, afterID string, limit int) ([]*JobDefinitionSummary, error) {
	rows, err := e.dbPool.Query(ctx, e.sql(jobDefinitionsPageSQL), afterID, limit)
	if err != nil {
		return nil, fmt.Errorf("workflow: listing job definitions: %w", err)
	}
	defs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (*JobDefinitionSummary, error) {
		s := &JobDefinitionSummary{Stored: true}
		err := row.Scan(&s.ID, &s.ProcessDefinitionKey, &s.ActivityID, &s.Kind, &s.OverridingPriority, &s.UnfinishedJobs, &s.OpenIncidents, &s.SuspendedSince)
		s.setSuspended()
		return s, err
	})
	if err != nil {
		return nil, fmt.Errorf("workflow: listing job definitions: %w", err)
	}
	return defs, nil
}

// ExclusiveLocksPage returns the held exclusive keys (stale ones included)
// that sort after afterKey ("" for the first page), by key, at most limit:
// the paged form of ExclusiveLocks (which orders by age).
func (e *Engine) ExclusiveLocksPage(ctx context.Context, afterKey string, limit int) ([]*ExclusiveLock, error) {
	if err := checkPageLimit(limit); err != nil {
		return nil, err
	}
	if e.dbPool == nil {
		return nil, errNoPool
	}
	locks, err := exclusive.LocksPage(ctx, e.dbPool, e.config.Schema, afterKey, limit)
	if err != nil {
		return nil, fmt.Errorf("workflow: %w", err)
	}
	return locks, e.Exclusive().MarkClientsGone(ctx, locks)
}

// ProcessInstanceTimersPage returns the timers of a process instance whose
// id is above afterID (0 for the first page), by id, at most limit: the
// paged form of ProcessInstanceTimers.
func (e *Engine) ProcessInstanceTimersPage(ctx context.Context, processInstanceID string, afterID int64, limit int) ([]*TimerInfo, error) {
	if problem := identifierProblem(processInstanceID, true); problem != "" {
		return nil, &JobContextError{Field: "process_instance_id", Value: processInstanceID, Problem: problem}
	}
	if err := checkPageLimit(limit); err != nil {
		return nil, err
	}
	if e.dbPool == nil {
		return nil, errNoPool
	}
	timers, err := e.timerStore().ListPage(ctx, e.dbPool, processInstanceID, afterID, limit)
	if err != nil {
		return nil, fmt.Errorf("workflow: listing timers of process instance %q: %w", processInstanceID, err)
	}
	return timers, nil
}
