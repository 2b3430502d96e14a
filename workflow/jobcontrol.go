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
	if err := config.JobControl.Validate(); err != nil {
		return fmt.Errorf("workflow: Config.JobControl: %w", err)
	}
	if j := config.JobControl.ProgressInterval; j != 0 && config.ProgressInterval != 0 && j != config.ProgressInterval {
		return fmt.Errorf("workflow: Config.JobControl.ProgressInterval (%s) and the deprecated Config.ProgressInterval (%s) differ: set only Config.JobControl.ProgressInterval",
			j, config.ProgressInterval)
	}
	if err := config.Events.Validate(); err != nil {
		return fmt.Errorf("workflow: Config.Events: %w", err)
	}
	return nil
}

// jobControlConfig is Config.JobControl, with the deprecated
// Config.ProgressInterval when JobControl.ProgressInterval is zero.
func (c *Config) jobControlConfig() jobcontrol.Config {
	j := c.JobControl
	if j.ProgressInterval == 0 {
		j.ProgressInterval = c.ProgressInterval
	}
	return j
}

// workControl is the work path of progress and stop: the job's progress
// reporter is in the context its work gets (written when the work returns),
// and a job whose stop request reached it ends ABORTED (jobcontrol.WorkStop).
func (e *Engine) workControl(ctx context.Context, job *rivertype.JobRow, doInner func(context.Context) error) error {
	if e.dbPool == nil {
		return doInner(ctx)
	}
	schema := e.workSchema(ctx)
	return jobcontrol.WorkWithProgress(ctx, e.dbPool, schema, job.ID, job.Attempt, e.config.jobControlConfig().ProgressInterval, func(ctx context.Context) error {
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

// StopJob asks job jobID to stop. An unknown id gives an error wrapping
// ErrNotFound.
//
// Deprecated: use [Engine.Jobs] and [job.Jobs.Stop].
func (e *Engine) StopJob(ctx context.Context, jobID int64) (*jobcontrol.StopResult, error) {
	return e.Jobs().Stop(ctx, jobID)
}

// StopProcessInstance asks every job of a process instance to stop.
//
// Deprecated: use [Engine.Jobs] and [job.Jobs.StopProcessInstance].
func (e *Engine) StopProcessInstance(ctx context.Context, processInstanceID string) ([]jobcontrol.StopResult, error) {
	if problem := identifierProblem(processInstanceID, true); problem != "" {
		return nil, &JobContextError{Field: "process_instance_id", Value: processInstanceID, Problem: problem}
	}
	return e.Jobs().StopProcessInstance(ctx, processInstanceID)
}
