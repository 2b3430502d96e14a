package workflow

// Running jobs (as the CNES REGARDS jobs module shows them): progress, stop,
// and job status events. The logic
// and SQL live in packages jobcontrol and events; these are the engine's
// thin front doors.

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/riverbpmn/riverbpmn/jobcontrol"
)

// validateJobControl checks the configuration of progress and events.
func validateJobControl(config *Config) error {
	if config.ProgressInterval < 0 {
		return fmt.Errorf("workflow: Config.ProgressInterval must not be negative, got %s", config.ProgressInterval)
	}
	if err := config.Events.Validate(); err != nil {
		return fmt.Errorf("workflow: Config.Events: %w", err)
	}
	return nil
}

// workControl is the work path of progress and stop: the job's progress
// reporter is in the context its work gets (written when the work returns),
// and a job whose stop request reached it ends ABORTED (jobcontrol.WorkStop).
func (e *Engine) workControl(ctx context.Context, job *rivertype.JobRow, doInner func(context.Context) error) error {
	if e.dbPool == nil {
		return doInner(ctx)
	}
	schema := e.workSchema(ctx)
	return jobcontrol.WorkWithProgress(ctx, e.dbPool, schema, job.ID, job.Attempt, e.config.ProgressInterval, func(ctx context.Context) error {
		return jobcontrol.WorkStop(ctx, e.dbPool, schema, job, doInner)
	})
}

// workSchema is the schema of the client working a job.
func (e *Engine) workSchema(ctx context.Context) string {
	if client, err := river.ClientFromContextSafely[pgx.Tx](ctx); err == nil {
		return client.Schema()
	}
	return e.config.Schema
}

// StopJob asks job jobID to stop (REGARDS' stopJob), asynchronously: a job
// waiting to run is cancelled at once and never starts (ABORTED); a running
// job's context is cancelled by whichever client runs it, in any process, and
// the job ends ABORTED when its work returns (give clients the engine's
// Middleware); a finished job is left as it is, and the result says so.
// Asking again is harmless. An aborted job opens no incident. In River terms
// ABORTED is state cancelled with "cancel_attempted_at" in metadata. An
// unknown id gives an error wrapping ErrNotFound.
func (e *Engine) StopJob(ctx context.Context, jobID int64) (*jobcontrol.StopResult, error) {
	if e.dbPool == nil {
		return nil, errNoPool
	}
	results, err := jobcontrol.StopJobs(ctx, e.dbPool, e.config.Schema, []int64{jobID})
	if err != nil {
		return nil, err
	}
	if len(results) == 0 {
		return nil, fmt.Errorf("workflow: stopping job %d: %w", jobID, ErrNotFound)
	}
	return &results[0], nil
}

// StopProcessInstance asks every job of a process instance to stop, in one
// statement, as StopJob does for one; it returns one result per job (none
// for an instance without jobs).
func (e *Engine) StopProcessInstance(ctx context.Context, processInstanceID string) ([]jobcontrol.StopResult, error) {
	if problem := identifierProblem(processInstanceID, true); problem != "" {
		return nil, &JobContextError{Field: "process_instance_id", Value: processInstanceID, Problem: problem}
	}
	if e.dbPool == nil {
		return nil, errNoPool
	}
	return jobcontrol.StopProcessInstance(ctx, e.dbPool, e.config.Schema, processInstanceID)
}

// ProcessInstanceStatus returns the status and progress of every job of a
// process instance, oldest first (at most MaxProcessInstanceJobs).
func (e *Engine) ProcessInstanceStatus(ctx context.Context, processInstanceID string) ([]*jobcontrol.JobStatus, error) {
	if problem := identifierProblem(processInstanceID, true); problem != "" {
		return nil, &JobContextError{Field: "process_instance_id", Value: processInstanceID, Problem: problem}
	}
	if e.dbPool == nil {
		return nil, errNoPool
	}
	return jobcontrol.ProcessInstanceStatus(ctx, e.dbPool, e.config.Schema, processInstanceID, MaxProcessInstanceJobs)
}
