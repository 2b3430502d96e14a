package workflow

// Exclusive jobs: the work path. The key a fetch took (exclusive_fetch.go) is
// given back here, as soon as the job's work function returns, and the
// queues that have jobs of that key waiting are woken.

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/riverbpmn/riverbpmn/exclusive"
)

// releaseTimeout bounds giving a key back. The job's own context may be
// cancelled or past its deadline by then, so the release runs without it.
const releaseTimeout = 10 * time.Second

var (
	exclusiveReleaseSQL      = mustReadSQL("exclusive_release.sql")
	exclusiveReleaseByJobSQL = mustReadSQL("exclusive_release_by_job.sql")
	exclusiveWakeSQL         = mustReadSQL("exclusive_wake.sql")
)

// engineExclusive is the engine's exclusive-jobs state, shared by all its
// clients.
type engineExclusive struct {
	scope exclusive.Scope
	waker *exclusive.Waker // nil without a pool

	// rendered caches SQL rendered per template and schema.
	rendered sync.Map // renderKey -> string

	// releasers holds one release batcher per schema.
	releasers sync.Map // schema -> *exclusive.Batcher[releaseRequest, *string]

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

// workExclusive runs a job's work and, when the job may hold an exclusive
// key, gives the key back as soon as the work returns (or panics), before
// River records the outcome: that is what makes a key free without waiting
// for River's completer. Jobs without a key pass straight through.
//
// A release that fails is logged, not returned: the job's work succeeded or
// failed on its own merits, and the lock turns stale once River records the
// outcome (invariant (r2) in exclusive_fetch.go).
func (e *Engine) workExclusive(ctx context.Context, job *rivertype.JobRow, doInner func(context.Context) error) error {
	if !e.config.ExclusiveScope.Enabled() || e.dbPool == nil {
		return doInner(ctx)
	}
	key, mayHold := e.exclusiveKeyOf(job)
	if !mayHold {
		return doInner(ctx)
	}
	schema := e.config.Schema
	if client, err := river.ClientFromContextSafely[pgx.Tx](ctx); err == nil {
		schema = client.Schema()
	}
	defer e.releaseExclusive(context.WithoutCancel(ctx), schema, job, key)
	return doInner(ctx)
}

// exclusiveKeyOf returns the exclusive key of job under the engine's scope,
// and whether the job may hold a key at all. A job whose job context cannot
// be decoded may still hold one (the fetch reads the key in SQL): it is
// reported with an empty key, and released by job.
func (e *Engine) exclusiveKeyOf(job *rivertype.JobRow) (key string, mayHold bool) {
	jc, err := JobContextOf(job)
	switch {
	case errors.Is(err, ErrNoJobContext):
		return "", false
	case err != nil:
		return "", true
	}
	return exclusive.Key(e.config.ExclusiveScope, jc.Exclusive != nil && *jc.Exclusive, jc.ProcessInstanceID, jc.RootProcessInstanceID)
}

// releaseRequest is one job's key to give back.
type releaseRequest struct {
	key     string
	jobID   int64
	attempt int16
	queue   string
	// look asks for the queue where a job of the key waits.
	look bool
}

// releaser returns the batcher that gives keys back in schema.
func (x *engineExclusive) releaser(e *Engine, schema string) *exclusive.Batcher[releaseRequest, *string] {
	if b, ok := x.releasers.Load(schema); ok {
		return b.(*exclusive.Batcher[releaseRequest, *string]) //nolint:forcetypeassert // only batchers are stored
	}
	b, _ := x.releasers.LoadOrStore(schema, exclusive.NewBatcher(0, func(ctx context.Context, batch []releaseRequest) ([]*string, error) {
		return e.releaseExclusiveBatch(ctx, schema, batch)
	}))
	return b.(*exclusive.Batcher[releaseRequest, *string]) //nolint:forcetypeassert // only batchers are stored
}

// releaseExclusive gives the job's key back (key "" means unknown: release
// by job) and wakes a queue where a job of the key waits. Concurrent releases
// of the engine's workers share one statement (exclusive.Batcher); this
// returns once the job's own release is done, so it is always ahead of River
// recording the job's outcome.
func (e *Engine) releaseExclusive(ctx context.Context, schema string, job *rivertype.JobRow, key string) {
	ctx, cancel := context.WithTimeout(ctx, releaseTimeout)
	defer cancel()
	attempt := int16(min(job.Attempt, math.MaxInt16)) //nolint:gosec // bounded

	if key == "" {
		if _, err := e.dbPool.Exec(ctx, e.exclusive.sql(exclusiveReleaseByJobSQL, schema), job.ID, attempt); err != nil {
			e.logReleaseError(ctx, job, err)
		}
		return
	}
	look := e.exclusive.waker != nil && e.exclusive.mayNeedWake(wakeTarget(schema, job.Queue))
	wakeQueue, err := e.exclusive.releaser(e, schema).Do(ctx, releaseRequest{key: key, jobID: job.ID, attempt: attempt, queue: job.Queue, look: look})
	if err != nil {
		e.logReleaseError(ctx, job, err)
		return
	}
	if wakeQueue != nil && e.exclusive.waker != nil {
		if target := wakeTarget(schema, *wakeQueue); e.exclusive.needsWake(target) {
			e.exclusive.waker.Wake(target)
		}
	}
}

func (e *Engine) logReleaseError(ctx context.Context, job *rivertype.JobRow, err error) {
	slog.Default().WarnContext(ctx, "riverbpmn: giving back an exclusive key failed; it frees itself when River records the job's outcome",
		slog.Int64("job_id", job.ID), slog.String("err", err.Error()))
}

// releaseExclusiveBatch runs sql/exclusive_release.sql for a batch and
// returns, per request, the queue to wake (nil when the key was not held by
// the job or no job of it waits).
func (e *Engine) releaseExclusiveBatch(ctx context.Context, schema string, batch []releaseRequest) ([]*string, error) {
	var (
		keys     = make([]string, len(batch))
		jobIDs   = make([]int64, len(batch))
		attempts = make([]int16, len(batch))
		queues   = make([]string, len(batch))
		looks    = make([]bool, len(batch))
	)
	for i, req := range batch {
		keys[i], jobIDs[i], attempts[i], queues[i], looks[i] = req.key, req.jobID, req.attempt, req.queue, req.look
	}
	rows, err := e.dbPool.Query(ctx, e.exclusive.sql(exclusiveReleaseSQL, schema), keys, jobIDs, attempts, queues, looks)
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
	for i, req := range batch {
		results[i] = wake[req.jobID]
	}
	return results, nil
}
