// Package job manages single River jobs the way Camunda's management
// service does: List pages through the jobs a search.Filter selects, Count
// counts them, Status reads a job's status and progress (package
// jobcontrol), SetRetries sets the executions a job has left (Camunda's job
// retries, reviving a discarded job and resolving its incident, or
// discarding a waiting one and opening its incident), and SetPriority sets
// one job's priority.
package job

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"math"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river/rivertype"

	"github.com/riverbpmn/riverbpmn/incident"
	"github.com/riverbpmn/riverbpmn/internal/listpage"
	"github.com/riverbpmn/riverbpmn/internal/notfound"
	"github.com/riverbpmn/riverbpmn/internal/sqltemplate"
	"github.com/riverbpmn/riverbpmn/jobcontrol"
	"github.com/riverbpmn/riverbpmn/search"
)

//go:embed sql/*.sql
var sqlFS embed.FS

func mustSQL(name string) string { return sqltemplate.MustRead(sqlFS, "sql/"+name) }

var (
	lockForRetriesSQL = mustSQL("lock_for_retries.sql")
	setRetriesSQL     = mustSQL("set_retries.sql")
	setPrioritySQL    = mustSQL("set_priority.sql")
)

// MaxAttemptsUnbounded is the largest max_attempts River holds (a
// smallint): the max_attempts of a job whose retry cycle is unbounded.
const MaxAttemptsUnbounded = math.MaxInt16

// ErrNotFound is wrapped by the errors for a job id that names no job. It is
// the same error as every other package's ErrNotFound (workflow.ErrNotFound
// too).
var ErrNotFound = notfound.Err

// DB is what the handle needs of a database: a pgxpool.Pool, a pgx.Conn or
// a pgx.Tx (where Begin makes a savepoint).
type DB interface {
	jobcontrol.DB
	Begin(ctx context.Context) (pgx.Tx, error)
}

// Config configures a Jobs handle.
type Config struct {
	// DB is the database.
	DB DB
	// Schema is the schema of the tables; empty means the search_path.
	Schema string
	// IncidentsChanged, if set, is told how many incidents a SetRetries
	// opened and resolved (0 or 1 each), after it committed: the engine
	// counts them in its instruments.
	IncidentsChanged func(ctx context.Context, opened, resolved int64)
}

// Jobs is the handle on a schema's jobs.
type Jobs struct {
	db               DB
	schema           string
	incidentsChanged func(ctx context.Context, opened, resolved int64)
}

// New returns the handle on the jobs of config.Schema in config.DB.
func New(config Config) *Jobs {
	changed := config.IncidentsChanged
	if changed == nil {
		changed = func(context.Context, int64, int64) {}
	}
	return &Jobs{db: config.DB, schema: config.Schema, incidentsChanged: changed}
}

// ListParams selects a page of jobs: those Filter selects (by state, kind,
// job definition, process definition, tenant, process instance id prefix
// and creation time), newest first unless Filter.Oldest, at most Limit (0:
// 100; at most 1000), after the cursor After ("" for the first page, then
// the Next of the previous page).
type ListParams struct {
	search.Filter
	Limit int    `json:"limit,omitempty"`
	After string `json:"after,omitempty"`
}

// ListResult is a page of jobs; Next is the cursor of the next page, ""
// when there is none.
type ListResult struct {
	Items []*search.Job `json:"items"`
	Next  string        `json:"next,omitempty"`
}

// List returns one page of the jobs params selects (nil: the newest 100).
// A bad filter, Limit or After is an error naming the field and the value.
func (j *Jobs) List(ctx context.Context, params *ListParams) (*ListResult, error) {
	if params == nil {
		params = &ListParams{}
	}
	limit, err := listpage.Limit("job", params.Limit)
	if err != nil {
		return nil, err
	}
	after, err := listpage.ParseID("job", params.After)
	if err != nil {
		return nil, err
	}
	jobs, err := search.Jobs(ctx, j.db, j.schema, &params.Filter, after, listpage.Fetch(limit))
	if err != nil {
		return nil, err
	}
	res := &ListResult{}
	res.Items, res.Next = listpage.Trim(jobs, limit, func(job *search.Job) string { return listpage.ID(job.ID) })
	return res, nil
}

// Count returns how many jobs f selects (nil: all), counting at most
// search.MaxCount: what a bulk action on f will walk.
func (j *Jobs) Count(ctx context.Context, f *search.Filter) (int64, error) {
	return search.Count(ctx, j.db, j.schema, f)
}

