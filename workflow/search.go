package workflow

import (
	"context"

	"github.com/riverbpmn/riverbpmn/search"
)

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
