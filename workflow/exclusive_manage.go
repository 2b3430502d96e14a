package workflow

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river/rivertype"

	"github.com/riverbpmn/riverbpmn/exclusive"
	"github.com/riverbpmn/riverbpmn/hold"
)

// MaxExclusiveLocks caps how many locks ExclusiveLocks returns.
const MaxExclusiveLocks = 10_000

var (
	exclusiveWaitSQL  = mustReadSQL("exclusive_wait.sql")
	exclusiveLocksSQL = mustReadSQL("exclusive_locks.sql")
)

// ExclusiveLock is a held exclusive key: which job attempt took it, where and
// when, and what has become of that job since.
type ExclusiveLock struct {
	// Key is the exclusive key: a process instance id, or a root process
	// instance id with exclusive.RootProcessInstance.
	Key string
	// JobID and Attempt are the job attempt that took the key.
	JobID   int64
	Attempt int
	// ClientID and Queue say which River client took it, fetching which queue.
	ClientID string
	Queue    string
	// LockedAt is when the key was taken (the database's clock).
	LockedAt time.Time
	// HolderState and HolderAttempt are the holding job's state and attempt
	// now; HolderState is empty when the job no longer exists.
	HolderState   rivertype.JobState
	HolderAttempt int
	// Stale is true when the holding job no longer runs the attempt that took
	// the key (River recorded its outcome, or rescued it): the key is free,
	// the next fetch takes it over, and the producers' keep-alive deletes it.
	// For the lock of a run (RunJobIDs), when no job of the run still runs
	// the attempt the fetch moved it to.
	Stale bool
	// RunJobIDs are the jobs of the run that took the key, in the order the
	// client runs them (JobID first), when the key was taken for a run of
	// jobs (Config.ExclusiveBatch); nil for a key taken for one job.
	RunJobIDs []int64
}

// ExclusiveWait says whether a job waits for its exclusive key, and for
// whom: what a person debugging a stuck process instance asks first.
type ExclusiveWait struct {
	// JobID, State and Queue describe the job asked about.
	JobID int64
	State rivertype.JobState
	Queue string
	// Scope is the exclusive scope in force in the schema
	// (Engine.ExclusiveScopeInForce), under which Key is computed.
	Scope exclusive.Scope
	// Key is the job's exclusive key under Scope; empty when the job has
	// none (not exclusive, no process instance, or Scope is exclusive.None),
	// and then nothing ever holds the job back.
	Key string
	// Holder is the lock on Key, nil when nobody holds it. It may be the job
	// itself, while it runs.
	Holder *ExclusiveLock
	// KeyJobsAhead counts the available jobs of the same key that come before
	// this one in River's order: on clients without acquisition options they
	// run first, one at a time (a client with options takes a key's jobs in
	// its own order, among those it may take; see Acquisition).
	KeyJobsAhead int
	// Waiting is true when the job is available but cannot start because
	// another job's running attempt holds its key.
	Waiting bool
	// Hold is why the job itself is held (package hold), nil when it is not:
	// a suspended job waits for its activation, not for its key, and
	// neither holds nor blocks the key meanwhile.
	Hold *hold.State
	// KeyJobsSuspended counts the suspended jobs of the same key in the
	// job's queue: they run, in order, once activated.
	KeyJobsSuspended int
}

// ExclusiveWait tells why the job jobID waits, as far as exclusivity goes.
// It returns an error wrapping ErrNotFound when there is no such job.
func (e *Engine) ExclusiveWait(ctx context.Context, jobID int64) (*ExclusiveWait, error) {
	if e.dbPool == nil {
		return nil, errNoPool
	}
	scope, err := e.ExclusiveScopeInForce(ctx)
	if err != nil {
		return nil, err
	}
	var (
		wait                       = &ExclusiveWait{JobID: jobID, Scope: scope}
		state                      string
		key, lockClient, lockQueue *string
		lockJobID                  *int64
		lockAttempt, holderAttempt *int16
		lockedAt                   *time.Time
		holderState                *string
		keyJobsAhead               int64
		runJobIDs                  []int64
		runLive                    *bool
	)
	err = e.dbPool.QueryRow(ctx, e.exclusive.sqlFor(exclusiveWaitSQL, e.config.Schema, scope), jobID).Scan(
		&state, &wait.Queue, &key,
		&lockJobID, &lockAttempt, &lockClient, &lockQueue, &lockedAt,
		&holderState, &holderAttempt, &runJobIDs, &runLive, &keyJobsAhead,
	)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("workflow: job %d: %w", jobID, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("workflow: reading exclusive wait of job %d: %w", jobID, err)
	}
	wait.State = rivertype.JobState(state)
	if key != nil {
		wait.Key = *key
		wait.KeyJobsAhead = int(keyJobsAhead)
	}
	if lockJobID != nil {
		wait.Holder = newExclusiveLock(wait.Key, *lockJobID, *lockAttempt, *lockClient, *lockQueue, *lockedAt, holderState, holderAttempt, runJobIDs, runLive)
		wait.Waiting = wait.State == rivertype.JobStateAvailable && !wait.Holder.Stale && wait.Holder.JobID != jobID
	}
	if err := e.addHoldToExclusiveWait(ctx, wait); err != nil {
		return nil, err
	}
	return wait, nil
}

