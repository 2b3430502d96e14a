package exclusive

// Ended keys: acquisitions whose work has ended while every producer of the
// engine was busy, given back without a statement of their own.
//
// A lock row that names a job is held only while the job runs the attempt
// that took it (sql/lock_is_live.sql); once River's completer writes the
// outcome the row is stale, and any fetch of any client takes it over. What
// a release statement adds is the time between the end of the work and
// that write: up to River's completer interval (50 ms in River v0.51.1) and
// its statement. The engine does without it while its producers are busy:
// it records the acquisition as ended, and every fetch of its clients names
// the ended tokens (@ended_tokens, sql/fetch_step.sql), which makes those
// locks free for that fetch, and lets it take them over in the statement
// that takes the key's next job. An ended key is forgotten when a fetch of
// the engine took it over (its token is gone from the row for good), or
// when River wrote the outcome of every job of the acquisition (the row is
// stale for every client: OutcomesWritten). A key neither happened to
// within EndedKeyFlush, and every ended key of a stopping producer's schema,
// is written free by a release statement, as a busy-free engine's are.
//
// So a key costs one lock-row write per acquisition instead of two, and a
// fetch none for the keys it gives back. Other engines of the schema see
// the key held until River writes the outcome, which delays, never
// overlaps, as the invariant (doc.go, (r1) and (r2)) requires.

import (
	"sync"
	"time"
)

// EndedKeyFlush bounds how long an ended key waits for a fetch of the
// engine to take it over or for River to write its jobs' outcomes (normally
// within River's completer interval) before a statement writes it free: a
// job whose outcome River wrote before its key was recorded as ended (a job
// whose work never ran), or a completer that cannot write.
const EndedKeyFlush = time.Second

// endedKey is an acquisition whose work has ended.
type endedKey struct {
	held  Held
	since time.Time
}

// endedKeys are a schema's ended keys.
type endedKeys struct {
	mu      sync.Mutex
	byToken map[int64]*endedKey
	// byJob finds an ended key by the job whose end ended its acquisition
	// (of a run: its last job to end).
	byJob map[int64]int64
	timer *time.Timer // armed while byToken is not empty
}

func (k *Keeper) endedFor(schema string) *endedKeys {
	return loadOrNew(&k.ended, schema, func() *endedKeys {
		return &endedKeys{byToken: make(map[int64]*endedKey), byJob: make(map[int64]int64)}
	})
}

// endedIn returns the schema's ended keys, if any were ever recorded
// (without creating them, as endedFor does).
func (k *Keeper) endedIn(schema string) (*endedKeys, bool) {
	v, ok := k.ended.Load(schema)
	if !ok {
		return nil, false
	}
	return v.(*endedKeys), true //nolint:forcetypeassert // only endedKeys are stored
}

// removeLocked removes the ended key of token and returns it (false when
// there is none). e.mu is held.
func (e *endedKeys) removeLocked(token int64) (*endedKey, bool) {
	ended, ok := e.byToken[token]
	if !ok {
		return nil, false
	}
	delete(e.byToken, token)
	if e.byJob[ended.held.JobID] == token {
		// A later acquisition of the job may have ended since.
		delete(e.byJob, ended.held.JobID)
	}
	return ended, true
}

// endKey records held's acquisition as ended (its work has ended), arming
// the flush.
func (k *Keeper) endKey(held Held) {
	e := k.endedFor(held.Schema)
	e.mu.Lock()
	e.byToken[held.Token] = &endedKey{held: held, since: time.Now()}
	e.byJob[held.JobID] = held.Token
	if e.timer == nil {
		e.timer = time.AfterFunc(EndedKeyFlush, func() { k.flushEnded(held.Schema, EndedKeyFlush) })
	}
	e.mu.Unlock()
	k.releaseSeq.Add(1)
	if k.filtered.Load() {
		// A client with filters may not take the next job of a key it gave
		// back: wake the key's queue for whichever client of the engine
		// may (at most once per FilteredWakeCooldown), as a release
		// statement does when a job of the key waits.
		k.filteredWaker.Wake(WakeTarget(held.Schema, held.Queue))
	}
}

