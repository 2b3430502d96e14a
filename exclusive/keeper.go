package exclusive

// The key keeper: the state an engine's clients share about the keys their
// fetches took, and the work path that gives a key back as soon as its job's
// work returns, waking the queues that have jobs of that key waiting when a
// producer needs it. The fetch step (fetch.go) takes keys; the invariant is
// in doc.go.

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/riverqueue/river/rivertype"
)

// releaseTimeout bounds one statement that gives keys back.
const releaseTimeout = 10 * time.Second

// MaxBatch bounds KeeperConfig.Batch (workflow.Config.Exclusive.Batch).
const MaxBatch = 1000

// maxReleaseBatch bounds one release statement.
const maxReleaseBatch = 1000

// FilteredWakeCooldown is the shortest time between two wake-ups of a queue
// sent because a client with acquisition filters gave a key back while its
// own fetches were full (River's default FetchCooldown): the next job of the
// key, if only another client may take it, waits at most about this long
// instead of that client's poll interval.
const FilteredWakeCooldown = 100 * time.Millisecond

var (
	releaseSQL = mustReadSQL("exclusive_release.sql")
	wakeSQL    = mustReadSQL("exclusive_wake.sql")
)

// KeeperConfig configures a Keeper.
type KeeperConfig struct {
	// Scope is the engine's scope; a Keeper of a scope that enforces
	// nothing holds nothing.
	Scope Scope
	// DB is where keys are given back and queues woken; nil (an engine
	// without a pool) gives nothing back and wakes nobody.
	DB DB
	// Batch is the engine's ExclusiveBatch: above 1, fetches take runs.
	Batch int
	// WakeCooldown is the Waker's cooldown (0: DefaultWakeCooldown).
	WakeCooldown time.Duration
	// Logger returns where to log (called at each message).
	Logger func() *slog.Logger
	// MarkerValues are further marker/value pairs RenderSQL fills in the
	// keeper's SQL (the river_job column list of the engine's row scanner).
	MarkerValues []string
}

// Keeper is an engine's exclusive-jobs state, shared by all its clients:
// the keys their fetches took, by job attempt, until given back; the runs
// of batching fetches; the keys whose work has ended, not yet written free;
// and what each producer's last fetch saw, to decide when a release wakes a
// queue.
type Keeper struct {
	config KeeperConfig

	waker *Waker // nil without a DB

	// rendered caches SQL rendered per template, schema and scope.
	rendered sync.Map // renderKey -> string

	// held maps the job attempts of the engine's clients that hold a key
	// to the key and token, until the key is given back.
	held sync.Map // JobAttempt -> Held

	// runMembers maps the job attempts of runs to their run and place,
	// until each ends; runsByToken finds a run while a fetch's rows are
	// read (run.go).
	runMembers  sync.Map // JobAttempt -> runMember
	runsByToken sync.Map // runKeyID -> *run
	// runJobs counts the jobs fetched as part of a run of more than one.
	runJobs atomic.Uint64

	// releasers holds one release batcher per schema.
	releasers sync.Map // schema -> *Batcher[Held, *string]

	// ended holds, per schema, the acquisitions whose work has ended and
	// whose key no statement has written free (ended.go).
	ended sync.Map // schema -> *endedKeys
	// carried counts the ended keys given back without a statement of
	// their own (the others were flushed by one).
	carried atomic.Uint64

	// queues holds, per wake target, the engine's producers on that queue and
	// whether each one's last fetch came back short; hungryProducers counts
	// the short ones over all queues.
	queues sync.Map // wake target -> *queueFetchState

	hungryProducers atomic.Int64

	// releaseSeq counts the keys this engine gave back, so that a fetch can
	// tell whether one was given back while it ran.
	releaseSeq atomic.Uint64

	// filtered is set once a client of the engine has acquisition filters
	// (a priority range, deployments). Its clients may not take the next
	// job of a key they give back, so a full fetch of theirs is no promise
	// that the job is found at once: a release with a waiting job that needs
	// no wake otherwise then wakes the queue through filteredWaker, for
	// whichever client may take it, at most once per FilteredWakeCooldown
	// (so a busy engine does not make every producer fetch on every release).
	filtered      atomic.Bool
	filteredWaker *Waker // nil without a DB
}

