package workflow

import (
	"context"

	"github.com/riverbpmn/riverbpmn/internal/listpage"
	"github.com/riverbpmn/riverbpmn/job"
	"github.com/riverbpmn/riverbpmn/jobcontrol"
	"github.com/riverbpmn/riverbpmn/search"
)

// Jobs returns the handle on the schema's jobs (package job): List pages
// through the jobs a search.Filter selects, Count counts them, Status reads
// a job's status and progress, SetRetries sets the executions a job has
// left (Camunda's job retries: reviving a discarded job resolves its
// incident), SetPriority sets one job's priority, Stop and
// StopProcessInstance ask jobs to stop (package jobcontrol). What an operator asks
// about one job as a whole is Engine.JobDetails; running a job now is
// Engine.ExecuteJob, and why it waits Engine.WhyWaiting.
func (e *Engine) Jobs() *job.Jobs { return e.jobs.get(e.newJobs) }

// newJobs makes the engine's jobs handle.
func (e *Engine) newJobs() *job.Jobs {
	return job.New(job.Config{DB: e.db(), Schema: e.config.Schema, IncidentsChanged: e.tel.IncidentsChanged})
}

// SearchJobs returns one page of the jobs matching f (package search):
// by state, kind, job definition, process definition, tenant, process
// instance id prefix and creation time, newest first (or oldest, with
// f.Oldest), at most limit (1 to MaxPageSize), after the job id cursor
// (0 for the first page; the next page's cursor is the last job's ID).
//
// Deprecated: use [Engine.Jobs] and [job.Jobs.List].
func (e *Engine) SearchJobs(ctx context.Context, f *search.Filter, cursor int64, limit int) ([]*search.Job, error) {
	if f == nil {
		f = &search.Filter{}
	}
	res, err := e.Jobs().List(ctx, &job.ListParams{Filter: *f, Limit: limit, After: listpage.ID(cursor)})
	if err != nil {
		return nil, err
	}
	return res.Items, nil
}

// CountJobs returns how many jobs match f (package search), counting at
// most search.MaxCount: what a bulk action on f will walk.
//
// Deprecated: use [Engine.Jobs] and [job.Jobs.Count].
func (e *Engine) CountJobs(ctx context.Context, f *search.Filter) (int64, error) {
	return e.Jobs().Count(ctx, f)
}

// JobStatus returns a job's status (RUNNING, ABORTED, ...) and the progress
// it last reported. An unknown id gives an error wrapping ErrNotFound.
//
// Deprecated: use [Engine.Jobs] and [job.Jobs.Status].
func (e *Engine) JobStatus(ctx context.Context, jobID int64) (*jobcontrol.JobStatus, error) {
	st, err := e.Jobs().Status(ctx, jobID)
	return st, err
}

// SetJobPriority sets one job's priority to p, whatever its state. A running
// job is not pre-empted. An unknown job id gives an error naming it that wraps
// ErrNotFound.
//
// Deprecated: use [Engine.Jobs] and [job.Jobs.SetPriority].
func (e *Engine) SetJobPriority(ctx context.Context, jobID int64, p int64) error {
	return e.Jobs().SetPriority(ctx, jobID, p)
}

// SetJobRetries sets the number of executions the job has left (Camunda's
// job retries), n >= 0; see job.Jobs.SetRetries. An unknown jobID gives an
// error naming it that wraps ErrNotFound.
//
// Deprecated: use [Engine.Jobs] and [job.Jobs.SetRetries].
func (e *Engine) SetJobRetries(ctx context.Context, jobID int64, n int) error {
	return e.Jobs().SetRetries(ctx, jobID, n)
}
