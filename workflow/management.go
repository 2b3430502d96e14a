package workflow

import (
	"context"
	"fmt"

	"github.com/riverqueue/river/rivertype"
)

// MaxProcessInstanceJobs caps how many jobs ProcessInstanceJobs returns.
const MaxProcessInstanceJobs = 10_000

var processInstanceJobsSQL = mustReadSQL("process_instance_jobs.sql")

// ProcessInstanceJobs returns the jobs of one process instance in every state,
// oldest first (at most MaxProcessInstanceJobs): the first thing to look at
// when an instance seems stuck. An empty id is an error naming the field.
func (e *Engine) ProcessInstanceJobs(ctx context.Context, processInstanceID string) ([]*rivertype.JobRow, error) {
	if problem := identifierProblem(processInstanceID, true); problem != "" {
		return nil, &JobContextError{Field: "process_instance_id", Value: processInstanceID, Problem: problem}
	}
	if e.dbPool == nil {
		return nil, errNoPool
	}
	rows, err := e.dbPool.Query(ctx, e.sql(processInstanceJobsSQL), processInstanceID, MaxProcessInstanceJobs)
	if err != nil {
		return nil, fmt.Errorf("workflow: listing jobs of process instance %q: %w", processInstanceID, err)
	}
	// A job whose attempt errors cannot be decoded is still listed, with
	// Errors empty: this call is for looking, not for working the job.
	jobs, _, err := scanJobRows(rows)
	if err != nil {
		return nil, fmt.Errorf("workflow: listing jobs of process instance %q: %w", processInstanceID, err)
	}
	return jobs, nil
}
