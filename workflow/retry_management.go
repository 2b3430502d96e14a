package workflow

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river/rivertype"
)

// IncidentTypeFailedJob is the type of the incident opened when a job with a
// job context runs out of executions and River discards it.
const IncidentTypeFailedJob = "failedJob"

// MaxIncidents caps how many incidents OpenIncidents and JobIncidents return.
const MaxIncidents = 10_000

// Incident is an operator-facing record that a job needs attention, kept in
// table river_bpmn_incident. Incidents are opened and resolved by triggers in
// the transaction that changes the job (see SetJobRetries); a job never has
// two open incidents.
type Incident struct {
	// ID identifies the incident.
	ID int64
	// Type is IncidentTypeFailedJob.
	Type string
	// JobID is the River job the incident is about.
	JobID int64
	// JobDefinitionID, ActivityID and ProcessInstanceID are copied from the
	// job's context when the incident is opened; empty when it has none.
	JobDefinitionID   string
	ActivityID        string
	ProcessInstanceID string
	// Message is the job's last error (at most 4000 characters); empty if it
	// had none, as when its retries were set to 0 before it ever failed.
	Message string
	// CreatedAt is when the job was discarded.
	CreatedAt time.Time
	// ResolvedAt is when the job left the discarded state (SetJobRetries,
	// River's JobRetry) or was deleted; nil while the incident is open.
	ResolvedAt *time.Time
}

var (
	jobLockForRetriesSQL = mustReadSQL("job_lock_for_retries.sql")
	jobSetRetriesSQL     = mustReadSQL("job_set_retries.sql")
	incidentsOfJobSQL    = mustReadSQL("incidents_of_job.sql")
	jobExistsSQL         = mustReadSQL("job_exists.sql")
)

