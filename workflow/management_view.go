package workflow

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/rivertype"

	"github.com/riverbpmn/riverbpmn/retrypolicy"
)

// JobDetails is everything an operator asks about one job.
type JobDetails struct {
	// Job is the River job row.
	Job *rivertype.JobRow
	// Context is the job's job context; nil for a plain River job, or when
	// the stored context cannot be read (ContextError says why).
	Context      *JobContext
	ContextError string
	// RetriesLeft is Camunda's "retries": the executions the job has left
	// (counting the one under way for a running job); 0 for a discarded,
	// completed or cancelled job. RetriesUnbounded is true for a job whose
	// retry cycle is unbounded (R/...): RetriesLeft is then meaningless.
	RetriesLeft      int
	RetriesUnbounded bool
	// RetryCycle is the retry cycle recorded at insert; empty for none.
	RetryCycle string
	// NextRunAt is when the job runs next: its scheduled_at while it waits
	// (available, scheduled, retryable); nil otherwise.
	NextRunAt *time.Time
	// ExclusiveWait says whether the job waits for its exclusive key, under
	// the engine's Config.ExclusiveScope.
	ExclusiveWait *ExclusiveWait
	// Incidents are the job's incidents, open or resolved, oldest first.
	Incidents []*Incident
}

// JobDetails returns one job with its job context, retries left, retry
// cycle, next run, exclusive wait and incidents. An unknown jobID gives an
// error naming it that wraps ErrNotFound.
func (e *Engine) JobDetails(ctx context.Context, jobID int64) (*JobDetails, error) {
	if e.dbPool == nil {
		return nil, errNoPool
	}
	job, err := e.driver.GetExecutor().JobGetByID(ctx, &riverdriver.JobGetByIDParams{ID: jobID, Schema: e.config.Schema})
	if errors.Is(err, rivertype.ErrNotFound) {
		return nil, fmt.Errorf("workflow: job %d: %w", jobID, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("workflow: reading job %d: %w", jobID, err)
	}
	details := &JobDetails{Job: job}
	switch jc, err := JobContextOf(job); {
	case errors.Is(err, ErrNoJobContext):
	case err != nil:
		details.ContextError = err.Error()
	default:
		details.Context = &jc
	}
	if cycle, ok := retryCycleOf(job); ok && !cycle.IsZero() {
		details.RetryCycle = cycle.String()
	}
	details.RetriesUnbounded = job.MaxAttempts == retrypolicy.MaxAttemptsUnbounded && details.RetryCycle != ""
	switch job.State {
	case rivertype.JobStateRunning:
		details.RetriesLeft = retrypolicy.ExecutionsLeft(job)
	case rivertype.JobStateAvailable, rivertype.JobStateScheduled, rivertype.JobStateRetryable, rivertype.JobStatePending:
		details.RetriesLeft = max(job.MaxAttempts-job.Attempt, 0)
	}
	switch job.State {
	case rivertype.JobStateAvailable, rivertype.JobStateScheduled, rivertype.JobStateRetryable:
		next := job.ScheduledAt.UTC()
		details.NextRunAt = &next
	}
	if details.ExclusiveWait, err = e.ExclusiveWait(ctx, jobID); err != nil {
		return nil, err
	}
	if details.Incidents, err = e.JobIncidents(ctx, jobID); err != nil {
		return nil, err
	}
	return details, nil
}
