package workflow

// Exclusive jobs: the work path. The key a fetch took (exclusive_fetch.go) is
// given back as soon as the job's work function returns, and the queues that
// have jobs of that key waiting are woken when a producer needs it.

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/riverqueue/river/rivertype"

	"github.com/riverbpmn/riverbpmn/exclusive"
)

// releaseTimeout bounds one statement that gives keys back.
const releaseTimeout = 10 * time.Second

var (
	exclusiveReleaseSQL = mustReadSQL("exclusive_release.sql")
	exclusiveWakeSQL    = mustReadSQL("exclusive_wake.sql")
)

// engineExclusive is the engine's exclusive-jobs state, shared by all its
// clients.
type engineExclusive struct {
	scope exclusive.Scope
	waker *exclusive.Waker // nil without a pool

	// rendered caches SQL rendered per template and schema.
	rendered sync.Map // renderKey -> string

	// held maps the job attempts of this engine's clients that hold a key
	// to the key and token, until the key is given back.
	held sync.Map // heldKeyID -> heldKey

	// runMembers maps the job attempts of runs (Config.ExclusiveBatch) to
	// their run and place, until each ends; runsByToken finds a run while
	// a fetch's rows are read (exclusive_run.go).
	runMembers  sync.Map // heldKeyID -> runMember
	runsByToken sync.Map // runKeyID -> *exclusiveRun
	// runJobs counts the jobs fetched as part of a run of more than one.
	runJobs atomic.Uint64

	// releasers holds one release batcher per schema.
	releasers sync.Map // schema -> *exclusive.Batcher[heldKey, *string]

	// deferred holds, per schema, the keys whose work has ended and that the
	// next fetch of one of the engine's clients gives back (deferredReleases).
	deferred sync.Map // schema -> *deferredReleases
	// carried counts the deferred releases that a fetch gave back (the
	// others were flushed by a statement of their own).
	carried atomic.Uint64

	// queues holds, per wake target, the engine's producers on that queue and
	// whether each one's last fetch came back short; hungryProducers counts
	// the short ones over all queues.
	queues          sync.Map // wake target -> *queueFetchState
	hungryProducers atomic.Int64

	// releaseSeq counts the keys this engine gave back, so that a fetch can
	// tell whether one was given back while it ran.
	releaseSeq atomic.Uint64

	// filtered is set once a driver of the engine has acquisition filters
	// (a priority range, deployments). Its clients may not take the next
	// job of a key they give back, so a full fetch of theirs is no promise
	// that the job is found at once: a release with a waiting job that needs
	// no wake otherwise then wakes the queue through filteredWaker, for
	// whichever client may take it, at most once per FilteredWakeCooldown
	// (so a busy engine does not make every producer fetch on every release).
	filtered      atomic.Bool
	filteredWaker *exclusive.Waker // nil without a pool
}

// FilteredWakeCooldown is the shortest time between two wake-ups of a queue
// sent because a client with acquisition filters gave a key back while its
// own fetches were full (River's default FetchCooldown): the next job of the
// key, if only another client may take it, waits at most about this long
// instead of that client's poll interval.
const FilteredWakeCooldown = 100 * time.Millisecond

// queueFetchState is what the engine's producers of one queue last saw.
type queueFetchState struct {
	mu     sync.Mutex
	hungry map[*pilot]bool
}

func (x *engineExclusive) queueState(target string) *queueFetchState {
	return loadOrNew(&x.queues, target, func() *queueFetchState { return &queueFetchState{hungry: make(map[*pilot]bool)} })
}

// loadOrNew returns m's value for key, storing newValue() first when there
// is none (newValue runs only then, and a racing store wins). m holds only
// values of type V under keys of type K.
func loadOrNew[K comparable, V any](m *sync.Map, key K, newValue func() V) V {
	v, ok := m.Load(key)
	if !ok {
		v, _ = m.LoadOrStore(key, newValue())
	}
	return v.(V) //nolint:forcetypeassert // the map holds only Vs
}

// recordFetch notes whether a producer's fetch came back short (fewer jobs
// than it had room for). River fetches again on its own when a job of a
// full fetch ends; after a short one it waits for a notification or its
// next poll.
func (x *engineExclusive) recordFetch(target string, p *pilot, short bool) {
	st := x.queueState(target)
	st.mu.Lock()
	was, known := st.hungry[p]
	st.hungry[p] = short
	st.mu.Unlock()
	switch {
	case short && (!known || !was):
		x.hungryProducers.Add(1)
	case !short && known && was:
		x.hungryProducers.Add(-1)
	}
}

