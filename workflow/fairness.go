package workflow

import (
	"context"
	"encoding/json"
	"regexp"
	"slices"
	"sync"

	"github.com/riverqueue/river/rivertype"
)

// fairTurns remembers, per schema and queue, the last tenant a fair fetch
// (Acquisition.FairByTenant) served in its last round, so that the next
// fetch's rounds start with the tenant after it: tenants take turns across
// fetches, not only within one. It is a hint of this client, kept in memory:
// lost on restart, the turns start again from the first tenant, and nothing
// is owed to anyone.
type fairTurns struct {
	mu   sync.Mutex
	last map[string]string // schema + "\x00" + queue -> tenant ("" for none)
}

// after returns the tenant after which the next fetch of queue starts its
// rounds, or nil before the first fetch.
func (f *fairTurns) after(schema, queue string) any {
	f.mu.Lock()
	defer f.mu.Unlock()
	tenant, ok := f.last[schema+"\x00"+queue]
	if !ok {
		return nil
	}
	return tenant
}

// advance records the turns a fetch took: the tenant served last in the
// fetch's last round. A tenant's last job was in round ceil(n/w)-1 (n jobs
// taken, weight w); the tenants of the highest such round were served in it,
// in turn order from the previous position, so the last of them in that
// order is the one the next fetch starts after.
func (f *fairTurns) advance(schema, queue string, jobs []*rivertype.JobRow, weights map[string]int) {
	if len(jobs) == 0 {
		return
	}
	counts := map[string]int{}
	for _, job := range jobs {
		counts[jobTenant(job.Metadata)]++
	}
	key := schema + "\x00" + queue
	f.mu.Lock()
	defer f.mu.Unlock()
	prev, hadPrev := f.last[key]
	lastRound, best := -1, ""
	for tenant, n := range counts {
		w := max(weights[tenant], 1)
		round := (n+w-1)/w - 1
		if round > lastRound || (round == lastRound && turnAfter(tenant, best, prev, hadPrev)) {
			lastRound, best = round, tenant
		}
	}
	if f.last == nil {
		f.last = map[string]string{}
	}
	f.last[key] = best
}

// turnAfter reports whether tenant a comes after b in turn order starting
// after prev (name order, wrapping around).
func turnAfter(a, b, prev string, hadPrev bool) bool {
	if !hadPrev {
		return a > b
	}
	aWrapped, bWrapped := a <= prev, b <= prev
	if aWrapped != bWrapped {
		return aWrapped
	}
	return a > b
}

// jobTenant returns the tenant of a job's metadata as the fetch sees it
// (river_bpmn_ctx_tenant, migration riverbpmn/016: a JSON string's text),
// "" for none or for a value that is not a string.
func jobTenant(metadata []byte) string {
	raw, err := metadataJobContext(metadata)
	if err != nil || raw == nil {
		return ""
	}
	var fields struct {
		TenantID json.RawMessage `json:"tenant_id"`
	}
	if json.Unmarshal(raw, &fields) != nil || len(fields.TenantID) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(fields.TenantID, &s) != nil {
		return "" // null, a number or another value: no tenant, as in SQL
	}
	return s
}

// tenantIndexes are the tenant indexes of fair fetching, one per order
// (sql/fairness_index_create.sql).
var tenantIndexes = newOnDemandIndexes("tenant fairness index", tenantIndexNames,
	regexp.MustCompile(`\briver_bpmn_fetch_tenant(_[ptd]+)?\b`), "fairness_index_create.sql", "fairness_index_drop.sql")

// tenantIndexNames are the names of every tenant index, one per order.
var tenantIndexNames = func() []string {
	names := make([]string, len(orderIndexSuffixes))
	for i, suffix := range orderIndexSuffixes {
		names[i] = tenantIndexName(suffix)
	}
	return names
}()

func tenantIndexName(suffix string) string {
	if suffix == "" {
		return "river_bpmn_fetch_tenant"
	}
	return "river_bpmn_fetch_tenant_" + suffix
}

// TenantFairnessIndex names the tenant index a fair client whose
// acquisition is acq reads (the one EnableTenantFairness creates for acq):
// river_bpmn_fetch_tenant in River's order, with a suffix naming the order
// keys acq enables (p ByPriority, t TimersFirst, d ByDueDate), such as
// river_bpmn_fetch_tenant_pd for ByPriority and ByDueDate. Only those three
// options choose the index; the filters and the weights do not.
func TenantFairnessIndex(acq Acquisition) string {
	return tenantIndexName(orderSuffix(acq))
}

// EnableTenantFairness creates, in the engine's schema, the tenant index a
// fair fetch (Acquisition.FairByTenant) of each given acquisition reads
// (TenantFairnessIndex: one per order, so a client fetching by priority
// with fairness gets the index by tenant and priority), or, with none given,
// the index of River's order. It uses CREATE INDEX CONCURRENTLY: inserts and
// fetches go on while they are built. A client whose driver fetches fairly
// calls it for its own acquisition when it starts, so an application rarely
// needs to; a database whose clients never fetch fairly never has the
// indexes, and its inserts pay nothing for fairness, and one whose fair
// clients share an order pays one index entry per insert. Idempotent. An
// index left invalid by an interrupted build is dropped and built again.
func (e *Engine) EnableTenantFairness(ctx context.Context, orders ...Acquisition) error {
	if len(orders) == 0 {
		orders = []Acquisition{{}}
	}
	names := make([]string, len(orders))
	for i, acq := range orders {
		names[i] = TenantFairnessIndex(acq)
	}
	return tenantIndexes.enable(ctx, e, names)
}

// DisableTenantFairness drops every tenant index of EnableTenantFairness, of
// every order (concurrently). Fair fetches still work, reading River's own
// indexes, slowly; a fair client starting again creates its index again.
func (e *Engine) DisableTenantFairness(ctx context.Context) error {
	return tenantIndexes.disable(ctx, e)
}

// TenantFairnessEnabled says whether the tenant index of each given
// acquisition's order (TenantFairnessIndex) exists and is valid in the
// engine's schema; with none given, whether any tenant index does.
func (e *Engine) TenantFairnessEnabled(ctx context.Context, orders ...Acquisition) (bool, error) {
	valid, err := e.TenantFairnessIndexes(ctx)
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
func (e *Engine) TenantFairnessIndexes(ctx context.Context) ([]string, error) {
	return tenantIndexes.valid(ctx, e)
}
