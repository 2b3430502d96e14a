package exclusive

import (
	"context"
	"strconv"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river/rivertype"
)

var fetchRunningSQL = mustReadSQL("fetch_running.sql")

// restorePlanCacheModeSQL gives plan_cache_mode back the value statement 1
// of a running-row fetch kept before it set it for statement 2.
const restorePlanCacheModeSQL = "SELECT set_config('plan_cache_mode', current_setting('riverbpmn.plan_cache_mode'), true)"

// FetchRunningSQL is the running-row fetch (RunningRow): the text/template
// definitions "running_candidates" and "running_take", its two statements,
// which the engine renders over its fetch template, as FetchStepSQL.
func FetchRunningSQL() string { return fetchRunningSQL }

// BatchSender sends a pgx batch: a pool, a connection or a transaction.
type BatchSender interface {
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
}

// RunningFetchParams is one running-row fetch of a client's producer.
type RunningFetchParams struct {
	// Sender runs the fetch: a pool (the fetch's two statements then run in
	// one implicit transaction, one round trip) or the caller's transaction.
	Sender BatchSender
	// InTx says Sender is the caller's transaction: the fetch then restores
	// the plan_cache_mode statement 1 set for statement 2 (a third
	// statement in the batch), which would otherwise last until the
	// caller's transaction ends.
	InTx bool
	// Schema, Queue and MaxToLock are River's fetch parameters; Producer
	// names the producer (any comparable value, the same at every fetch).
	Schema    string
	Queue     string
	MaxToLock int
	Producer  any
	// CandidatesSQL and CandidatesArgs are statement 1 (running_candidates),
	// TakeSQL and TakeArgs statement 2 (running_take).
	CandidatesSQL  string
	CandidatesArgs []any
	TakeSQL        string
	TakeArgs       []any
	// Scan reads the rows statement 2 returns (the jobs moved to running),
	// closes them and returns the jobs.
	Scan func(rows pgx.Rows) ([]*rivertype.JobRow, error)
}

// FetchRunning runs one running-row fetch: statement 1 locks the candidate
// keys, statement 2, with a snapshot of its own, moves their heads to
// running (doc.go, "The key held by River's own row"). The two statements
// are one pgx batch: pgx sends them in one pipeline with a single Sync, so
// PostgreSQL runs them in one implicit transaction (the advisory locks are
// held until it commits) with a snapshot each (READ COMMITTED), in one
// round trip. In a caller's transaction they run in it, and its commit
// releases the locks.
func (k *Keeper) FetchRunning(ctx context.Context, p RunningFetchParams) (short bool, err error) {
	batch := &pgx.Batch{}
	batch.Queue(p.CandidatesSQL, p.CandidatesArgs...)
	batch.Queue(p.TakeSQL, p.TakeArgs...)
	if p.InTx {
		batch.Queue(restorePlanCacheModeSQL)
	}
	results := p.Sender.SendBatch(ctx, batch)
	defer func() {
		if closeErr := results.Close(); err == nil {
			err = closeErr
		}
	}()
	if _, err := results.Exec(); err != nil {
		return false, err
	}
	rows, err := results.Query()
	if err != nil {
		return false, err
	}
	jobs, err := p.Scan(rows)
	if err != nil {
		return false, err
	}
	if p.InTx {
		if _, err := results.Exec(); err != nil {
			return false, err
		}
	}
	for _, job := range jobs {
		k.running.Store(attemptOf(job), p.Schema)
	}
	short = len(jobs) < p.MaxToLock
	k.recordFetch(WakeTarget(p.Schema, p.Queue), p.Producer, short)
	return short, nil
}

// endRunning records that the work of a job fetched by a running-row fetch
// has ended (or will never run), while River's completer has not yet
// written its outcome: the job still runs in the database, but its key may
// be taken by this engine's fetches (EndedRunning), and the queue is woken
// if one of the engine's producers waits after a short fetch.
func (k *Keeper) endRunning(job *rivertype.JobRow) {
	v, ok := k.running.LoadAndDelete(attemptOf(job))
	if !ok {
		return
	}
	schema, _ := v.(string)
	e := loadOrNew(&k.endedRunning, schema, func() *endedRunning { return &endedRunning{jobs: make(map[JobAttempt]string)} })
	e.mu.Lock()
	e.jobs[attemptOf(job)] = runName(job)
	e.mu.Unlock()
	if target := WakeTarget(schema, job.Queue); k.waker != nil && k.needsWake(target) {
		k.waker.Wake(target)
	}
}

// endedRunning is the running-row jobs of one schema whose work has ended
// and whose outcome River has not written yet.
type endedRunning struct {
	mu   sync.Mutex
	jobs map[JobAttempt]string // -> runName
}

// runName names one run of a job, as the fetch compares it
// (sql/fetch_running.sql): "id:attempt:attempted_at in Unix microseconds".
// The attempted_at a fetch stamps tells two runs of one attempt apart (a
// snooze gives its attempt number back), so a name never matches a later
// run of the job, however late River's completer reports the earlier one.
func runName(job *rivertype.JobRow) string {
	var micros int64
	if job.AttemptedAt != nil {
		micros = job.AttemptedAt.UnixMicro()
	}
	return strconv.FormatInt(job.ID, 10) + ":" + strconv.Itoa(job.Attempt) + ":" + strconv.FormatInt(micros, 10)
}

// EndedRunning returns, as run names (runName), the jobs of schema whose work on this
// engine has ended while River has not written their outcome yet: a fetch
// of this engine does not count them as holding their keys. Another engine
// does not know them and waits for the outcome: a delay, never an overlap.
func (k *Keeper) EndedRunning(schema string) []string {
	v, ok := k.endedRunning.Load(schema)
	if !ok {
		return []string{}
	}
	e, _ := v.(*endedRunning)
	e.mu.Lock()
	defer e.mu.Unlock()
	ended := make([]string, 0, len(e.jobs))
	for _, name := range e.jobs {
		ended = append(ended, name)
	}
	return ended
}

// OutcomesWrittenRunning is called, with the running-row mechanism, once
// River's completer has committed outcomes of jobs in schema: their keys
// (if any) are free now. A producer whose last fetch came back short waits
// for a poll or a notification, so the queues of schema with such a
// producer are woken (at most once per the waker's cooldown each), and the
// next job of a key starts without a poll wait.
func (k *Keeper) OutcomesWrittenRunning(schema string, jobIDs []int64) {
	if v, ok := k.endedRunning.Load(schema); ok {
		e, _ := v.(*endedRunning)
		written := make(map[int64]bool, len(jobIDs))
		for _, id := range jobIDs {
			written[id] = true
		}
		e.mu.Lock()
		for attempt := range e.jobs {
			if written[attempt.JobID] {
				delete(e.jobs, attempt)
			}
		}
		e.mu.Unlock()
	}
	if k.waker == nil {
		return
	}
	prefix := WakeTarget(schema, "")
	k.queues.Range(func(key, _ any) bool {
		target, _ := key.(string)
		if len(target) >= len(prefix) && target[:len(prefix)] == prefix && k.needsWake(target) {
			k.waker.Wake(target)
		}
		return true
	})
}