// NewKeeper returns the keeper of an engine.
func NewKeeper(config KeeperConfig) *Keeper {
	if config.Logger == nil {
		config.Logger = slog.Default
	}
	k := &Keeper{config: config}
	if config.Scope.Enabled() && config.DB != nil {
		k.waker = NewWaker(config.WakeCooldown, k.sendWake)
		k.filteredWaker = NewWaker(max(config.WakeCooldown, FilteredWakeCooldown), k.sendWake)
	}
	return k
}

// Scope returns the keeper's scope.
func (k *Keeper) Scope() Scope { return k.config.Scope }

// SetFiltered records that a client of the engine has acquisition filters.
func (k *Keeper) SetFiltered() { k.filtered.Store(true) }

// Carried counts the keys given back without a statement of their own: an
// ended key that a fetch took over, or that went stale when River wrote its
// job's outcome (ended.go).
func (k *Keeper) Carried() uint64 { return k.carried.Load() }

// RunJobs counts the jobs fetched as part of a run of more than one.
func (k *Keeper) RunJobs() uint64 { return k.runJobs.Load() }

// Held is a key a job took in a fetch: the key and the token of that
// acquisition, and where the job came from.
type Held struct {
	Key    string
	Token  int64
	Schema string
	Queue  string
	JobID  int64
}

// JobAttempt names a job attempt in the keeper's tables.
type JobAttempt struct {
	JobID   int64
	Attempt int
}

func attemptOf(job *rivertype.JobRow) JobAttempt { return JobAttempt{job.ID, job.Attempt} }

// queueFetchState is what the engine's producers of one queue last saw.
type queueFetchState struct {
	mu     sync.Mutex
	hungry map[any]bool
}

