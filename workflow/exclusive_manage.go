package workflow

import (
	"context"
	"errors"
	"fmt"

	"github.com/riverbpmn/riverbpmn/exclusive"
	"github.com/riverbpmn/riverbpmn/liveness"
)

// MaxExclusiveLocks caps how many locks ExclusiveLocks returns.
const MaxExclusiveLocks = 10_000

// ExclusiveLock is a held exclusive key: which job attempt took it, where and
// when, and what has become of that job since (see exclusive.Lock).
type ExclusiveLock = exclusive.Lock

// ExclusiveWait says whether a job waits for its exclusive key, and for
// whom (see exclusive.Wait).
type ExclusiveWait = exclusive.Wait

// FilteredWakeCooldown is the shortest time between two wake-ups of a queue
// sent because a client with acquisition filters gave a key back while its
// own fetches were full (see exclusive.FilteredWakeCooldown).
const FilteredWakeCooldown = exclusive.FilteredWakeCooldown

// ExclusiveWait tells why the job jobID waits, as far as exclusivity goes,
// judging keys by the scope in force in the schema (ExclusiveScopeInForce).
// It returns an error wrapping ErrNotFound when there is no such job.
func (e *Engine) ExclusiveWait(ctx context.Context, jobID int64) (*ExclusiveWait, error) {
	if e.dbPool == nil {
		return nil, errNoPool
	}
	scope, err := e.ExclusiveScopeInForce(ctx)
	if err != nil {
		return nil, err
	}
	wait, err := exclusive.ReadWait(ctx, e.dbPool, e.config.Schema, scope, jobID)
	if errors.Is(err, exclusive.ErrNoJob) {
		return nil, fmt.Errorf("workflow: job %d: %w", jobID, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("workflow: %w", err)
	}
	return wait, nil
}

// ExclusiveLocks returns every held exclusive key (at most
// MaxExclusiveLocks), oldest first, stale ones included.
func (e *Engine) ExclusiveLocks(ctx context.Context) ([]*ExclusiveLock, error) {
	if e.dbPool == nil {
		return nil, errNoPool
	}
	locks, err := exclusive.Locks(ctx, e.dbPool, e.config.Schema, MaxExclusiveLocks)
	if err != nil {
		return nil, fmt.Errorf("workflow: %w", err)
	}
	return e.markClientsGone(ctx, locks)
}

// markClientsGone sets ClientGone on the locks whose client records
// liveness sessions, none of them alive.
func (e *Engine) markClientsGone(ctx context.Context, locks []*ExclusiveLock) ([]*ExclusiveLock, error) {
	if len(locks) == 0 {
		return locks, nil
	}
	sessions, err := liveness.Sessions(ctx, e.dbPool, e.config.Schema)
	if err != nil {
		return nil, fmt.Errorf("workflow: %w", err)
	}
	alive := map[string]bool{}
	for _, s := range sessions {
		alive[s.ClientID] = alive[s.ClientID] || (s.Alive && s.DeadSince == nil && s.Superseded == nil)
	}
	for _, l := range locks {
		isAlive, known := alive[l.ClientID]
		l.ClientGone = known && !isAlive && !l.Stale
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
	n, err := exclusive.SweepLocks(ctx, e.dbPool, e.config.Schema, 0)
	if err != nil {
		return 0, fmt.Errorf("workflow: deleting stale exclusive locks: %w", err)
	}
	return n, nil
}

// initExclusive sets up the engine's key keeper.
func (e *Engine) initExclusive() {
	keeper := exclusive.KeeperConfig{
		Scope:        e.config.ExclusiveScope,
		Batch:        e.config.ExclusiveBatch,
		WakeCooldown: e.config.ExclusiveWakeCooldown,
		Logger:       e.logger,
		MarkerValues: []string{jobColumnsMarker, qualifiedJobRowColumns("river_job")},
	}
	if e.dbPool != nil {
		keeper.DB = e.dbPool
	}
	e.exclusive = exclusive.NewKeeper(keeper)
}
