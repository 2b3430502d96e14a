package exclusive

import (
	"context"

	"github.com/jackc/pgx/v5"
)

var fetchRunningSQL = mustReadSQL("fetch_running.sql")

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
	// and closes them.
	Scan func(rows pgx.Rows) error
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
	counted := &countingRows{Rows: rows}
	if err := p.Scan(counted); err != nil {
		return false, err
	}
	short = counted.n < p.MaxToLock
	k.recordFetch(WakeTarget(p.Schema, p.Queue), p.Producer, short)
	return short, nil
}

// countingRows counts the rows read through it.
type countingRows struct {
	pgx.Rows
	n int
}

func (r *countingRows) Next() bool {
	if r.Rows.Next() {
		r.n++
		return true
	}
	return false
}

// OutcomesWrittenRunning is called, with the running-row mechanism, once
// River's completer has committed outcomes of jobs in schema: their keys
// (if any) are free now. A producer whose last fetch came back short waits
// for a poll or a notification, so the queues of schema with such a
// producer are woken (at most once per the waker's cooldown each), and the
// next job of a key starts without a poll wait.
func (k *Keeper) OutcomesWrittenRunning(schema string) {
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