// SetJobRetries sets the number of executions the job has left (Camunda's
// job retries), n >= 0:
//
//   - a discarded job with n > 0 becomes available now, with n executions
//     left, and its failedJob incident is resolved. Its next failure then
//     waits its cycle's FIRST interval while n exceeds the number of
//     intervals (Camunda's interval-index rule);
//   - a job waiting to run (available, scheduled, retryable, pending) keeps
//     its state and schedule and gets n executions left; with n = 0 it is
//     discarded at once and a failedJob incident is opened (with its last
//     error, if any);
//   - a discarded job with n = 0 is left as it is.
//
// In River terms, max_attempts becomes attempt + n. This also makes the
// count of a job with an unbounded cycle (R/…) finite. It is an error for a
// running job (River decides the outcome of the execution under way from the
// values it fetched; set retries when it has ended), for a completed or
// cancelled job, for n < 0, and for an n that River's max_attempts (a
// smallint) cannot hold. An unknown jobID gives an error naming it that
// wraps ErrNotFound.
//
// River's client.JobRetry also revives a discarded job (with one more
// execution) and resolves its incident the same way.
func (e *Engine) SetJobRetries(ctx context.Context, jobID int64, n int) error {
	if n < 0 {
		return fmt.Errorf("workflow: setting retries of job %d: n %d is negative; retries must be >= 0", jobID, n)
	}
	if e.dbPool == nil {
		return errNoPool
	}
	tx, err := e.dbPool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("workflow: setting retries of job %d: %w", jobID, err)
	}
	defer func() { _ = tx.Rollback(ctx) }()

	var (
		state                string
		attempt, maxAttempts int
	)
	err = tx.QueryRow(ctx, e.sql(jobLockForRetriesSQL), jobID).Scan(&state, &attempt, &maxAttempts)
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("workflow: job %d: %w", jobID, ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("workflow: setting retries of job %d: %w", jobID, err)
	}

	newState, newMaxAttempts, err := retriesUpdate(jobID, rivertype.JobState(state), attempt, maxAttempts, n)
	if err != nil {
		return err
	}
	if newState == rivertype.JobState(state) && newMaxAttempts == maxAttempts {
		return nil
	}
	// A move to or from discarded opens or resolves the job's incident (by
	// trigger); the instruments count what it did.
	var incidentBefore, incidentAfter bool
	discardMoves := (state == string(rivertype.JobStateDiscarded)) != (newState == rivertype.JobStateDiscarded)
	if discardMoves {
		if err := tx.QueryRow(ctx, e.sql(jobOpenIncidentSQL), jobID).Scan(&incidentBefore); err != nil {
			return fmt.Errorf("workflow: setting retries of job %d: %w", jobID, err)
		}
	}
	if _, err := tx.Exec(ctx, e.sql(jobSetRetriesSQL), jobID, newMaxAttempts, string(newState)); err != nil {
		return fmt.Errorf("workflow: setting retries of job %d: %w", jobID, err)
	}
	if discardMoves {
		if err := tx.QueryRow(ctx, e.sql(jobOpenIncidentSQL), jobID).Scan(&incidentAfter); err != nil {
			return fmt.Errorf("workflow: setting retries of job %d: %w", jobID, err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("workflow: setting retries of job %d: %w", jobID, err)
	}
	e.tel.IncidentsChanged(ctx, boolCount(!incidentBefore && incidentAfter), boolCount(incidentBefore && !incidentAfter))
	return nil
}

// boolCount is 1 for true, 0 for false.
func boolCount(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// retriesUpdate decides SetJobRetries: the job's new state and max_attempts.
func retriesUpdate(jobID int64, state rivertype.JobState, attempt, maxAttempts, n int) (rivertype.JobState, int, error) {
	switch state {
	case rivertype.JobStateRunning:
		return "", 0, fmt.Errorf("workflow: job %d is running: set its retries when the execution has ended (River decides its outcome from the values it fetched)", jobID)
	case rivertype.JobStateCompleted, rivertype.JobStateCancelled:
		return "", 0, fmt.Errorf("workflow: job %d is %s: only unfinished and discarded jobs have retries", jobID, state)
	}
	if n > MaxAttemptsUnbounded-attempt {
		return "", 0, fmt.Errorf("workflow: job %d: n %d is too large: the job has run %d times, and River's max_attempts holds at most %d",
			jobID, n, attempt, MaxAttemptsUnbounded)
	}
	switch {
	case state == rivertype.JobStateDiscarded && n == 0:
		return state, maxAttempts, nil
	case state == rivertype.JobStateDiscarded:
		return rivertype.JobStateAvailable, attempt + n, nil
	case n == 0:
		return rivertype.JobStateDiscarded, max(attempt, 1), nil
	default:
		return state, attempt + n, nil
	}
}

// OpenIncidents returns the open incidents, oldest first (at most
// MaxIncidents).
func (e *Engine) OpenIncidents(ctx context.Context) ([]*Incident, error) {
	// The first page of incidents_open_page.sql: incident ids, from their
	// bigserial, are all above 0.
	return e.queryIncidents(ctx, "listing open incidents", incidentsOpenPageSQL, 0, MaxIncidents)
}

// JobIncidents returns every incident of one job, open or resolved, oldest
// first (at most MaxIncidents). A job without incidents has none. A job id
// that names neither a job nor any incident (a deleted job keeps its resolved
// incidents) gives an error naming it that wraps ErrNotFound, as the other
// calls on one job do.
func (e *Engine) JobIncidents(ctx context.Context, jobID int64) ([]*Incident, error) {
	what := fmt.Sprintf("listing incidents of job %d", jobID)
	incidents, err := e.queryIncidents(ctx, what, incidentsOfJobSQL, jobID, MaxIncidents)
	if err != nil || len(incidents) > 0 {
		return incidents, err
	}
	var exists bool
	if err := e.dbPool.QueryRow(ctx, e.sql(jobExistsSQL), jobID).Scan(&exists); err != nil {
		return nil, fmt.Errorf("workflow: %s: %w", what, err)
	}
	if !exists {
		return nil, fmt.Errorf("workflow: job %d: %w", jobID, ErrNotFound)
	}
	return incidents, nil
}

func (e *Engine) queryIncidents(ctx context.Context, what, sql string, args ...any) ([]*Incident, error) {
	if e.dbPool == nil {
		return nil, errNoPool
	}
	rows, err := e.dbPool.Query(ctx, e.sql(sql), args...)
	if err != nil {
		return nil, fmt.Errorf("workflow: %s: %w", what, err)
	}
	defer rows.Close()
	var incidents []*Incident
	for rows.Next() {
		var (
			incident                                                Incident
			jobDefinitionID, activityID, processInstanceID, message *string
		)
		if err := rows.Scan(&incident.ID, &incident.Type, &incident.JobID, &jobDefinitionID, &activityID,
			&processInstanceID, &message, &incident.CreatedAt, &incident.ResolvedAt); err != nil {
			return nil, fmt.Errorf("workflow: %s: %w", what, err)
		}
		incident.JobDefinitionID = deref(jobDefinitionID)
		incident.ActivityID = deref(activityID)
		incident.ProcessInstanceID = deref(processInstanceID)
		incident.Message = deref(message)
		incident.CreatedAt = incident.CreatedAt.UTC()
		if incident.ResolvedAt != nil {
			resolvedAt := incident.ResolvedAt.UTC()
			incident.ResolvedAt = &resolvedAt
		}
		incidents = append(incidents, &incident)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("workflow: %s: %w", what, err)
	}
	return incidents, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
