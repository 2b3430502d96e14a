package workflow

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/riverbpmn/riverbpmn/exclusive"
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
		if err := exclusive.CheckMechanism(ctx, e.dbPool, schema, e.config.ExclusiveMechanism); err != nil {
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
func (e *Engine) ExclusiveScopeInForce(ctx context.Context) (exclusive.Scope, error) {
	if e.dbPool == nil {
		return 0, errNoPool
	}
	scope, recorded, err := exclusive.ScopeInForce(ctx, e.dbPool, e.config.Schema)
	if err != nil {
		return 0, fmt.Errorf("workflow: %w", err)
	}
	if !recorded {
		return e.config.ExclusiveScope, nil
	}
	return scope, nil
}

// RecordedExclusiveScope returns the exclusive scope recorded in the
// engine's schema, with when and by whom it was recorded, or nil when none
// is (no client has started on the schema since migration riverbpmn/021).
func (e *Engine) RecordedExclusiveScope(ctx context.Context) (*exclusive.RecordedScope, error) {
	if e.dbPool == nil {
		return nil, errNoPool
	}
	recorded, err := exclusive.ReadScope(ctx, e.dbPool, e.config.Schema)
	if err != nil {
		return nil, fmt.Errorf("workflow: %w", err)
	}
	return recorded, nil
}

// SetExclusiveScope records scope as the exclusive scope in force in the
// engine's schema, replacing the recorded one, and returns the scope it
// replaced (nil when none was recorded). Do it only while no client works
// the schema: a running client goes on enforcing the scope it started with.
// Clients whose engine has another scope then refuse to start. It does not
// change this engine's own Config.ExclusiveScope.
func (e *Engine) SetExclusiveScope(ctx context.Context, scope exclusive.Scope) (*exclusive.Scope, error) {
	if e.dbPool == nil {
		return nil, errNoPool
	}
	previous, err := exclusive.SetScope(ctx, e.dbPool, e.config.Schema, scope, "")
	if err != nil {
		return nil, fmt.Errorf("workflow: %w", err)
	}
	return previous, nil
}

// SetExclusiveMechanism records m as the exclusive mechanism in force in the
// engine's schema (Config.ExclusiveMechanism; none recorded means
// exclusive.LockTable). A client whose engine enforces exclusivity with
// another mechanism refuses to start. Change it only while no client works
// the schema.
func (e *Engine) SetExclusiveMechanism(ctx context.Context, m exclusive.Mechanism) error {
	if e.dbPool == nil {
		return errNoPool
	}
	if err := exclusive.SetMechanism(ctx, e.dbPool, e.config.Schema, m, ""); err != nil {
		return fmt.Errorf("workflow: %w", err)
	}
	return nil
}

// ExclusiveScope returns the engine's own exclusive scope
// (Config.ExclusiveScope), which its clients enforce; see
// ExclusiveScopeInForce for the one recorded in the schema.
func (e *Engine) ExclusiveScope() exclusive.Scope { return e.config.ExclusiveScope }
