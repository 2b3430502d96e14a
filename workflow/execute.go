package workflow

// Executing one job by hand (Camunda's managementService.executeJob).

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river/rivertype"

	"github.com/riverbpmn/riverbpmn/exclusive"
	"github.com/riverbpmn/riverbpmn/hold"
	"github.com/riverbpmn/riverbpmn/incident"
)

// ExecutedDueMetadataKey is the river_job.metadata key under which
// ExecuteJob keeps the due date of a job it runs before that date. The
// timer middleware (package handlers) computes a cycle's next occurrence
// from it, so that firing an occurrence early does not fire its slot again.
const ExecutedDueMetadataKey = "bpmn_executed_due"

// ExecuteJobPoll is how often ExecuteJob reads the job while it waits for
// its run to end (one primary-key read).
const ExecuteJobPoll = 25 * time.Millisecond

// executeRevertTimeout bounds the statement that gives a job that did not
// start its due date back.
const executeRevertTimeout = 10 * time.Second

var (
	jobExecuteRequestSQL  = mustReadSQL("job_execute_request.sql")
	jobExecuteProgressSQL = mustReadSQL("job_execute_progress.sql")
	jobExecuteRevertSQL   = mustReadSQL("job_execute_revert.sql")
)

// ErrJobNotExecutable is wrapped by ExecuteJob's error for a job that cannot
// be executed in its state: running, finished, or held (suspended, pending,
// waiting for prerequisites). The error names the state and what to do.
var ErrJobNotExecutable = errors.New("job cannot be executed")

// ErrJobNotStarted is wrapped by ExecuteJob's error when ctx ended before
// any client started the job. The job then has its due date back.
var ErrJobNotStarted = errors.New("no client started the job")

// JobExecution is the outcome of ExecuteJob: the job after its run.
type JobExecution struct {
	// Job is the job as its run left it.
	Job *rivertype.JobRow `json:"job"`
	// Outcome is what the run ended in: "completed"; "failed" (an error,
	// the job will be retried: State retryable, or available for an
	// immediate retry); "discarded" (an error with no retries left:
	// Incident says whether an incident was opened); "cancelled";
	// "snoozed" (the worker asked to run again later).
	Outcome string `json:"outcome"`
	// Error is the error of the run, when it failed.
	Error string `json:"error,omitempty"`
	// Incident is true when the job has an open incident after its run.
	Incident bool `json:"incident"`
	// DueAt is the due date the job had before ExecuteJob made it due now
	// (its scheduled_at; in the past for a job that was due already).
	DueAt time.Time `json:"due_at"`
	// Started and Ended are when the run started (River's attempted_at) and
	// when ExecuteJob saw it end.
	Started time.Time `json:"started"`
	Ended   time.Time `json:"ended"`
}

// ExecuteJob runs job jobID now, ignoring its due date, and returns the
// outcome of that run (Camunda's managementService.executeJob): what tests
// and operators use to fire a timer or run a retry now.
//
// The run is done by the engine's River clients, not in the caller: the job
// is made due now (available, scheduled_at now; a later due date is kept
// under ExecutedDueMetadataKey, from which a timer cycle computes its next
// occurrence), the producers of its queue are woken, and the first client
// that works the queue and the job's kind fetches it as any due job: with
// its acquisition order and filters, and with exclusivity (a job whose key
// another job's run holds waits for that run to end; ExecuteJob waits with
// it). So the run goes through the same River executor and middleware as
// any other: the retry cycle's bookkeeping, incidents, a timer's next
// occurrence, progress and events. Camunda runs the job in the caller's
// thread; River offers no public way to run one job through its executor,
// and a caller such as the CLI has no workers, so riverbpmn asks its
// clients through the database and waits.
//
// ExecuteJob waits while ctx lasts: for the run to start, then for it to
// end (polling the job every ExecuteJobPoll). If ctx ends before a client
// starts the job, the job gets its due date back and the error wraps
// ErrJobNotStarted, saying what it waited for (its key's holder, or no
// client of its queue). A job that is running, finished (completed,
// cancelled, discarded: revive a discarded one with SetJobRetries first) or
// held (suspended: activate it first) is refused with an error wrapping
// ErrJobNotExecutable. An unknown id wraps ErrNotFound. A run that fails is
// not an error of ExecuteJob: its outcome says so.
func (e *Engine) ExecuteJob(ctx context.Context, jobID int64) (*JobExecution, error) {
	if e.dbPool == nil {
		return nil, errNoPool
	}
	var (
		state         string
		due, dbNow    time.Time
		attempt       int16
		attemptedAt   *time.Time
		metadata      []byte
		queue         string
		moved         bool
		notExecutable error
	)
	err := pgx.BeginFunc(ctx, e.dbPool, func(tx pgx.Tx) error {
		err := tx.QueryRow(ctx, e.sql(jobExecuteRequestSQL), jobID).Scan(&state, &due, &attempt, &attemptedAt, &metadata, &queue, &moved, &dbNow)
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("job %d: %w", jobID, ErrNotFound)
		}
		if err != nil {
			return err
		}
		if !moved {
			notExecutable = notExecutableError(jobID, state, attempt, metadata)
			return notExecutable
		}
		// River's own insert notification: every producer of the queue
		// fetches now instead of at its next poll.
		return exclusive.WakeQueue(ctx, tx, e.config.Schema, queue)
	})
	if err != nil {
		if notExecutable != nil {
			return nil, notExecutable
		}
		return nil, fmt.Errorf("workflow: executing job %d: %w", jobID, err)
	}
	out := &JobExecution{DueAt: due.UTC()}
	started := false
	for {
		job, err := e.executeProgress(ctx, jobID)
		if err != nil && ctx.Err() == nil {
			return nil, fmt.Errorf("workflow: executing job %d: %w", jobID, err)
		}
		if job != nil && job.AttemptedAt != nil && !sameTime(job.AttemptedAt, attemptedAt) {
			started = true
			out.Started = job.AttemptedAt.UTC()
			if job.State != rivertype.JobStateRunning && !(job.State == rivertype.JobStateAvailable && int(job.Attempt) == int(attempt)) {
				return e.executionOutcome(ctx, out, job)
			}
		}
		if ctx.Err() != nil {
			if started {
				return nil, fmt.Errorf("workflow: executing job %d: its run started at %s and had not ended when the context ended: %w",
					jobID, out.Started.Format(time.RFC3339Nano), ctx.Err())
			}
			return nil, e.executeNotStarted(jobID, state, due, attemptedAt, queue, ctx.Err())
		}
		select {
		case <-ctx.Done():
		case <-time.After(ExecuteJobPoll):
		}
	}
}

