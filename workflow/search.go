package workflow

import (
	"context"

	"github.com/riverbpmn/riverbpmn/search"
)

// SearchJobs returns one page of the jobs matching f (package search):
// by state, kind, job definition, process definition, tenant, process
// instance id prefix and creation time, newest first (or oldest, with
// f.Oldest), at most limit (1 to MaxPageSize), after the job id cursor
// (0 for the first page; the next page's cursor is the last job's ID).
func (e *Engine) SearchJobs(ctx context.Context, f *search.Filter, cursor int64, limit int) ([]*search.Job, error) {
	if err := checkPageLimit(limit); err != nil {
		return nil, err
	}
	if e.dbPool == nil {
		return nil, errNoPool
	}
	return search.Jobs(ctx, e.dbPool, e.config.Schema, f, cursor, limit)
}

// SearchProcessInstances returns one page of the process instances that
// have a job matching f, each once, ordered by their newest matching job
// (oldest, with f.Oldest), with their jobs counted by state; at most limit
// (1 to MaxPageSize), after the cursor (0 for the first page, then the
// page's Next, which is 0 on the last page).
func (e *Engine) SearchProcessInstances(ctx context.Context, f *search.Filter, cursor int64, limit int) (*search.InstancePage, error) {
	if err := checkPageLimit(limit); err != nil {
		return nil, err
	}
	if e.dbPool == nil {
		return nil, errNoPool
	}
	return search.InstancesPage(ctx, e.dbPool, e.config.Schema, f, cursor, limit)
}

// CountJobs returns how many jobs match f (package search), counting at
// most search.MaxCount: what a bulk action on f will walk.
func (e *Engine) CountJobs(ctx context.Context, f *search.Filter) (int64, error) {
	if e.dbPool == nil {
		return 0, errNoPool
	}
	return search.Count(ctx, e.dbPool, e.config.Schema, f)
}