// forgetProducer drops a stopped producer.
func (x *engineExclusive) forgetProducer(target string, p *pilot) {
	st := x.queueState(target)
	st.mu.Lock()
	was, known := st.hungry[p]
	delete(st.hungry, p)
	st.mu.Unlock()
	if known && was {
		x.hungryProducers.Add(-1)
	}
}

// mayNeedWake says whether giving back a key of a job from target's queue
// may call for waking producers, so that releasing it should look for
// waiting jobs: when the engine has no producer on that queue, or any of its
// producers (on any queue) came back short from its last fetch.
func (x *engineExclusive) mayNeedWake(target string) bool {
	if x.hungryProducers.Load() > 0 || x.filtered.Load() {
		return true
	}
	st := x.queueState(target)
	st.mu.Lock()
	defer st.mu.Unlock()
	return len(st.hungry) == 0
}

// needsWake says whether giving back a key with jobs waiting in target's
// queue calls for waking producers. Not when every producer of this engine on
// the queue had a full last fetch: the job that gave the key back frees a
// slot, and River then fetches again at once, finding the key's next job.
// When the engine has no producer on the queue, or one is waiting after a
// short fetch, the queue's producers (on any node) are woken.
func (x *engineExclusive) needsWake(target string) bool {
	st := x.queueState(target)
	st.mu.Lock()
	defer st.mu.Unlock()
	if len(st.hungry) == 0 {
		return true
	}
	for _, hungry := range st.hungry {
		if hungry {
			return true
		}
	}
	return false
}

type renderKey struct {
	tmpl, schema string
	scope        exclusive.Scope
}

// sql returns tmpl rendered for schema and the engine's scope.
func (x *engineExclusive) sql(tmpl, schema string) string { return x.sqlFor(tmpl, schema, x.scope) }

// sqlFor returns tmpl rendered for schema and scope.
func (x *engineExclusive) sqlFor(tmpl, schema string, scope exclusive.Scope) string {
	key := renderKey{tmpl, schema, scope}
	if cached, ok := x.rendered.Load(key); ok {
		return cached.(string) //nolint:forcetypeassert // only strings are stored
	}
	rendered := renderExclusiveSQL(tmpl, schema, scope)
	x.rendered.Store(key, rendered)
	return rendered
}

// initExclusive sets up the engine's exclusive-jobs state.
func (e *Engine) initExclusive() {
	e.exclusive = &engineExclusive{scope: e.config.ExclusiveScope}
	if e.config.ExclusiveScope.Enabled() && e.dbPool != nil {
		e.exclusive.waker = exclusive.NewWaker(e.config.ExclusiveWakeCooldown, e.sendWake)
		e.exclusive.filteredWaker = exclusive.NewWaker(max(e.config.ExclusiveWakeCooldown, FilteredWakeCooldown), e.sendWake)
	}
}

// wakeTarget names a queue of a schema for the waker.
func wakeTarget(schema, queue string) string { return schema + "\x00" + queue }

// sendWake sends River's insert notification for a waker target.
func (e *Engine) sendWake(target string) {
	schema, queue, _ := strings.Cut(target, "\x00")
	ctx, cancel := context.WithTimeout(context.Background(), releaseTimeout)
	defer cancel()
	if _, err := e.dbPool.Exec(ctx, exclusiveWakeSQL, schema, queue); err != nil {
		e.logger().WarnContext(ctx, "riverbpmn: waking producers after an exclusive key was released",
			slog.String("queue", queue), slog.String("err", err.Error()))
	}
}

// heldKey is a key a job took in a fetch: the key and the token of that
// acquisition, and where the job came from.
type heldKey struct {
	key    string
	token  int64
	schema string
	queue  string
	jobID  int64
}

// heldKeyID names a job attempt in the engine's table of held keys.
type heldKeyID struct {
	jobID   int64
	attempt int
}

// holdKey records that job holds key (called by the pilot after a fetch).
func (x *engineExclusive) holdKey(schema string, job *rivertype.JobRow, key string, token int64) {
	x.held.Store(heldKeyID{job.ID, job.Attempt}, heldKey{key: key, token: token, schema: schema, queue: job.Queue, jobID: job.ID})
}

