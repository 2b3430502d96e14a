package handlers

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/riverbpmn/riverbpmn/workflow"
)

// Step names the next step of a process instance for ContinueTx.
type Step struct {
	// ActivityID and JobDefinitionID are the next step's activity and job
	// definition (either may be empty).
	ActivityID      string
	JobDefinitionID string
	// InsertOpts are the next job's insert options; nil for none.
	InsertOpts *river.InsertOpts
}

// NextJobContext returns the job context of the step that follows a job
// with context jc: the same process instance, root instance, process
// definition and deployment, the step's activity and job definition, and
// JobType workflow.JobTypeAsync. Priority, exclusivity and retry cycle are
// not carried over: the engine resolves them for the new activity at
// insert.
func NextJobContext(jc workflow.JobContext, step Step) workflow.JobContext {
	return workflow.JobContext{
		ProcessInstanceID:     jc.ProcessInstanceID,
		RootProcessInstanceID: jc.RootProcessInstanceID,
		ProcessDefinitionKey:  jc.ProcessDefinitionKey,
		DeploymentID:          jc.DeploymentID,
		ActivityID:            step.ActivityID,
		JobDefinitionID:       step.JobDefinitionID,
		JobType:               workflow.JobTypeAsync,
	}
}

// ContinueTx is an asynchronous continuation, the River way: inside a
// worker, in the worker's own transaction tx, it inserts next as the next
// step of job's process instance (job context carried forward with
// NextJobContext, unless next implements workflow.JobArgsWithJobContext)
// and completes job (river.JobCompleteTx). Commit tx and both happen, or
// neither: a crash between steps can neither lose the next step nor run it
// twice. Returns the next job.
//
// The job must have a job context (workflow.JobContextOf) and the worker
// must run on a client built on a workflow.Driver.
func ContinueTx[TArgs river.JobArgs](ctx context.Context, tx pgx.Tx, job *river.Job[TArgs], next river.JobArgs, step Step) (*rivertype.JobInsertResult, error) {
	client, err := river.ClientFromContextSafely[pgx.Tx](ctx)
	if err != nil {
		return nil, fmt.Errorf("handlers: ContinueTx works inside a River worker: %w", err)
	}
	var opts river.InsertOpts
	if step.InsertOpts != nil {
		opts = *step.InsertOpts
	}
	if _, ownContext := next.(workflow.JobArgsWithJobContext); !ownContext {
		jc, err := workflow.JobContextOf(job.JobRow)
		if errors.Is(err, workflow.ErrNoJobContext) {
			return nil, fmt.Errorf("handlers: job %d (%s) has no job context; ContinueTx carries a process instance forward", job.ID, job.Kind)
		}
		if err != nil {
			return nil, err
		}
		if opts.Metadata, err = NextJobContext(jc, step).AddToMetadata(opts.Metadata); err != nil {
			return nil, err
		}
	}
	res, err := client.InsertTx(ctx, tx, next, &opts)
	if err != nil {
		return nil, fmt.Errorf("handlers: continuing job %d with %s: %w", job.ID, next.Kind(), err)
	}
	if _, err := river.JobCompleteTx[*workflow.Driver](ctx, tx, job); err != nil {
		return nil, fmt.Errorf("handlers: completing job %d: %w", job.ID, err)
	}
	return res, nil
}