// endedKeysOf returns the schema's ended keys, for a fetch to name.
func (k *Keeper) endedKeysOf(schema string) []Held {
	e, ok := k.endedIn(schema)
	if !ok {
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.byToken) == 0 {
		return nil
	}
	out := make([]Held, 0, len(e.byToken))
	for _, ended := range e.byToken {
		out = append(out, ended.held)
	}
	return out
}

// forgetTakenOver forgets the ended keys of named (the ones a fetch named)
// whose key the fetch took: the fetch replaced their tokens.
func (k *Keeper) forgetTakenOver(schema string, named []Held, taken map[string]bool) {
	if len(named) == 0 || len(taken) == 0 {
		return
	}
	e := k.endedFor(schema)
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, held := range named {
		if taken[held.Key] {
			k.forgetLocked(e, held.Token)
		}
	}
}

// OutcomesWritten is called once River has written (committed) the
// outcomes of jobs of schema: an ended key whose job's outcome is written
// is stale for every client, and is forgotten. For a run, the job is its
// last to end, whose outcome River writes last: were an earlier job's still
// unwritten, the lock would look held (live) until it is, which delays the
// key's next job and never overlaps it.
func (k *Keeper) OutcomesWritten(schema string, jobIDs []int64) {
	e, ok := k.endedIn(schema)
	if !ok {
		return
	}
	var stale []Held
	e.mu.Lock()
	for _, id := range jobIDs {
		if token, ok := e.byJob[id]; ok {
			if held, ok := k.forgetLocked(e, token); ok {
				stale = append(stale, held)
			}
		}
	}
	e.mu.Unlock()
	if k.filtered.Load() {
		// Now free for clients of other engines too.
		for _, held := range stale {
			k.filteredWaker.Wake(WakeTarget(held.Schema, held.Queue))
		}
	}
}

// forgetLocked forgets the ended key of token, counted as carried (given
// back without a statement), and returns it (false when there is none).
// e.mu is held.
func (k *Keeper) forgetLocked(e *endedKeys, token int64) (Held, bool) {
	ended, ok := e.removeLocked(token)
	if !ok {
		return Held{}, false
	}
	k.carried.Add(1)
	if len(e.byToken) == 0 && e.timer != nil {
		e.timer.Stop()
		e.timer = nil
	}
	return ended.held, true
}

// takeEnded removes and returns the schema's ended keys recorded at least
// age ago, and re-arms the flush for the rest.
func (k *Keeper) takeEnded(schema string, age time.Duration) []Held {
	e, ok := k.endedIn(schema)
	if !ok {
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.timer != nil {
		e.timer.Stop()
		e.timer = nil
	}
	var (
		out    []Held
		oldest time.Time
		now    = time.Now()
	)
	for token, ended := range e.byToken {
		if now.Sub(ended.since) < age {
			if oldest.IsZero() || ended.since.Before(oldest) {
				oldest = ended.since
			}
			continue
		}
		e.removeLocked(token)
		out = append(out, ended.held)
	}
	if !oldest.IsZero() {
		e.timer = time.AfterFunc(oldest.Add(age).Sub(now), func() { k.flushEnded(schema, age) })
	}
	return out
}

// flushEnded writes free the schema's ended keys recorded at least age ago.
func (k *Keeper) flushEnded(schema string, age time.Duration) {
	k.releaseNow(schema, k.takeEnded(schema, age))
}

// FlushEnded writes free every ended key of the schema, with statements of
// their own (sql/exclusive_release.sql).
func (k *Keeper) FlushEnded(schema string) { k.flushEnded(schema, 0) }

// HoldOffEndedFlush arms the flush of schema's ended keys for d from now,
// unless it is armed already. Tests use it to observe a key taken over by a
// fetch on a machine too slow to reach that fetch within EndedKeyFlush.
func (k *Keeper) HoldOffEndedFlush(schema string, d time.Duration) {
	e := k.endedFor(schema)
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.timer == nil {
		e.timer = time.AfterFunc(d, func() { k.flushEnded(schema, 0) })
	}
}
