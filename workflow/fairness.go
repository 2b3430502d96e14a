package workflow

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/riverqueue/river/rivertype"

	"github.com/riverbpmn/riverbpmn/fairness"
	"github.com/riverbpmn/riverbpmn/index"
)

// fairTurns is a fair driver's fairness.Turns, advanced by the tenants of
// the jobs its fetches take as its job contexts give them (jobTenant).
type fairTurns struct{ turns fairness.Turns }

// arg returns the value of the fair step's parameter name
// (fairness.Params) for the next fetch of queue.
func (f *fairTurns) arg(name, schema, queue string) any { return f.turns.Arg(name, schema, queue) }

// advance records the turns a fetch of queue took (fairness.Turns.Advance).
func (f *fairTurns) advance(schema, queue string, jobs []*rivertype.JobRow, weights map[string]int) {
	tenants := make([]string, len(jobs))
	for i, job := range jobs {
		tenants[i] = jobTenant(job.Metadata)
	}
	f.turns.Advance(schema, queue, tenants, weights)
}

// jobTenant returns the tenant of a job's metadata as the fetch sees it
// (river_bpmn_ctx_tenant, migration riverbpmn/016: a JSON string's text),
// "" for none or for a value that is not a string.
func jobTenant(metadata []byte) string {
	fields, found, err := metadataContextFields(metadata)
	if !found || err != nil {
		return ""
	}
	tenant := fields.field("tenant_id")
	if tenant == nil {
		return ""
	}
	var s string
	if json.Unmarshal(tenant, &s) != nil {
		return "" // null, a number or another value: no tenant, as in SQL
	}
	return s
}

// tenantIndexes are the tenant indexes of fair fetching, one per order
// (index.TenantFairness).
var tenantIndexes = &onDemandIndexes{index.TenantFairness}

// TenantFairnessIndex names the tenant index a fair client whose
// acquisition is acq reads (the one EnableTenantFairness creates for acq):
// river_bpmn_fetch_tenant in River's order, with a suffix naming the order
// keys acq enables (p ByPriority, t TimersFirst, d ByDueDate), such as
// river_bpmn_fetch_tenant_pd for ByPriority and ByDueDate. Only those three
// options choose the index; the filters and the weights do not.
func TenantFairnessIndex(acq Acquisition) string {
	return index.TenantIndexName(orderSuffix(acq))
}

// tenantIndexNamesOf are the tenant indexes of orders (TenantFairnessIndex;
// none given: River's order's).
func tenantIndexNamesOf(orders []Acquisition) []string {
	if len(orders) == 0 {
		orders = []Acquisition{{}}
	}
	names := make([]string, len(orders))
	for i, acq := range orders {
		names[i] = TenantFairnessIndex(acq)
	}
	return names
}

// EnableTenantFairness creates, in the engine's schema, the tenant index a
// fair fetch (Acquisition.FairByTenant) of each given acquisition reads
// (TenantFairnessIndex), or, with none given, the index of River's order,
// with CREATE INDEX CONCURRENTLY. A client whose driver fetches fairly
// calls it for its own acquisition when it starts.
//
// Deprecated: use [Engine.Indexes] and [index.Indexes.Enable] with the
// names of [TenantFairnessIndex].
func (e *Engine) EnableTenantFairness(ctx context.Context, orders ...Acquisition) error {
	return e.Indexes().Enable(ctx, tenantIndexNamesOf(orders)...)
}

// DisableTenantFairness drops every tenant index of EnableTenantFairness, of
// every order (concurrently).
//
// Deprecated: use [Engine.Indexes] and [index.Indexes.Disable].
func (e *Engine) DisableTenantFairness(ctx context.Context) error {
	return e.Indexes().Disable(ctx, index.TenantFairness.Names()...)
}

// TenantFairnessEnabled says whether the tenant index of each given
// acquisition's order (TenantFairnessIndex) exists and is valid in the
// engine's schema; with none given, whether any tenant index does.
//
// Deprecated: use [Engine.Indexes] and [index.Indexes.List].
func (e *Engine) TenantFairnessEnabled(ctx context.Context, orders ...Acquisition) (bool, error) {
	valid, err := e.enabledIndexes(ctx, index.TenantFairness.Name())
	if err != nil {
		return false, err
	}
	if len(orders) == 0 {
		return len(valid) > 0, nil
	}
	for _, acq := range orders {
		if !slices.Contains(valid, TenantFairnessIndex(acq)) {
			return false, nil
		}
	}
	return true, nil
}

// TenantFairnessIndexes returns the names of the tenant indexes that exist
// and are valid in the engine's schema, sorted (none: nil).
//
// Deprecated: use [Engine.Indexes] and [index.Indexes.List].
func (e *Engine) TenantFairnessIndexes(ctx context.Context) ([]string, error) {
	return e.enabledIndexes(ctx, index.TenantFairness.Name())
}
