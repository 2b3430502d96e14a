package exclusive

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river/rivertype"

	"github.com/riverbpmn/riverbpmn/hold"
)

// The management listings of exclusive keys: which keys are held, by which
// job attempt, and whether a job waits for its key. The engine's management
// API (workflow.Engine.ExclusiveLocks, ExclusiveWait) calls them.

var (
	waitSQL      = mustReadSQL("exclusive_wait.sql")
	waitHeldSQL  = mustReadSQL("exclusive_wait_held.sql")
	locksSQL     = mustReadSQL("exclusive_locks.sql")
	locksPageSQL = mustReadSQL("exclusive_locks_page.sql")
)

// WaitSQL is the template of the statement behind ReadWait, for plans and
// tests.
func WaitSQL() string { return waitSQL }

// ErrNoJob is wrapped by ReadWait's error when there is no such job.
var ErrNoJob = errors.New("exclusive: no such job")

// Lock is a held exclusive key: which job attempt took it, where and when,
// and what has become of that job since.
type Lock struct {
	// Key is the exclusive key: a process instance id, or a root process
	// instance id with RootProcessInstance.
	Key string `json:"key"`
	// JobID and Attempt are the job attempt that took the key.
	JobID   int64 `json:"job_id"`
	Attempt int   `json:"attempt"`
	// ClientID and Queue say which River client took it, fetching which queue.
	ClientID string `json:"client_id"`
	Queue    string `json:"queue"`
	// LockedAt is when the key was taken (the database's clock).
	LockedAt time.Time `json:"locked_at"`
	// HolderState and HolderAttempt are the holding job's state and attempt
	// now; HolderState is empty when the job no longer exists.
	HolderState   rivertype.JobState `json:"holder_state,omitempty"`
	HolderAttempt int                `json:"holder_attempt"`
	// Stale is true when the holding job no longer runs the attempt that took
	// the key (River recorded its outcome, or rescued it): the key is free,
	// the next fetch takes it over, and the producers' keep-alive deletes it.
	// For the lock of a run (RunJobIDs), when no job of the run still runs
	// the attempt the fetch moved it to.
	Stale bool `json:"stale,omitempty"`
	// RunJobIDs are the jobs of the run that took the key, in the order the
	// client runs them (JobID first), when the key was taken for a run of
	// jobs (workflow.Config.Exclusive.Batch); nil for a key taken for one job.
	RunJobIDs []int64 `json:"run_job_ids,omitempty"`
	// ClientGone is true when the client that took the key records liveness
	// sessions and none of them is alive: the holding job still reads
	// running, and the liveness takeover gives it back, with the key, within
	// seconds. Set by workflow's listings, which read the sessions.
	ClientGone bool `json:"client_gone,omitempty"`
}

