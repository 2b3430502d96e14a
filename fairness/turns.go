package fairness

import "sync"

// Turns carries, per schema and queue, where a fair client is in its
// rounds, from one fetch to the next, so that a round cut short by a small
// fetch goes on in the next fetch instead of starting again: deficit round
// robin over the tenants, whatever the fetch size. The zero value is ready:
// every queue starts at round 0 with no tenant served. It is safe for
// concurrent use.
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
// The state is the client's, in memory, and costs no statement: a fetch
// passes it as three parameters (Arg) and the client updates it from the
// jobs the fetch returned (Advance). Several fair clients on one queue each
// keep their own turns; each one's fetches are in the weights' ratio to
// within one round, so their sum is too. A client that restarts starts a
// new round: tenants served in the round in progress may be served again,
// at most w jobs each (one round, the granularity of the weights
// themselves), once per restart; from then on the rounds are exact again.
// Keeping the state in a table instead would add a write to every fair
// fetch, and a row every concurrent fair fetch of the queue would wait on,
// to save at most one round per restart.
type Turns struct {
	mu    sync.Mutex
	turns map[string]turn // schema + "\x00" + queue
}

// turn is where a fair client is in its rounds on one queue.
type turn struct {
	round  int64  // the round in progress
	tenant string // the last tenant served in it
	used   int64  // how many of its slots of that round it took
}

// start is the slot a tenant of weight w starts at in the next fetch: the
// first of round t.round, after those it took in that round already.
func (t *turn) start(tenant string, w int64) int64 {
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

// Arg returns the value of the fetch parameter name (one of Params:
// fair_round, fair_tenant, fair_used) for the next fetch of queue in
// schema: round 0, no tenant (NULL) and 0 before the first fetch. It panics
// on another name.
func (f *Turns) Arg(name, schema, queue string) any {
	f.mu.Lock()
	t, ok := f.turns[schema+"\x00"+queue]
	f.mu.Unlock()
	switch name {
	case "fair_round":
		return t.round
	case "fair_tenant":
		if !ok {
			return nil
		}
		return t.tenant
	case "fair_used":
		return t.used
	}
	panic("fairness: not a fairness parameter: " + name)
}

// Advance records the turns a fetch of queue in schema took: tenants holds
// the tenant of each job the fetch returned ("" for none), in any order;
// weights are the client's (Weight). A tenant that took n jobs from slot s
// (its start) last served in round (s+n-1) / w; the fetch took its jobs by
// round, then turn, so the round in progress is the highest of these, and
// its last tenant the last, in turn order, of the tenants that served in
// it. A fetch that took nothing changes nothing.
func (f *Turns) Advance(schema, queue string, tenants []string, weights map[string]int) {
	if len(tenants) == 0 {
		return
	}
	counts := map[string]int64{}
	for _, tenant := range tenants {
		counts[tenant]++
	}
	key := schema + "\x00" + queue
	f.mu.Lock()
	defer f.mu.Unlock()
	var prev *turn
	if t, ok := f.turns[key]; ok {
		prev = &t
	}
	var next *turn
	for tenant, n := range counts {
		w := int64(Weight(weights, tenant))
		last := prev.start(tenant, w) + n - 1
		round := last / w
		if next == nil || round > next.round || (round == next.round && tenant > next.tenant) {
			next = &turn{round: round, tenant: tenant, used: last - round*w + 1}
		}
	}
	if f.turns == nil {
		f.turns = map[string]turn{}
	}
	f.turns[key] = *next
}