// takeHeld removes and returns the key job holds, if it holds one this engine
// knows of. Only the first call for a job attempt finds it.
func (x *engineExclusive) takeHeld(job *rivertype.JobRow) (heldKey, bool) {
	held, ok := x.held.LoadAndDelete(heldKeyID{job.ID, job.Attempt})
	if !ok {
		return heldKey{}, false
	}
	return held.(heldKey), true //nolint:forcetypeassert // only heldKeys are stored
}

// workExclusive runs a job's work and, when the job holds an exclusive key,
// gives the key back as soon as the work returns (or panics), not when River
// records the outcome: that is what makes a key free without waiting for
// River's completer. The releases of concurrent workers share one statement
// (exclusive.Batcher); this returns once the job's own release is written,
// so the fetch River makes right after (a slot just freed) finds the key's
// next job, or once it is deferred to that very fetch (releaseExclusive).
// Jobs without a key pass straight through.
func (e *Engine) workExclusive(ctx context.Context, job *rivertype.JobRow, doInner func(context.Context) error) error {
	if !e.config.ExclusiveScope.Enabled() {
		return doInner(ctx)
	}
	if e.config.ExclusiveBatch > 1 {
		if m, ok := e.exclusive.runMemberOf(job); ok {
			return e.workRunJob(ctx, job, m, doInner)
		}
	}
	defer func() {
		if held, ok := e.exclusive.takeHeld(job); ok {
			e.releaseExclusive(context.WithoutCancel(ctx), held)
		}
	}()
	return doInner(ctx)
}

// releaser returns the batcher that gives keys back in schema.
func (x *engineExclusive) releaser(e *Engine, schema string) *exclusive.Batcher[heldKey, *string] {
	return loadOrNew(&x.releasers, schema, func() *exclusive.Batcher[heldKey, *string] {
		return exclusive.NewBatcher(maxReleaseBatch, func(ctx context.Context, batch []heldKey) ([]*string, error) {
			return e.releaseBatch(ctx, schema, batch)
		})
	})
}

// releaseExclusive gives a key back and, when a producer needs waking, wakes
// a queue where a job of the key waits. A release that fails is logged, not
// returned: the job's work succeeded or failed on its own merits, and the
// lock turns stale once River records the outcome (invariant (r2) in
// exclusive_fetch.go).
//
// When every producer of the engine on the job's queue had a full last
// fetch, the release is deferred to the next fetch of the engine in the
// schema instead (deferredReleases): River fetches again as soon as the
// job's slot is free, and that fetch gives the key back and may take the
// key's next job in the same statement, so the key costs no statement of its
// own.
func (e *Engine) releaseExclusive(ctx context.Context, held heldKey) {
	if e.dbPool == nil {
		return
	}
	if e.exclusive.canDefer(wakeTarget(held.schema, held.queue)) {
		e.exclusive.deferRelease(e, held)
		return
	}
	ctx, cancel := context.WithTimeout(ctx, releaseTimeout)
	defer cancel()
	wakeQueue, err := e.exclusive.releaser(e, held.schema).Do(ctx, held)
	e.exclusive.releaseSeq.Add(1)
	if err != nil {
		e.logReleaseFailed(ctx, held, err)
		return
	}
	e.afterRelease(held, wakeQueue)
}

// logReleaseFailed logs a release that failed.
func (e *Engine) logReleaseFailed(ctx context.Context, held heldKey, err error) {
	e.logger().WarnContext(ctx, "riverbpmn: giving back an exclusive key failed; it frees itself when River records the job's outcome",
		slog.Int64("job_id", held.jobID), slog.String("key", held.key), slog.String("err", err.Error()))
}

// afterRelease wakes the producers of wakeQueue, the queue where a job of
// the key given back waits (nil: none, or not looked for), when they need it.
func (e *Engine) afterRelease(held heldKey, wakeQueue *string) {
	if wakeQueue != nil && e.exclusive.waker != nil {
		switch target := wakeTarget(held.schema, *wakeQueue); {
		case e.exclusive.needsWake(target):
			e.exclusive.waker.Wake(target)
		case e.exclusive.filtered.Load():
			e.exclusive.filteredWaker.Wake(target)
		}
	}
}

// deferredReleaseFlush bounds how long a deferred release waits for a fetch
// to carry it: after this long without one (a client that stopped fetching)
// the keys are given back by a statement of their own.
const deferredReleaseFlush = 50 * time.Millisecond

