package workflow

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/riverbpmn/riverbpmn/exclusive"
	"github.com/riverbpmn/riverbpmn/liveness"
)

// recordExclusiveScope records the engine's exclusive scope as the one in
// force in schema when none is, and otherwise refuses a scope that differs
// from the recorded one (exclusive.RecordScope). Each producer of a starting
// client calls it: a client whose engine disagrees with the schema refuses
// to start. The first record on a schema that was in use before migration
// riverbpmn/021 is logged as a warning when it enforces exclusivity: such a
// schema was worked by a version of riverbpmn that enforced exclusivity
// only when Config.ExclusiveScope was set, so an engine that sets nothing
// now enforces it where it did not before.
func (e *Engine) recordExclusiveScope(ctx context.Context, schema, clientID string) error {
	if e.dbPool == nil {
		return nil
	}
	scope := e.config.ExclusiveScope
	outcome, err := exclusive.RecordScope(ctx, e.dbPool, schema, scope, clientID)
	if err != nil {
		return fmt.Errorf("workflow: %w", err)
	}
	if scope.Enabled() {
		if err := exclusive.CheckMechanism(ctx, e.dbPool, schema); err != nil {
			return fmt.Errorf("workflow: %w", err)
		}
	}
	switch {
	case outcome.NotMigrated:
		e.logger().WarnContext(ctx, "riverbpmn: migration riverbpmn/021 is not applied: the exclusive scope in force is not recorded in the schema, so clients with different scopes are not refused and tools judge keys by their own engine's scope; apply riverbpmn's migrations",
			slog.String("schema", schema), slog.String("exclusive_scope", scope.String()), slog.String("client_id", clientID))
	case outcome.First && outcome.Upgraded && scope.Enabled():
		e.logger().WarnContext(ctx, "riverbpmn: exclusive jobs are enforced from now on: this schema was in use before riverbpmn recorded exclusive scopes, "+
			"so it was worked by an earlier riverbpmn, which enforced exclusivity only when Config.ExclusiveScope was set; "+
			"exclusive jobs of one key (process instance unless configured otherwise) now run one at a time. "+
			"To keep running them side by side, set Config.ExclusiveScope to exclusive.None on every engine and record it (riverbpmn exclusive-scope --set none)",
			slog.String("schema", schema), slog.String("exclusive_scope", scope.String()), slog.String("client_id", clientID))
	case outcome.First:
		e.logger().InfoContext(ctx, "riverbpmn: recorded the exclusive scope in force",
			slog.String("schema", schema), slog.String("exclusive_scope", scope.String()), slog.String("client_id", clientID))
	}
	return nil
}

// ExclusiveScopeInForce returns the exclusive scope in force in the engine's
// schema: the one recorded there (see Config.ExclusiveScope), or, when no
// client has started on the schema yet, the engine's own. Tools that say
// whether a job waits for its key (ExclusiveWait, the CLI, the console) use
// it, so that they judge keys as the schema's clients take them.
//
// Deprecated: use [Engine.Exclusive] and [exclusive.Exclusive.Scope].
func (e *Engine) ExclusiveScopeInForce(ctx context.Context) (exclusive.Scope, error) {
	return e.Exclusive().Scope(ctx)
}

// RecordedExclusiveScope returns the exclusive scope recorded in the
// engine's schema, with when and by whom it was recorded, or nil when none
// is (no client has started on the schema since migration riverbpmn/021).
//
// Deprecated: use [Engine.Exclusive] and [exclusive.Exclusive.RecordedScope].
func (e *Engine) RecordedExclusiveScope(ctx context.Context) (*exclusive.RecordedScope, error) {
	return e.Exclusive().RecordedScope(ctx)
}

// AdvisoryLockClassExclusiveScope is the first key of the two-key advisory
// lock that makes recording another exclusive scope one step with the check
// that no client of the schema is alive (SetExclusiveScope), against a
// client that starts meanwhile (the second key is derived from the schema's
// settings table).
const AdvisoryLockClassExclusiveScope = 1380076901

var exclusiveScopeLockSQL = mustReadSQL("exclusive_scope_lock.sql")

// SetExclusiveScope records scope as the exclusive scope in force in the
// engine's schema, replacing the recorded one, and returns the scope it
// replaced (nil when none was recorded). A running client goes on enforcing
// the scope it started with, and clients whose engine has another scope
// refuse to start, so it refuses to record another scope than the recorded
// one while a client of the schema is alive (a liveness session holds its
// lock, see ClientSessions): the error is a *ClientsAliveError naming them
// (errors.Is ErrClientsAlive). ForceExclusiveScope records it anyway.
// Clients running with Config.Liveness disabled have no session and are
// not seen. It does not change this engine's own Config.ExclusiveScope.
//
// The check and the write are one step: they run in one transaction holding
// a lock (AdvisoryLockClassExclusiveScope) that a client starting with
// liveness takes too, after its session is open, to read the recorded scope
// again. So a client that starts meanwhile is either alive when the check
// looks (refused) or reads the new scope (and refuses to start if its own
// differs).
//
// Deprecated: use [Engine.Exclusive] and [exclusive.Exclusive.SetScope].
func (e *Engine) SetExclusiveScope(ctx context.Context, scope exclusive.Scope) (*exclusive.Scope, error) {
	return e.Exclusive().SetScope(ctx, scope)
}