// ExclusiveLocks returns every held exclusive key (at most
// MaxExclusiveLocks), oldest first, stale ones included.
func (e *Engine) ExclusiveLocks(ctx context.Context) ([]*ExclusiveLock, error) {
	if e.dbPool == nil {
		return nil, errNoPool
	}
	return e.queryExclusiveLocks(ctx, exclusiveLocksSQL, MaxExclusiveLocks)
}

// queryExclusiveLocks runs sql, a listing of exclusive locks
// (exclusive_locks.sql or exclusive_locks_page.sql), with args.
func (e *Engine) queryExclusiveLocks(ctx context.Context, sql string, args ...any) ([]*ExclusiveLock, error) {
	rows, err := e.dbPool.Query(ctx, renderExclusiveSQL(sql, e.config.Schema, exclusive.None), args...)
	if err != nil {
		return nil, fmt.Errorf("workflow: listing exclusive locks: %w", err)
	}
	locks, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (*ExclusiveLock, error) {
		var (
			key, client, queue string
			jobID              int64
			attempt            int16
			lockedAt           time.Time
			holderState        *string
			holderAttempt      *int16
			runJobIDs          []int64
			runLive            *bool
		)
		if err := row.Scan(&key, &jobID, &attempt, &client, &queue, &lockedAt, &holderState, &holderAttempt, &runJobIDs, &runLive); err != nil {
			return nil, err
		}
		return newExclusiveLock(key, jobID, attempt, client, queue, lockedAt, holderState, holderAttempt, runJobIDs, runLive), nil
	})
	if err != nil {
		return nil, fmt.Errorf("workflow: listing exclusive locks: %w", err)
	}
	return locks, nil
}

// DeleteStaleExclusiveLocks deletes every stale exclusive lock (see
// ExclusiveLock.Stale), and the rows kept for keys that were given back, and
// returns how many rows it deleted. Clients do this by themselves every
// ProducerReportInterval (keeping rows given back within the last minute),
// and fetches take stale locks over anyway; this is for tidying up by hand,
// say after removing every client.
func (e *Engine) DeleteStaleExclusiveLocks(ctx context.Context) (int, error) {
	if e.dbPool == nil {
		return 0, errNoPool
	}
	n, err := sweepExclusiveLocks(ctx, e.dbPool, e.config.Schema, 0)
	if err != nil {
		return 0, fmt.Errorf("workflow: deleting stale exclusive locks: %w", err)
	}
	return n, nil
}

// newExclusiveLock builds a lock from its row: runLive is whether any job of
// the run still runs its attempt (sql/lock_is_live.sql), nil for a lock of
// one job.
func newExclusiveLock(key string, jobID int64, attempt int16, client, queue string, lockedAt time.Time, holderState *string, holderAttempt *int16, runJobIDs []int64, runLive *bool) *ExclusiveLock {
	lock := &ExclusiveLock{
		Key: key, JobID: jobID, Attempt: int(attempt), ClientID: client, Queue: queue, LockedAt: lockedAt.UTC(),
	}
	if holderState != nil {
		lock.HolderState = rivertype.JobState(*holderState)
		lock.HolderAttempt = int(*holderAttempt)
	}
	lock.Stale = lock.HolderState != rivertype.JobStateRunning || lock.HolderAttempt != lock.Attempt
	if runJobIDs != nil && runLive != nil {
		lock.RunJobIDs = runJobIDs
		lock.Stale = !*runLive
	}
	return lock
}