// deferredReleases are keys whose jobs' work has ended, waiting to be given
// back by the next fetch of one of the engine's clients in a schema (the
// released CTE of the exclusive fetch, sql/job_get_available.sql), or by a
// flush after deferredReleaseFlush. Until then the key stays held, which
// only ever holds it longer than the work (invariant (r1) in
// exclusive_fetch.go happens at that fetch instead).
type deferredReleases struct {
	mu    sync.Mutex
	items []heldKey
	timer *time.Timer // armed while items is not empty
}

// canDefer says whether the release of a key of a job from target's queue
// may wait for the next fetch: when the engine has producers on that queue,
// and none of its producers (on any queue) came back short from its last
// fetch, so River fetches again as soon as the job's slot is free.
func (x *engineExclusive) canDefer(target string) bool {
	if x.waker == nil || x.hungryProducers.Load() > 0 {
		return false
	}
	st := x.queueState(target)
	st.mu.Lock()
	defer st.mu.Unlock()
	return len(st.hungry) > 0
}

func (x *engineExclusive) deferredFor(schema string) *deferredReleases {
	return loadOrNew(&x.deferred, schema, func() *deferredReleases { return &deferredReleases{} })
}

// deferRelease adds held to the schema's deferred releases, arming the flush.
func (x *engineExclusive) deferRelease(e *Engine, held heldKey) {
	d := x.deferredFor(held.schema)
	d.mu.Lock()
	defer d.mu.Unlock()
	d.items = append(d.items, held)
	if d.timer == nil {
		d.timer = time.AfterFunc(deferredReleaseFlush, func() { e.flushDeferred(held.schema) })
	}
}

// takeDeferred removes and returns the schema's deferred releases.
func (x *engineExclusive) takeDeferred(schema string) []heldKey {
	d, ok := x.deferred.Load(schema)
	if !ok {
		return nil
	}
	dr := d.(*deferredReleases) //nolint:forcetypeassert // only deferredReleases are stored
	dr.mu.Lock()
	defer dr.mu.Unlock()
	items := dr.items
	dr.items = nil
	if dr.timer != nil {
		dr.timer.Stop()
		dr.timer = nil
	}
	return items
}

// flushDeferred gives back the schema's deferred releases with statements
// of their own (sql/exclusive_release.sql).
func (e *Engine) flushDeferred(schema string) {
	e.releaseNow(schema, e.exclusive.takeDeferred(schema))
}

// releaseNow gives back the keys of items (all of schema) with statements of
// their own, as releaseExclusive does when it does not defer.
func (e *Engine) releaseNow(schema string, items []heldKey) {
	if len(items) == 0 || e.dbPool == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), releaseTimeout)
	defer cancel()
	for batch := range slices.Chunk(items, maxReleaseBatch) {
		wakeQueues, err := e.releaseBatch(ctx, schema, batch)
		e.exclusive.releaseSeq.Add(uint64(len(batch)))
		for i, held := range batch {
			if err != nil {
				e.logReleaseFailed(ctx, held, err)
				continue
			}
			e.afterRelease(held, wakeQueues[i])
		}
	}
}

// releaseBatch runs sql/exclusive_release.sql for a batch and returns, per
// key, the queue to wake (nil when the key was not given back, nobody needs
// waking, or no job of the key waits).
func (e *Engine) releaseBatch(ctx context.Context, schema string, batch []heldKey) ([]*string, error) {
	var (
		keys   = make([]string, len(batch))
		tokens = make([]int64, len(batch))
		queues = make([]string, len(batch))
		jobIDs = make([]int64, len(batch))
		looks  = make([]bool, len(batch))
	)
	for i, h := range batch {
		keys[i], tokens[i], queues[i], jobIDs[i] = h.key, h.token, h.queue, h.jobID
		looks[i] = e.exclusive.waker != nil && e.exclusive.mayNeedWake(wakeTarget(schema, h.queue))
	}
	rows, err := e.dbPool.Query(ctx, e.exclusive.sql(exclusiveReleaseSQL, schema), keys, tokens, queues, jobIDs, looks)
	if err != nil {
		return nil, err
	}
	wake := make(map[int64]*string, len(batch))
	for rows.Next() {
		var (
			jobID     int64
			wakeQueue *string
		)
		if err := rows.Scan(&jobID, &wakeQueue); err != nil {
			rows.Close()
			return nil, err
		}
		wake[jobID] = wakeQueue
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	results := make([]*string, len(batch))
	for i, h := range batch {
		results[i] = wake[h.jobID]
	}
	return results, nil
}

// maxReleaseBatch bounds one release statement.
const maxReleaseBatch = 1000
