package workflow

import (
	"context"
	"encoding/json"
	"slices"
	"sync"

	"github.com/riverqueue/river/rivertype"

	"github.com/riverbpmn/riverbpmn/index"
)

// fairTurns carries, per schema and queue, where a fair client
// (Acquisition.FairByTenant) is in its rounds, from one fetch to the next,
// so that a round cut short by a small fetch goes on in the next fetch
// instead of starting again: deficit round robin over the tenants, whatever
// the fetch size.
//
// A round gives each tenant with waiting jobs its weight w in slots, the
// tenants taking their turns in byte order of their names (the fetch
// compares them with COLLATE "C", which orders as Go does, whatever the
// database's collation). A tenant's slots are numbered across rounds: slot
// s is in round s / w. Where the next fetch starts is three values: the
// round in progress, the last tenant served in it, and how many of that
// round's slots that tenant took. In that round, the tenants before it have
// had their turn (their next slot is in the round after), it has taken
// used, and the tenants after it have taken none. That is all a round
// needs: a tenant before it that was not served (it had no job the client
// could take) lost its turn, as an idle queue loses its deficit in deficit
// round robin, so nobody builds up credit while it has nothing to run.
//
// The state is this client's, in memory, and costs no statement: a fetch
// passes it as three parameters and the client updates it from the jobs
// the fetch returned. Several fair clients on one queue each keep their own
// turns; each one's fetches are in the weights' ratio to within one round,
// so their sum is too. A client that restarts starts a new round: tenants
// served in the round in progress may be served again, at most w jobs each
// (one round, the granularity of the weights themselves), once per restart;
// from then on the rounds are exact again. Keeping the state in a table
// instead would add a write to every fair fetch, and a row every concurrent
// fair fetch of the queue would wait on, to save at most one round per
// restart.
type fairTurns struct {
	mu    sync.Mutex
	turns map[string]fairTurn // schema + "\x00" + queue
}

// fairTurn is where a fair client is in its rounds on one queue.
type fairTurn struct {
	round  int64  // the round in progress
	tenant string // the last tenant served in it
	used   int64  // how many of its slots of that round it took
}

// start is the slot a tenant of weight w starts at in the next fetch: the
// first of round t.round, after those it took in that round already.
func (t *fairTurn) start(tenant string, w int64) int64 {
	switch {
	case t == nil:
		return 0
	case tenant < t.tenant: // byte order, as COLLATE "C"
		return (t.round + 1) * w
	case tenant == t.tenant:
		return t.round*w + t.used
	default:
		return t.round * w
	}
}

// arg returns the value of the fetch parameter name (fair_round,
// fair_tenant, fair_used) for the next fetch of queue: round 0, no tenant
// (NULL) and 0 before the first fetch.
func (f *fairTurns) arg(name, schema, queue string) any {
	f.mu.Lock()
	turn, ok := f.turns[schema+"\x00"+queue]
	f.mu.Unlock()
	switch name {
	case "fair_round":
		return turn.round
	case "fair_tenant":
		if !ok {
			return nil
		}
		return turn.tenant
	case "fair_used":
		return turn.used
	}
	panic("workflow: not a fairness parameter: " + name)
}

// advance records the turns a fetch took. A tenant that took n jobs from
// slot s (start) last served in round (s+n-1) / w; the fetch took its jobs
// by round, then turn, so the round in progress is the highest of these,
// and its last tenant the last, in turn order, of the tenants that served
// in it.
func (f *fairTurns) advance(schema, queue string, jobs []*rivertype.JobRow, weights map[string]int) {
	if len(jobs) == 0 {
		return
	}
	counts := map[string]int64{}
	for _, job := range jobs {
		counts[jobTenant(job.Metadata)]++
	}
	key := schema + "\x00" + queue
	f.mu.Lock()
	defer f.mu.Unlock()
	var prev *fairTurn
	if turn, ok := f.turns[key]; ok {
		prev = &turn
	}
	var next *fairTurn
	for tenant, n := range counts {
		w := int64(max(weights[tenant], 1))
		last := prev.start(tenant, w) + n - 1
		round := last / w
		if next == nil || round > next.round || (round == next.round && tenant > next.tenant) {
			next = &fairTurn{round: round, tenant: tenant, used: last - round*w + 1}
		}
	}
	if f.turns == nil {
		f.turns = map[string]fairTurn{}
	}
	f.turns[key] = *next
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