func sameTime(a, b *time.Time) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.Equal(*b)
}

func (e *Engine) executeProgress(ctx context.Context, jobID int64) (*rivertype.JobRow, error) {
	job, _, err := scanJobRow(e.dbPool.QueryRow(ctx, e.sql(jobExecuteProgressSQL), jobID))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("job %d was deleted while it was executed: %w", jobID, ErrNotFound)
	}
	return job, err
}

// executionOutcome fills out from the job its run left.
func (e *Engine) executionOutcome(ctx context.Context, out *JobExecution, job *rivertype.JobRow) (*JobExecution, error) {
	out.Job = job
	out.Ended = time.Now().UTC()
	failed := len(job.Errors) > 0 && job.Errors[len(job.Errors)-1].Attempt == job.Attempt
	switch {
	case job.State == rivertype.JobStateCompleted:
		out.Outcome = "completed"
	case job.State == rivertype.JobStateDiscarded:
		out.Outcome = "discarded"
	case job.State == rivertype.JobStateCancelled:
		out.Outcome = "cancelled"
	case failed:
		out.Outcome = "failed"
	default:
		out.Outcome = "snoozed"
	}
	if failed {
		out.Error = job.Errors[len(job.Errors)-1].Error
	}
	open, err := incident.OpenOf(ctx, e.dbPool, e.config.Schema, job.ID)
	if err != nil {
		return nil, fmt.Errorf("workflow: executing job %d: %w", job.ID, err)
	}
	out.Incident = open
	return out, nil
}

// notExecutableError says why a job in state cannot be executed.
func notExecutableError(jobID int64, state string, attempt int16, metadata []byte) error {
	var why string
	switch rivertype.JobState(state) {
	case rivertype.JobStateRunning:
		why = fmt.Sprintf("is running (attempt %d); wait for it to end", attempt)
	case rivertype.JobStateCompleted, rivertype.JobStateCancelled:
		why = fmt.Sprintf("is %s", state)
	case rivertype.JobStateDiscarded:
		why = "is discarded (no retries left); give it retries with SetJobRetries (riverbpmn retries) first"
	case rivertype.JobStatePending:
		why = "is pending"
		if h, err := hold.Of(metadata); err == nil && h != nil {
			why = fmt.Sprintf("is held (%v)", h.Reasons)
			if h.Has(hold.Suspended) {
				why += "; activate it first (ActivateJob, riverbpmn activate)"
			}
		}
	default:
		why = fmt.Sprintf("is %s", state)
	}
	return fmt.Errorf("workflow: executing job %d: job %d %s: %w", jobID, jobID, why, ErrJobNotExecutable)
}

// executeNotStarted gives the job its due date back (if nobody started it
// meanwhile) and says what it waited for.
func (e *Engine) executeNotStarted(jobID int64, state string, due time.Time, attemptedAt *time.Time, queue string, cause error) error {
	ctx, cancel := context.WithTimeout(context.Background(), executeRevertTimeout)
	defer cancel()
	var why string
	if wait, err := e.ExclusiveWait(ctx, jobID); err == nil && wait.Waiting && wait.Holder != nil {
		why = fmt.Sprintf(": its exclusive key %q is held by job %d (attempt %d, client %s)", wait.Key, wait.Holder.JobID, wait.Holder.Attempt, wait.Holder.ClientID)
	} else {
		why = fmt.Sprintf(": is a client working queue %q and the job's kind running?", queue)
	}
	if _, err := e.dbPool.Exec(ctx, e.sql(jobExecuteRevertSQL), jobID, due, attemptedAt, state); err != nil {
		why += fmt.Sprintf("; giving it its due date back failed: %v", err)
	}
	return fmt.Errorf("workflow: executing job %d: %w before the context ended (%w)%s", jobID, ErrJobNotStarted, cause, why)
}
