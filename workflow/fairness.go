package workflow

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
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

var (
	fairnessIndexCreateSQL = mustReadSQL("fairness_index_create.sql")
	fairnessIndexDropSQL   = mustReadSQL("fairness_index_drop.sql")
	fairnessIndexValidSQL  = mustReadSQL("fairness_index_valid.sql")
)

// EnableTenantFairness creates, in the engine's schema, the two tenant
// indexes a fair fetch (Acquisition.FairByTenant) reads, with CREATE INDEX
// CONCURRENTLY: inserts and fetches go on while they are built. A client
// whose driver fetches fairly calls it when it starts, so an application
// rarely needs to; a database whose clients never fetch fairly never has
// the indexes, and its inserts pay nothing for fairness. Idempotent. An
// index left invalid by an interrupted build is dropped and built again.
func (e *Engine) EnableTenantFairness(ctx context.Context) error {
	if e.dbPool == nil {
		return errNoPool
	}
	if on, err := e.TenantFairnessEnabled(ctx); err != nil || on {
		return err
	}
	// Both indexes exist and are valid, or neither does: an interrupted
	// concurrent build leaves an invalid index that IF NOT EXISTS would
	// keep, so start from nothing.
	if err := e.execStatements(ctx, fairnessIndexDropSQL); err != nil {
		return err
	}
	return e.execStatements(ctx, fairnessIndexCreateSQL)
}

// DisableTenantFairness drops the tenant indexes of EnableTenantFairness
// (concurrently). Fair fetches still work, reading River's own indexes,
// slowly; a fair client starting again creates them again.
func (e *Engine) DisableTenantFairness(ctx context.Context) error {
	if e.dbPool == nil {
		return errNoPool
	}
	return e.execStatements(ctx, fairnessIndexDropSQL)
}

// TenantFairnessEnabled says whether both tenant indexes exist and are valid
// in the engine's schema.
func (e *Engine) TenantFairnessEnabled(ctx context.Context) (bool, error) {
	if e.dbPool == nil {
		return false, errNoPool
	}
	var valid int
	if err := e.dbPool.QueryRow(ctx, fairnessIndexValidSQL, e.config.Schema).Scan(&valid); err != nil {
		return false, fmt.Errorf("workflow: tenant fairness indexes: %w", err)
	}
	return valid == 2, nil
}

// execStatements runs the blank-line-separated statements of an SQL file one
// at a time (CREATE/DROP INDEX CONCURRENTLY refuse to run in a transaction,
// which a multi-statement string is).
func (e *Engine) execStatements(ctx context.Context, tmpl string) error {
	for _, stmt := range strings.Split(e.sql(tmpl), ";\n\n") {
		if strings.TrimSpace(sqlWithoutComments(stmt)) == "" {
			continue
		}
		if _, err := e.dbPool.Exec(ctx, stmt); err != nil {
			return fmt.Errorf("workflow: tenant fairness indexes: %w", err)
		}
	}
	return nil
}

// sqlWithoutComments drops the "--" comment lines of stmt.
func sqlWithoutComments(stmt string) string {
	var b strings.Builder
	for _, line := range strings.Split(stmt, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "--") {
			b.WriteString(line)
			b.WriteByte('\n')
		}
	}
	return b.String()
}