func (k *Keeper) queueState(target string) *queueFetchState {
	return loadOrNew(&k.queues, target, func() *queueFetchState { return &queueFetchState{hungry: make(map[any]bool)} })
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
func (k *Keeper) recordFetch(target string, producer any, short bool) {
	st := k.queueState(target)
	st.mu.Lock()
	was, known := st.hungry[producer]
	st.hungry[producer] = short
	st.mu.Unlock()
	switch {
	case short && (!known || !was):
		k.hungryProducers.Add(1)
	case !short && known && was:
		k.hungryProducers.Add(-1)
	}
}

// ForgetProducer drops a stopping producer of queue in schema, and writes
// free the ended keys of the schema, so that other engines need not wait
// for River's completer.
func (k *Keeper) ForgetProducer(schema, queue string, producer any) {
	st := k.queueState(WakeTarget(schema, queue))
	st.mu.Lock()
	was, known := st.hungry[producer]
	delete(st.hungry, producer)
	st.mu.Unlock()
	if known && was {
		k.hungryProducers.Add(-1)
	}
	k.FlushEnded(schema)
}

// mayNeedWake says whether giving back a key of a job from target's queue
// may call for waking producers, so that releasing it should look for
// waiting jobs: when the engine has no producer on that queue, or any of its
// producers (on any queue) came back short from its last fetch.
func (k *Keeper) mayNeedWake(target string) bool {
	if k.hungryProducers.Load() > 0 || k.filtered.Load() {
		return true
	}
	st := k.queueState(target)
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
func (k *Keeper) needsWake(target string) bool {
	st := k.queueState(target)
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
	scope        Scope
}

// SQL returns tmpl rendered for schema and the keeper's scope (RenderSQL,
// with the keeper's marker values), cached.
func (k *Keeper) SQL(tmpl, schema string) string { return k.SQLFor(tmpl, schema, k.config.Scope) }

// SQLFor returns tmpl rendered for schema and scope, cached.
func (k *Keeper) SQLFor(tmpl, schema string, scope Scope) string {
	key := renderKey{tmpl, schema, scope}
	if cached, ok := k.rendered.Load(key); ok {
		return cached.(string) //nolint:forcetypeassert // only strings are stored
	}
	rendered := RenderSQL(tmpl, schema, scope, k.config.MarkerValues...)
	k.rendered.Store(key, rendered)
	return rendered
}

// WakeTarget names a queue of a schema for the waker.
func WakeTarget(schema, queue string) string { return schema + "\x00" + queue }

// WakeQueue wakes the producers of queue in schema (empty: the connection's
// current schema) with River's own insert notification, so that they fetch
// now instead of at their next poll. It joins db's transaction, if any: the
// notification is sent when it commits.
func WakeQueue(ctx context.Context, db interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}, schema, queue string,
) error {
	_, err := db.Exec(ctx, wakeSQL, schema, queue)
	return err
}

// sendWake sends River's insert notification for a waker target.
func (k *Keeper) sendWake(target string) {
	schema, queue, _ := strings.Cut(target, "\x00")
	ctx, cancel := context.WithTimeout(context.Background(), releaseTimeout)
	defer cancel()
	if err := WakeQueue(ctx, k.config.DB, schema, queue); err != nil {
		k.config.Logger().WarnContext(ctx, "riverbpmn: waking producers after an exclusive key was released",
			slog.String("queue", queue), slog.String("err", err.Error()))
	}
}

// holdKey records that job holds key (called after a fetch).
func (k *Keeper) holdKey(schema string, job *rivertype.JobRow, key string, token int64) {
	k.held.Store(attemptOf(job), Held{Key: key, Token: token, Schema: schema, Queue: job.Queue, JobID: job.ID})
}

// TakeHeld removes and returns the key job holds, if it holds one this
// keeper knows of. Only the first call for a job attempt finds it.
func (k *Keeper) TakeHeld(job *rivertype.JobRow) (Held, bool) {
	held, ok := k.held.LoadAndDelete(attemptOf(job))
	if !ok {
		return Held{}, false
	}
	return held.(Held), true //nolint:forcetypeassert // only Helds are stored
}

// Work runs a job's work and, when the job holds an exclusive key, gives
// the key back as soon as the work returns (or panics), not when River
// records the outcome: that is what makes a key free without waiting for
// River's completer. The releases of concurrent workers share one statement
// (Batcher); this returns once the job's own release is written, so the
// fetch River makes right after (a slot just freed) finds the key's next
// job, or once it is recorded as ended, for the next fetch (Release). A
// job of a run waits for its turn first (run.go). Jobs without a key pass
// straight through.
func (k *Keeper) Work(ctx context.Context, job *rivertype.JobRow, doInner func(context.Context) error) error {
	if !k.config.Scope.Enabled() {
		return doInner(ctx)
	}
	if k.config.Batch > 1 {
		if m, ok := k.runMemberOf(job); ok {
			return k.workRunJob(ctx, job, m, doInner)
		}
	}
	defer func() {
		if held, ok := k.TakeHeld(job); ok {
			k.Release(context.WithoutCancel(ctx), held)
		}
	}()
	return doInner(ctx)
}

// JobFinished is called for every job a producer of the engine ran, once
// River reports it finished: a job whose work never reached the middleware
// (an unknown kind, an undecodable row: River skips the middleware then)
// still gives back the key it took.
func (k *Keeper) JobFinished(job *rivertype.JobRow) {
	if k.config.Batch > 1 {
		if m, ok := k.runMemberOf(job); ok {
			// A job of a run that never reached the middleware (or whose
			// middleware ended it already: no effect) ends here, so that
			// the rest of its run does not wait for it.
			if held, ok := k.endRunJob(job, m); ok {
				go k.Release(context.Background(), held)
			}
			return
		}
	}
	if held, ok := k.TakeHeld(job); ok {
		// River calls this on its producer's loop: release elsewhere.
		go k.Release(context.Background(), held)
	}
}

// releaser returns the batcher that gives keys back in schema.
func (k *Keeper) releaser(schema string) *Batcher[Held, *string] {
	return loadOrNew(&k.releasers, schema, func() *Batcher[Held, *string] {
		return NewBatcher(maxReleaseBatch, func(ctx context.Context, batch []Held) ([]*string, error) {
			return k.releaseBatch(ctx, schema, batch)
		})
	})
}

// Release gives a key back and, when a producer needs waking, wakes a queue
// where a job of the key waits. A release that fails is logged, not
// returned: the job's work succeeded or failed on its own merits, and the
// lock turns stale once River records the outcome (invariant (r2), doc.go).
//
// When every producer of the engine on the job's queue had a full last
// fetch, no statement is written at all: the acquisition is recorded as
// ended (ended.go). River fetches again as soon as the job's slot is free,
// and that fetch, like every later fetch of the engine, may take the key
// over (the key's next job) in the same statement that takes it; once River
// writes the job's outcome the lock is stale and free for every client.
func (k *Keeper) Release(ctx context.Context, held Held) {
	if k.config.DB == nil {
		return
	}
	if k.canSkipRelease(WakeTarget(held.Schema, held.Queue)) {
		k.endKey(held)
		return
	}
	ctx, cancel := context.WithTimeout(ctx, releaseTimeout)
	defer cancel()
	wakeQueue, err := k.releaser(held.Schema).Do(ctx, held)
	k.releaseSeq.Add(1)
	if err != nil {
		k.logReleaseFailed(ctx, held, err)
		return
	}
	k.afterRelease(held, wakeQueue)
}

// logReleaseFailed logs a release that failed.
func (k *Keeper) logReleaseFailed(ctx context.Context, held Held, err error) {
	k.config.Logger().WarnContext(ctx, "riverbpmn: giving back an exclusive key failed; it frees itself when River records the job's outcome",
		slog.Int64("job_id", held.JobID), slog.String("key", held.Key), slog.String("err", err.Error()))
}

// afterRelease wakes the producers of wakeQueue, the queue where a job of
// the key given back waits (nil: none, or not looked for), when they need it.
func (k *Keeper) afterRelease(held Held, wakeQueue *string) {
	if wakeQueue != nil && k.waker != nil {
		switch target := WakeTarget(held.Schema, *wakeQueue); {
		case k.needsWake(target):
			k.waker.Wake(target)
		case k.filtered.Load():
			k.filteredWaker.Wake(target)
		}
	}
}

// canSkipRelease says whether the release of a key of a job from target's
// queue may go without a statement (Release): when the engine has producers
// on that queue, and none of its producers (on any queue) came back short
// from its last fetch, so River fetches again as soon as the job's slot is
// free.
func (k *Keeper) canSkipRelease(target string) bool {
	if k.waker == nil || k.hungryProducers.Load() > 0 {
		return false
	}
	st := k.queueState(target)
	st.mu.Lock()
	defer st.mu.Unlock()
	return len(st.hungry) > 0
}

// releaseNow gives back the keys of items (all of schema) with statements of
// their own, as Release does when it writes one.
func (k *Keeper) releaseNow(schema string, items []Held) {
	if len(items) == 0 || k.config.DB == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), releaseTimeout)
	defer cancel()
	for batch := range slices.Chunk(items, maxReleaseBatch) {
		wakeQueues, err := k.releaseBatch(ctx, schema, batch)
		k.releaseSeq.Add(uint64(len(batch)))
		for i, held := range batch {
			if err != nil {
				k.logReleaseFailed(ctx, held, err)
				continue
			}
			k.afterRelease(held, wakeQueues[i])
		}
	}
}

// ReleaseSQL is the template of the statement that gives keys back
// (sql/exclusive_release.sql), for plans and tests.
func ReleaseSQL() string { return releaseSQL }

// releaseBatch runs sql/exclusive_release.sql for a batch and returns, per
// key, the queue to wake (nil when the key was not given back, nobody needs
// waking, or no job of the key waits).
func (k *Keeper) releaseBatch(ctx context.Context, schema string, batch []Held) ([]*string, error) {
	var (
		keys   = make([]string, len(batch))
		tokens = make([]int64, len(batch))
		queues = make([]string, len(batch))
		jobIDs = make([]int64, len(batch))
		looks  = make([]bool, len(batch))
	)
	for i, h := range batch {
		keys[i], tokens[i], queues[i], jobIDs[i] = h.Key, h.Token, h.Queue, h.JobID
		looks[i] = k.waker != nil && k.mayNeedWake(WakeTarget(schema, h.Queue))
	}
	rows, err := k.config.DB.Query(ctx, k.SQL(releaseSQL, schema), keys, tokens, queues, jobIDs, looks)
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
		results[i] = wake[h.JobID]
	}
	return results, nil
}
