package exclusive

import (
	"context"
	"errors"
	"fmt"

	"github.com/riverbpmn/riverbpmn/internal/listpage"
	"github.com/riverbpmn/riverbpmn/internal/notfound"
)

// HandleConfig configures an Exclusive handle. What needs the engine (its
// liveness sessions, its on-demand indexes, the check that no client is
// alive before another scope is recorded) comes in as funcs.
type HandleConfig struct {
	// DB is the database.
	DB DB
	// Schema is the schema of the tables; empty means the search_path.
	Schema string
	// Configured is the engine's own scope (workflow.Config.Exclusive.Scope):
	// Scope returns it while none is recorded in the schema.
	Configured Scope
	// NotFound, if set, is wrapped by Wait's error for an unknown job (the
	// engine passes its ErrNotFound); nil means ErrNotFound.
	NotFound error
	// ClientsAlive, if set, returns for each client id that records
	// liveness sessions whether one of them is alive; Locks marks the keys
	// of clients known and not alive (Lock.ClientGone).
	ClientsAlive func(ctx context.Context) (map[string]bool, error)
	// SetScope records a scope in the schema, refusing (unless force) while
	// clients of the schema are alive: the engine's check, which reads the
	// liveness sessions. Required by SetScope and ForceScope.
	SetScope func(ctx context.Context, scope Scope, force bool) (*Scope, error)
	// HeadIndexes, EnableHeadIndexes and DisableHeadIndexes list, build
	// (the named ones, HeadIndex) and drop the head-of-key indexes of the
	// schema (the engine's on-demand indexes). Required by the methods of
	// the same names.
	HeadIndexes        func(ctx context.Context) ([]string, error)
	EnableHeadIndexes  func(ctx context.Context, names []string) error
	DisableHeadIndexes func(ctx context.Context) error
}

// Exclusive is the handle on the exclusive jobs of a schema
// (workflow.Engine.Exclusive): the held keys (Locks), why a job waits for
// its key (Wait), the scope in force and its record (Scope, RecordedScope,
// SetScope, ForceScope; ConfiguredScope, the engine's own), tidying stale
// lock rows (DeleteStaleLocks) and the head-of-key indexes (HeadIndexes,
// EnableHeadIndexes, EnableHeadIndexesForScope, DisableHeadIndexes).
type Exclusive struct {
	config HandleConfig
}

// ErrNotFound is wrapped by the handle's errors for an id or a name that
// names nothing: the one not-found error of every riverbpmn package
// (workflow.ErrNotFound, job.ErrNotFound, ... are this same value).
var ErrNotFound = notfound.Err

// New returns an Exclusive handle.
func New(config HandleConfig) *Exclusive {
	if config.NotFound == nil {
		config.NotFound = ErrNotFound
	}
	return &Exclusive{config: config}
}

// LocksParams are the parameters of Exclusive.Locks.
type LocksParams struct {
	// Limit is the page size: 0 means 100, at most 1,000.
	Limit int
	// After is the cursor of the page to read (LocksResult.Next); "" for the
	// first page.
	After string
}

// LocksResult is one page of held keys, by key.
type LocksResult struct {
	Items []*Lock `json:"items"`
	// Next is the cursor of the next page, "" when there is none.
	Next string `json:"next,omitempty"`
}

// Locks lists the held exclusive keys of the schema, stale ones included,
// by key, a page at a time.
func (x *Exclusive) Locks(ctx context.Context, params *LocksParams) (*LocksResult, error) {
	if params == nil {
		params = &LocksParams{}
	}
	limit, err := listpage.Limit("exclusive", params.Limit)
	if err != nil {
		return nil, err
	}
	locks, err := LocksPage(ctx, x.config.DB, x.config.Schema, params.After, listpage.Fetch(limit))
	if err != nil {
		return nil, err
	}
	items, next := listpage.Trim(locks, limit, func(l *Lock) string { return l.Key })
	if err := x.MarkClientsGone(ctx, items); err != nil {
		return nil, err
	}
	return &LocksResult{Items: items, Next: next}, nil
}

// MarkClientsGone sets ClientGone on the locks whose client records
// liveness sessions, none of them alive (HandleConfig.ClientsAlive; without
// it, nothing is marked).
func (x *Exclusive) MarkClientsGone(ctx context.Context, locks []*Lock) error {
	if len(locks) == 0 || x.config.ClientsAlive == nil {
		return nil
	}
	alive, err := x.config.ClientsAlive(ctx)
	if err != nil {
		return err
	}
	for _, l := range locks {
		isAlive, known := alive[l.ClientID]
		l.ClientGone = known && !isAlive && !l.Stale
	}
	return nil
}

