package workflow

import "github.com/riverbpmn/riverbpmn/index"

// Indexes returns the handle on the schema's on-demand indexes on river_job
// (package index): the fetch-order indexes (FetchOrderIndex), the tenant
// indexes of fair fetching (TenantFairnessIndex), the exclusive head-of-key
// indexes (ExclusiveHeadIndex). List shows every one with whether it exists and is valid;
// Enable builds named ones with CREATE INDEX CONCURRENTLY (a client builds
// those its acquisition reads when it starts); Disable drops named ones.
func (e *Engine) Indexes() *index.Indexes { return e.indexes.get(e.newIndexes) }

// newIndexes makes the engine's indexes handle.
func (e *Engine) newIndexes() *index.Indexes {
	return index.New(index.Config{DB: e.db(), Schema: e.config.Schema, Families: []*index.Family{
		index.FetchOrder, index.TenantFairness, exclusiveHeadIndexes.Family,
	}})
}