// Wait says whether a job waits for its exclusive key, and for whom: what a
// person debugging a stuck process instance asks first.
type Wait struct {
	// JobID, State and Queue describe the job asked about.
	JobID int64
	State rivertype.JobState
	Queue string
	// Scope is the exclusive scope in force in the schema (ScopeInForce),
	// under which Key is computed.
	Scope Scope
	// Key is the job's exclusive key under Scope; empty when the job has
	// none (not exclusive, no process instance, or Scope is None), and then
	// nothing ever holds the job back.
	Key string
	// Holder is the lock on Key, nil when nobody holds it. It may be the job
	// itself, while it runs.
	Holder *Lock
	// KeyJobsAhead counts the available jobs of the same key that come before
	// this one in River's order: on clients without acquisition options they
	// run first, one at a time (a client with options takes a key's jobs in
	// its own order, among those it may take; see workflow.Acquisition).
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

// ReadWait tells why the job jobID of schema waits, as far as exclusivity
// goes, with keys judged under scope (pass the scope in force). Its error
// wraps ErrNoJob when there is no such job.
func ReadWait(ctx context.Context, db DB, schema string, scope Scope, jobID int64) (*Wait, error) {
	var (
		wait                       = &Wait{JobID: jobID, Scope: scope}
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
	err := db.QueryRow(ctx, RenderSQL(waitSQL, schema, scope), jobID).Scan(
		&state, &wait.Queue, &key,
		&lockJobID, &lockAttempt, &lockClient, &lockQueue, &lockedAt,
		&holderState, &holderAttempt, &runJobIDs, &runLive, &keyJobsAhead,
	)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("exclusive: job %d: %w", jobID, ErrNoJob)
	}
	if err != nil {
		return nil, fmt.Errorf("exclusive: reading exclusive wait of job %d: %w", jobID, err)
	}
	wait.State = rivertype.JobState(state)
	if key != nil {
		wait.Key = *key
		wait.KeyJobsAhead = int(keyJobsAhead)
	}
	if lockJobID != nil {
		wait.Holder = newLock(wait.Key, *lockJobID, *lockAttempt, *lockClient, *lockQueue, *lockedAt, holderState, holderAttempt, runJobIDs, runLive)
		wait.Waiting = wait.State == rivertype.JobStateAvailable && !wait.Holder.Stale && wait.Holder.JobID != jobID
	}
	if err := addHold(ctx, db, schema, scope, wait); err != nil {
		return nil, err
	}
	return wait, nil
}

// addHold fills the hold fields of a Wait.
func addHold(ctx context.Context, db DB, schema string, scope Scope, wait *Wait) error {
	var (
		raw       []byte
		suspended int64
	)
	err := db.QueryRow(ctx, RenderSQL(waitHeldSQL, schema, scope), wait.JobID).Scan(&raw, &suspended)
	if err != nil {
		return fmt.Errorf("exclusive: reading the hold of job %d: %w", wait.JobID, err)
	}
	if raw != nil {
		var state hold.State
		if err := json.Unmarshal(raw, &state); err == nil {
			wait.Hold = &state
		}
	}
	if wait.Key != "" {
		wait.KeyJobsSuspended = int(suspended)
	}
	return nil
}

// Locks returns every held exclusive key of schema (at most limit), oldest
// first, stale ones included.
func Locks(ctx context.Context, db DB, schema string, limit int) ([]*Lock, error) {
	return queryLocks(ctx, db, RenderSQL(locksSQL, schema, None), limit)
}

// LocksPage returns the held exclusive keys of schema (stale ones included)
// that sort after afterKey ("" for the first page), by key, at most limit.
func LocksPage(ctx context.Context, db DB, schema, afterKey string, limit int) ([]*Lock, error) {
	return queryLocks(ctx, db, RenderSQL(locksPageSQL, schema, None), afterKey, limit)
}

// queryLocks runs sql, a listing of exclusive locks, with args.
func queryLocks(ctx context.Context, db DB, sql string, args ...any) ([]*Lock, error) {
	rows, err := db.Query(ctx, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("exclusive: listing exclusive locks: %w", err)
	}
	locks, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (*Lock, error) {
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
		return newLock(key, jobID, attempt, client, queue, lockedAt, holderState, holderAttempt, runJobIDs, runLive), nil
	})
	if err != nil {
		return nil, fmt.Errorf("exclusive: listing exclusive locks: %w", err)
	}
	return locks, nil
}

// newLock builds a lock from its row: runLive is whether any job of the run
// still runs its attempt (sql/lock_is_live.sql), nil for a lock of one job.
func newLock(key string, jobID int64, attempt int16, client, queue string, lockedAt time.Time, holderState *string, holderAttempt *int16, runJobIDs []int64, runLive *bool) *Lock {
	lock := &Lock{
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

// String describes the lock in one line, as printed with %v and %+v (also
// inside a Wait or a slice of locks), for logs and the CLI.
func (l Lock) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "key %q held by job %d attempt %d (client %s, queue %s, since %s)",
		l.Key, l.JobID, l.Attempt, l.ClientID, l.Queue, l.LockedAt.UTC().Format(time.RFC3339Nano))
	switch {
	case l.HolderState == "":
		b.WriteString(", stale: the job no longer exists")
	case l.Stale:
		fmt.Fprintf(&b, ", stale: the job is now %s at attempt %d", l.HolderState, l.HolderAttempt)
	case l.ClientGone:
		b.WriteString(", client gone: liveness gives the job and the key back within seconds")
	}
	return b.String()
}

// String describes the wait in one line, as printed with %v and %+v.
func (w Wait) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "job %d (%s, queue %s)", w.JobID, w.State, w.Queue)
	switch {
	case w.Key == "" && !w.Scope.Enabled():
		b.WriteString(": exclusivity is not enforced on this schema (exclusive scope none), never held back")
		return b.String()
	case w.Key == "":
		b.WriteString(": no exclusive key (not exclusive, or of no process instance), never held back")
		return b.String()
	}
	fmt.Fprintf(&b, ": key %q", w.Key)
	switch {
	case w.Waiting:
		fmt.Fprintf(&b, ", waiting for %s", w.Holder)
	case w.Holder != nil && w.Holder.JobID == w.JobID && !w.Holder.Stale:
		b.WriteString(", held by this job")
	case w.Holder != nil:
		fmt.Fprintf(&b, ", not waiting (%s)", w.Holder)
	default:
		b.WriteString(", free")
	}
	if w.KeyJobsAhead > 0 {
		fmt.Fprintf(&b, "; %d job(s) of the key ahead", w.KeyJobsAhead)
	}
	return b.String()
}