// Wait tells why the job jobID waits, as far as exclusivity goes, judging
// keys by the scope in force in the schema (Scope). Its error wraps
// HandleConfig.NotFound (and ErrNoJob) when there is no such job.
func (x *Exclusive) Wait(ctx context.Context, jobID int64) (*Wait, error) {
	scope, err := x.Scope(ctx)
	if err != nil {
		return nil, err
	}
	wait, err := ReadWait(ctx, x.config.DB, x.config.Schema, scope, jobID)
	if errors.Is(err, ErrNoJob) && x.config.NotFound != nil {
		return nil, fmt.Errorf("exclusive: job %d: %w (%w)", jobID, x.config.NotFound, err)
	}
	return wait, err
}

// Scope returns the exclusive scope in force in the schema: the one
// recorded there, or, when no client has started on the schema yet, the
// engine's own (HandleConfig.Configured). Tools that say whether a job
// waits for its key use it, so that they judge keys as the schema's
// clients take them.
func (x *Exclusive) Scope(ctx context.Context) (Scope, error) {
	scope, recorded, err := ScopeInForce(ctx, x.config.DB, x.config.Schema)
	if err != nil {
		return 0, err
	}
	if !recorded {
		return x.config.Configured, nil
	}
	return scope, nil
}

// ConfiguredScope returns the engine's own exclusive scope
// (HandleConfig.Configured, workflow.Config.Exclusive.Scope), which Scope
// returns while the schema records none, and which a client refuses to
// start with when the schema records another.
func (x *Exclusive) ConfiguredScope() Scope { return x.config.Configured }

// RecordedScope returns the exclusive scope recorded in the schema, with
// when and by whom it was recorded, or nil when none is.
func (x *Exclusive) RecordedScope(ctx context.Context) (*RecordedScope, error) {
	return ReadScope(ctx, x.config.DB, x.config.Schema)
}

// SetScope records scope as the exclusive scope in force in the schema and
// returns the scope it replaced (nil when none was recorded); it refuses
// while a client of the schema is alive (the engine's error names them).
func (x *Exclusive) SetScope(ctx context.Context, scope Scope) (*Scope, error) {
	return x.setScope(ctx, scope, false)
}

// ForceScope records scope as SetScope does, even while clients of the
// schema are alive: they keep the scope they started with until they
// restart, and then refuse to start if their engine's scope differs.
func (x *Exclusive) ForceScope(ctx context.Context, scope Scope) (*Scope, error) {
	return x.setScope(ctx, scope, true)
}

func (x *Exclusive) setScope(ctx context.Context, scope Scope, force bool) (*Scope, error) {
	if x.config.SetScope == nil {
		return nil, errors.New("exclusive: this handle cannot record a scope (HandleConfig.SetScope is not set)")
	}
	return x.config.SetScope(ctx, scope, force)
}

// DeleteStaleLocks deletes every stale lock row (Lock.Stale) and the rows
// kept for keys that were given back, and returns how many it deleted.
// Clients do this by themselves every producer report interval; this is
// for tidying up by hand.
func (x *Exclusive) DeleteStaleLocks(ctx context.Context) (int, error) {
	n, err := SweepLocks(ctx, x.config.DB, x.config.Schema, 0)
	if err != nil {
		return 0, fmt.Errorf("exclusive: deleting stale exclusive locks: %w", err)
	}
	return n, nil
}

// HeadIndexes returns the head-of-key indexes present in the schema.
func (x *Exclusive) HeadIndexes(ctx context.Context) ([]string, error) {
	if x.config.HeadIndexes == nil {
		return nil, errors.New("exclusive: this handle cannot list head-of-key indexes (HandleConfig.HeadIndexes is not set)")
	}
	return x.config.HeadIndexes(ctx)
}

// DisableHeadIndexes drops the head-of-key indexes from the schema.
func (x *Exclusive) DisableHeadIndexes(ctx context.Context) error {
	if x.config.DisableHeadIndexes == nil {
		return errors.New("exclusive: this handle cannot drop head-of-key indexes (HandleConfig.DisableHeadIndexes is not set)")
	}
	return x.config.DisableHeadIndexes(ctx)
}