// ForceExclusiveScope records scope as SetExclusiveScope does, even while
// clients of the schema are alive: they keep enforcing the scope they
// started with until they restart, and then refuse to start if their
// engine's scope differs.
//
// Deprecated: use [Engine.Exclusive] and [exclusive.Exclusive.ForceScope].
func (e *Engine) ForceExclusiveScope(ctx context.Context, scope exclusive.Scope) (*exclusive.Scope, error) {
	return e.Exclusive().ForceScope(ctx, scope)
}

func (e *Engine) setExclusiveScope(ctx context.Context, scope exclusive.Scope, force bool) (*exclusive.Scope, error) {
	if e.dbPool == nil {
		return nil, errNoPool
	}
	if err := scope.Validate(); err != nil {
		return nil, fmt.Errorf("workflow: %w", err)
	}
	tx, err := e.dbPool.Begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("workflow: recording exclusive scope %s: %w", scope, err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	if _, err := tx.Exec(ctx, e.sql(exclusiveScopeLockSQL), AdvisoryLockClassExclusiveScope); err != nil {
		return nil, fmt.Errorf("workflow: recording exclusive scope %s: %w", scope, err)
	}
	if !force {
		recorded, err := exclusive.ReadScope(ctx, tx, e.config.Schema)
		if err != nil {
			return nil, fmt.Errorf("workflow: %w", err)
		}
		if recorded == nil || recorded.Scope != scope {
			// Read after the lock is held: a client that opened its
			// session before is seen, one that opens it after waits for
			// this transaction to read the scope it records.
			alive, err := e.AliveClients(ctx)
			if err != nil {
				return nil, err
			}
			if len(alive) > 0 {
				return nil, &ClientsAliveError{Scope: scope, Clients: alive}
			}
		}
	}
	previous, err := exclusive.SetScope(ctx, tx, e.config.Schema, scope, "")
	if err != nil {
		return nil, fmt.Errorf("workflow: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, fmt.Errorf("workflow: recording exclusive scope %s: %w", scope, err)
	}
	return previous, nil
}

// recheckExclusiveScope reads the exclusive scope recorded in schema again,
// under the lock SetExclusiveScope holds, once a starting client's liveness
// session is open (so that a concurrent SetExclusiveScope either saw the
// client alive or has committed the scope read here), and refuses a scope
// that differs from the engine's as recordExclusiveScope does.
func (e *Engine) recheckExclusiveScope(ctx context.Context, schema string) error {
	tx, err := e.dbPool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("workflow: checking the exclusive scope in force: %w", err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	if _, err := tx.Exec(ctx, renderSQL(exclusiveScopeLockSQL, schema), AdvisoryLockClassExclusiveScope); err != nil {
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "42P01" {
			return nil // migration riverbpmn/021 not applied: nothing is recorded (warned at the record)
		}
		return fmt.Errorf("workflow: checking the exclusive scope in force: %w", err)
	}
	recorded, err := exclusive.ReadScope(ctx, tx, schema)
	if err != nil {
		return fmt.Errorf("workflow: %w", err)
	}
	if recorded != nil && recorded.Scope != e.config.ExclusiveScope {
		return fmt.Errorf("workflow: %w", &exclusive.ScopeMismatchError{Schema: schema, Configured: e.config.ExclusiveScope, Recorded: *recorded})
	}
	return tx.Commit(ctx)
}

// AliveClients returns the liveness sessions of the schema whose client is
// alive now, oldest first.
//
// Deprecated: use [Engine.Sessions] and [session.Sessions.List] with Alive.
func (e *Engine) AliveClients(ctx context.Context) ([]*liveness.Session, error) {
	return e.listSessions(ctx, true)
}

// ErrClientsAlive is what a *ClientsAliveError is (errors.Is).
var ErrClientsAlive = errors.New("workflow: clients of the schema are alive")

// ClientsAliveError is SetExclusiveScope's refusal: the clients alive.
type ClientsAliveError struct {
	// Scope is the scope that was not recorded.
	Scope exclusive.Scope
	// Clients are the alive clients' sessions.
	Clients []*liveness.Session
}

func (e *ClientsAliveError) Error() string {
	names := make([]string, len(e.Clients))
	for i, s := range e.Clients {
		names[i] = fmt.Sprintf("%s (pid %d, since %s)", s.ClientID, s.PID, s.Started.UTC().Format(time.RFC3339))
	}
	return fmt.Sprintf("workflow: not recording exclusive scope %s: %d client(s) of the schema are alive and keep the scope they started with: %s; stop them first, or force it",
		e.Scope, len(e.Clients), strings.Join(names, ", "))
}

// Is makes errors.Is(err, ErrClientsAlive) true.
func (e *ClientsAliveError) Is(target error) bool { return target == ErrClientsAlive }

// ExclusiveScope returns the engine's own exclusive scope
// (Config.ExclusiveScope), which its clients enforce; see
// ExclusiveScopeInForce for the one recorded in the schema.
//
// Deprecated: use [Engine.Exclusive] and [exclusive.Exclusive.ConfiguredScope].
func (e *Engine) ExclusiveScope() exclusive.Scope { return e.Exclusive().ConfiguredScope() }