// Status returns a job's status (RUNNING, ABORTED, ...) and the progress it
// last reported (package jobcontrol). An unknown id gives an error naming it
// that wraps ErrNotFound.
func (j *Jobs) Status(ctx context.Context, jobID int64) (*jobcontrol.JobStatus, error) {
	st, err := jobcontrol.GetJobStatus(ctx, j.db, j.schema, jobID)
	if errors.Is(err, jobcontrol.ErrNotFound) {
		return nil, fmt.Errorf("job: job %d: %w", jobID, ErrNotFound)
	}
	return st, err
}

// SetPriority sets one job's priority to p, whatever its state. A running
// job is not pre-empted. An unknown job id gives an error naming it that
// wraps ErrNotFound; a job whose metadata is not a JSON object (a row
// written by hand) gives an error naming it, and is left unchanged.
func (j *Jobs) SetPriority(ctx context.Context, jobID int64, p int64) error {
	var (
		updated      bool
		metadataType string
	)
	err := j.db.QueryRow(ctx, sqltemplate.Render(setPrioritySQL, j.schema), jobID, p).Scan(&updated, &metadataType)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return fmt.Errorf("job: setting the priority of job %d: %w", jobID, fmt.Errorf("job %d: %w", jobID, ErrNotFound))
	case err != nil:
		return fmt.Errorf("job: setting the priority of job %d: %w", jobID, err)
	case !updated:
		return fmt.Errorf("job: setting the priority of job %d: its metadata is a JSON %s, not an object, so it has no room for a job context; the job was left unchanged", jobID, metadataType)
	}
	return nil
}

// SetRetries sets the number of executions the job has left (Camunda's
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
// running job (River decides the outcome of the execution under way from
// the values it fetched; set retries when it has ended), for a completed or
// cancelled job, for n < 0, and for an n that River's max_attempts (a
// smallint) cannot hold. An unknown jobID gives an error naming it that
// wraps ErrNotFound.
//
// River's client.JobRetry also revives a discarded job (with one more
// execution) and resolves its incident the same way.
func (j *Jobs) SetRetries(ctx context.Context, jobID int64, n int) error {
	if n < 0 {
		return fmt.Errorf("job: setting retries of job %d: n %d is negative; retries must be >= 0", jobID, n)
	}
	tx, err := j.db.Begin(ctx)
	if err != nil {
		return fmt.Errorf("job: setting retries of job %d: %w", jobID, err)
	}
	defer func() { _ = tx.Rollback(ctx) }()

	var (
		state                string
		attempt, maxAttempts int
	)
	err = tx.QueryRow(ctx, sqltemplate.Render(lockForRetriesSQL, j.schema), jobID).Scan(&state, &attempt, &maxAttempts)
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("job: job %d: %w", jobID, ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("job: setting retries of job %d: %w", jobID, err)
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
		if incidentBefore, err = incident.OpenOf(ctx, tx, j.schema, jobID); err != nil {
			return fmt.Errorf("job: setting retries of job %d: %w", jobID, err)
		}
	}
	if _, err := tx.Exec(ctx, sqltemplate.Render(setRetriesSQL, j.schema), jobID, newMaxAttempts, string(newState)); err != nil {
		return fmt.Errorf("job: setting retries of job %d: %w", jobID, err)
	}
	if discardMoves {
		if incidentAfter, err = incident.OpenOf(ctx, tx, j.schema, jobID); err != nil {
			return fmt.Errorf("job: setting retries of job %d: %w", jobID, err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("job: setting retries of job %d: %w", jobID, err)
	}
	j.incidentsChanged(ctx, boolCount(!incidentBefore && incidentAfter), boolCount(incidentBefore && !incidentAfter))
	return nil
}

// boolCount is 1 for true, 0 for false.
func boolCount(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// retriesUpdate decides SetRetries for a job in state with attempt and
// maxAttempts given n retries: the job's new state and max_attempts, or
// the error SetRetries returns.
func retriesUpdate(jobID int64, state rivertype.JobState, attempt, maxAttempts, n int) (rivertype.JobState, int, error) {
	switch state {
	case rivertype.JobStateRunning:
		return "", 0, fmt.Errorf("job: job %d is running: set its retries when the execution has ended (River decides its outcome from the values it fetched)", jobID)
	case rivertype.JobStateCompleted, rivertype.JobStateCancelled:
		return "", 0, fmt.Errorf("job: job %d is %s: only unfinished and discarded jobs have retries", jobID, state)
	}
	if n > MaxAttemptsUnbounded-attempt {
		return "", 0, fmt.Errorf("job: job %d: n %d is too large: the job has run %d times, and River's max_attempts holds at most %d",
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
