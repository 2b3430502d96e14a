package workflow

// Exclusive jobs: the work path. The key a fetch took (exclusive_fetch.go) is
// given back here, as soon as the job's work function returns, and the
// queues that have jobs of that key waiting are woken.

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
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

	// releasers holds one release batcher per schema.
	releasers sync.Map // schema -> *exclusive.Batcher[releaseRequest, releaseResult]
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
	release, ok := e.exclusiveRelease(job)
	if !ok {
		return doInner(ctx)
	}
	schema := e.config.Schema
	if client, err := river.ClientFromContextSafely[pgx.Tx](ctx); err == nil {
		schema = client.Schema()
	}
	defer e.releaseExclusive(context.WithoutCancel(ctx), schema, job, release)
	return doInner(ctx)
}

// exclusiveReleaseArgs are what releasing a job's key needs to know besides
// the job: where to look for waiting jobs of the key.
type exclusiveReleaseArgs struct {
	root     *string // the job's root process instance; nil when unknown
	instance *string // its instance with the instance scope, else nil
}

// exclusiveRelease says whether job may hold an exclusive key under the
// engine's scope, and how to find the jobs waiting for it. A job whose
// job context cannot be decoded may still hold one (the fetch reads the key in
// SQL), so it is released too, without the wake-up.
func (e *Engine) exclusiveRelease(job *rivertype.JobRow) (exclusiveReleaseArgs, bool) {
	jc, err := JobContextOf(job)
	switch {
	case errors.Is(err, ErrNoJobContext):
		return exclusiveReleaseArgs{}, false
	case err != nil:
		return exclusiveReleaseArgs{}, true
	}
	_, hasKey := exclusive.Key(e.config.ExclusiveScope, jc.Exclusive != nil && *jc.Exclusive, jc.ProcessInstanceID, jc.RootProcessInstanceID)
	if !hasKey {
		return exclusiveReleaseArgs{}, false
	}
	root := jc.RootProcessInstanceID
	if root == "" {
		root = jc.ProcessInstanceID
	}
	args := exclusiveReleaseArgs{root: &root}
	if e.config.ExclusiveScope == exclusive.ProcessInstance {
		args.instance = &jc.ProcessInstanceID
	}
	return args, true
}

// releaseRequest is one job's key to give back.
type releaseRequest struct {
	jobID    int64
	attempt  int16
	root     *string
	instance *string
	queue    string
}

// releaseResult says whether a key was given back, and which queue to wake
// (nil when no job of the key waits).
type releaseResult struct {
	released  bool
	wakeQueue *string
}

// releaser returns the batcher that gives keys back in schema.
func (x *engineExclusive) releaser(e *Engine, schema string) *exclusive.Batcher[releaseRequest, releaseResult] {
	if b, ok := x.releasers.Load(schema); ok {
		return b.(*exclusive.Batcher[releaseRequest, releaseResult]) //nolint:forcetypeassert // only batchers are stored
	}
	b, _ := x.releasers.LoadOrStore(schema, exclusive.NewBatcher(0, func(ctx context.Context, batch []releaseRequest) ([]releaseResult, error) {
		return e.releaseExclusiveBatch(ctx, schema, batch)
	}))
	return b.(*exclusive.Batcher[releaseRequest, releaseResult]) //nolint:forcetypeassert // only batchers are stored
}

// releaseExclusive gives the job's key back and wakes the queue where a job
// of the key waits. Concurrent releases of the engine's workers share one
// statement (exclusive.Batcher); this returns once the job's own release is
// done, so it is always ahead of River recording the job's outcome.
func (e *Engine) releaseExclusive(ctx context.Context, schema string, job *rivertype.JobRow, args exclusiveReleaseArgs) {
	ctx, cancel := context.WithTimeout(ctx, releaseTimeout)
	defer cancel()

	res, err := e.exclusive.releaser(e, schema).Do(ctx, releaseRequest{
		jobID:    job.ID,
		attempt:  int16(min(job.Attempt, 1<<15-1)), //nolint:gosec // bounded
		root:     args.root,
		instance: args.instance,
		queue:    job.Queue,
	})
	if err != nil {
		slog.Default().WarnContext(ctx, "riverbpmn: giving back an exclusive key failed; it frees itself when River records the job's outcome",
			slog.Int64("job_id", job.ID), slog.String("err", err.Error()))
		return
	}
	if res.wakeQueue != nil && e.exclusive.waker != nil {
		e.exclusive.waker.Wake(wakeTarget(schema, *res.wakeQueue))
	}
}

// releaseExclusiveBatch runs sql/exclusive_release.sql for a batch.
func (e *Engine) releaseExclusiveBatch(ctx context.Context, schema string, batch []releaseRequest) ([]releaseResult, error) {
	var (
		jobIDs    = make([]int64, len(batch))
		attempts  = make([]int16, len(batch))
		roots     = make([]*string, len(batch))
		instances = make([]*string, len(batch))
		queues    = make([]string, len(batch))
	)
	for i, req := range batch {
		jobIDs[i], attempts[i], roots[i], instances[i], queues[i] = req.jobID, req.attempt, req.root, req.instance, req.queue
	}
	relStart := time.Now()
	defer func() {
		if debugReleaseHook != nil {
			debugReleaseHook(time.Since(relStart), len(batch))
		}
	}()
	rows, err := e.dbPool.Query(ctx, e.exclusive.sql(exclusiveReleaseSQL, schema), jobIDs, attempts, roots, instances, queues)
	if err != nil {
		return nil, err
	}
	released := make(map[int64]*string, len(batch))
	for rows.Next() {
		var (
			jobID     int64
			wakeQueue *string
		)
		if err := rows.Scan(&jobID, &wakeQueue); err != nil {
			rows.Close()
			return nil, err
		}
		released[jobID] = wakeQueue
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	results := make([]releaseResult, len(batch))
	for i, req := range batch {
		wakeQueue, ok := released[req.jobID]
		results[i] = releaseResult{released: ok, wakeQueue: wakeQueue}
	}
	return results, nil
}

var debugReleaseHook func(d time.Duration, n int)
