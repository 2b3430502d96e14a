package workflow

import (
	"encoding/json"
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
// (metadata.bpmn.tenant_id as text), "" for none.
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
	if json.Unmarshal(fields.TenantID, &s) == nil {
		return s
	}
	if string(fields.TenantID) == "null" {
		return ""
	}
	return string(fields.TenantID) // a number or other value: its JSON text, as ->> gives
}
