package workflow

// Exclusive jobs: the work path. The key a fetch took (exclusive_fetch.go) is
// given back as soon as the job's work function returns, and the queues that
// have jobs of that key waiting are woken when a producer needs it.

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
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

	// releaseQueues holds the keys to give back, per schema.
	releaseQueues sync.Map // schema -> *exclusive.Coalescer[heldKey]

	// queues holds, per wake target, the engine's producers on that queue and
	// whether each one's last fetch came back short; hungryProducers counts
	// the short ones over all queues.
	queues          sync.Map // wake target -> *queueFetchState
	hungryProducers atomic.Int64
}

// queueFetchState is what the engine's producers of one queue last saw.
type queueFetchState struct {
	mu     sync.Mutex
	hungry map[*pilot]bool
}

func (x *engineExclusive) queueState(target string) *queueFetchState {
	if st, ok := x.queues.Load(target); ok {
		return st.(*queueFetchState) //nolint:forcetypeassert // only states are stored
	}
	st, _ := x.queues.LoadOrStore(target, &queueFetchState{hungry: make(map[*pilot]bool)})
	return st.(*queueFetchState) //nolint:forcetypeassert // only states are stored
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
	if x.hungryProducers.Load() > 0 {
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

type renderKey struct{ tmpl, schema string }

// sql returns tmpl rendered for schema and the engine's scope.
func (x *engineExclusive) sql(tmpl, schema string) string {
	key := renderKey{tmpl, schema}
	if cached, ok := x.rendered.Load(key); ok {
		return cached.(string) //nolint:forcetypeassert // only strings are stored
	}
	rendered := renderExclusiveSQL(tmpl, schema, x.scope)
	x.rendered.Store(key, rendered)
	return rendered
}

// initExclusive sets up the engine's exclusive-jobs state.
func (e *Engine) initExclusive() {
	e.exclusive = &engineExclusive{scope: e.config.ExclusiveScope}
	if e.config.ExclusiveScope.Enabled() && e.dbPool != nil {
		e.exclusive.waker = exclusive.NewWaker(e.config.ExclusiveWakeCooldown, e.sendWake)
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
		slog.Default().WarnContext(ctx, "riverbpmn: waking producers after an exclusive key was released",
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

// giveBack queues the release of the key job holds, if it holds one this
// engine knows of, and reports whether it did. Safe to call more than once:
// only the first call finds the key.
func (x *engineExclusive) giveBack(e *Engine, job *rivertype.JobRow) bool {
	held, ok := x.held.LoadAndDelete(heldKeyID{job.ID, job.Attempt})
	if !ok {
		return false
	}
	h := held.(heldKey) //nolint:forcetypeassert // only heldKeys are stored
	x.releases(e, h.schema).Add(h)
	return true
}

// workExclusive runs a job's work and, when the job holds an exclusive key,
// gives the key back as soon as the work returns (or panics), not when River
// records the outcome: that is what makes a key free without waiting for
// River's completer. The release is queued, not waited for: the releases of
// all the engine's workers are written together, one statement per
// Config.ExclusiveReleaseDelay (one millisecond by default). Giving a key
// back by the token of its acquisition is correct however late it happens
// (see exclusive_fetch.go), so the work path never waits on the database.
// Jobs without a key pass straight through.
func (e *Engine) workExclusive(ctx context.Context, job *rivertype.JobRow, doInner func(context.Context) error) error {
	if !e.config.ExclusiveScope.Enabled() {
		return doInner(ctx)
	}
	defer e.exclusive.giveBack(e, job)
	return doInner(ctx)
}

// releases returns the queue of keys to give back in schema.
func (x *engineExclusive) releases(e *Engine, schema string) *exclusive.Coalescer[heldKey] {
	if c, ok := x.releaseQueues.Load(schema); ok {
		return c.(*exclusive.Coalescer[heldKey]) //nolint:forcetypeassert // only coalescers are stored
	}
	c, _ := x.releaseQueues.LoadOrStore(schema, exclusive.NewCoalescer(e.config.ExclusiveReleaseDelay, func(batch []heldKey) {
		e.releaseNow(schema, batch)
	}))
	return c.(*exclusive.Coalescer[heldKey]) //nolint:forcetypeassert // only coalescers are stored
}

// releaseNow writes a batch of releases and wakes the queues where jobs of
// the keys wait, when a producer needs waking.
func (e *Engine) releaseNow(schema string, batch []heldKey) {
	ctx, cancel := context.WithTimeout(context.Background(), releaseTimeout)
	defer cancel()
	if e.dbPool == nil {
		return
	}
	for start := 0; start < len(batch); start += maxReleaseBatch {
		chunk := batch[start:min(start+maxReleaseBatch, len(batch))]
		looks := make([]bool, len(chunk))
		for i, h := range chunk {
			looks[i] = e.exclusive.waker != nil && e.exclusive.mayNeedWake(wakeTarget(schema, h.queue))
		}
		sql, args := e.releaseStatement(schema, chunk, looks, true)
		rows, err := e.dbPool.Query(ctx, sql, args...)
		if err != nil {
			e.logReleaseError(ctx, len(chunk), err)
			continue
		}
		wakeQueues, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (*string, error) {
			var (
				jobID     int64
				wakeQueue *string
			)
			err := row.Scan(&jobID, &wakeQueue)
			return wakeQueue, err
		})
		if err != nil {
			e.logReleaseError(ctx, len(chunk), err)
			continue
		}
		for _, queue := range wakeQueues {
			if queue == nil || e.exclusive.waker == nil {
				continue
			}
			if target := wakeTarget(schema, *queue); e.exclusive.needsWake(target) {
				e.exclusive.waker.Wake(target)
			}
		}
	}
}

// maxReleaseBatch bounds one release statement.
const maxReleaseBatch = 1000

// releaseStatement returns sql/exclusive_release.sql and its arguments.
func (e *Engine) releaseStatement(schema string, batch []heldKey, looks []bool, async bool) (string, []any) {
	var (
		keys   = make([]string, len(batch))
		tokens = make([]int64, len(batch))
		queues = make([]string, len(batch))
		jobIDs = make([]int64, len(batch))
	)
	for i, h := range batch {
		keys[i], tokens[i], queues[i], jobIDs[i] = h.key, h.token, h.queue, h.jobID
	}
	return e.exclusive.sql(exclusiveReleaseSQL, schema), []any{keys, tokens, queues, jobIDs, looks, async}
}

func (e *Engine) logReleaseError(ctx context.Context, n int, err error) {
	slog.Default().WarnContext(ctx, "riverbpmn: giving back exclusive keys failed; they free themselves when River records the jobs' outcomes",
		slog.Int("keys", n), slog.String("err", err.Error()))
}
