package exclusive

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/riverbpmn/riverbpmn/internal/sqltemplate"
)

var (
	scopeRecordSQL    = mustReadSQL("scope_record.sql")
	scopeGetSQL       = mustReadSQL("scope_get.sql")
	scopeSetSQL       = mustReadSQL("scope_set.sql")
	schemaPredatesSQL = mustReadSQL("schema_predates_default.sql")
	errScopeNotStored = errors.New("exclusive: the scope in force was neither recorded nor found")
)

// RecordedScope is the exclusive scope in force in a schema, as recorded in
// its river_bpmn_setting table (migration riverbpmn/021), with when and by
// which River client it was recorded.
type RecordedScope struct {
	Scope      Scope
	RecordedAt time.Time
	// RecordedBy is the River client id (river.Config.ID) of the client
	// that recorded it; empty when recorded by hand (SetScope).
	RecordedBy string
}

// ErrScopeMismatch is wrapped by the error of RecordScope when the schema
// records another scope than the one given (see ScopeMismatchError).
var ErrScopeMismatch = errors.New("exclusive scope differs from the one recorded in the schema")

// ScopeMismatchError says that an engine's scope differs from the one in
// force in its schema: the two would take different keys and not exclude
// each other, so the engine's clients refuse to start.
type ScopeMismatchError struct {
	Schema     string
	Configured Scope
	Recorded   RecordedScope
}

// Error names both scopes and what to do.
func (e *ScopeMismatchError) Error() string {
	by := "by hand"
	if e.Recorded.RecordedBy != "" {
		by = "by client " + e.Recorded.RecordedBy
	}
	return fmt.Sprintf("exclusive: this engine's exclusive scope is %s (Config.ExclusiveScope), but schema %q records %s (recorded %s at %s): "+
		"every client working one schema must use one scope, or two jobs of one key could run at once; "+
		"configure %s, or stop every client of the schema and record the new scope (riverbpmn exclusive-scope --set %s, or Engine.SetExclusiveScope)",
		e.Configured, schemaName(e.Schema), e.Recorded.Scope, by, e.Recorded.RecordedAt.UTC().Format(time.RFC3339),
		e.Recorded.Scope, e.Configured.Name())
}

// Unwrap makes errors.Is(err, ErrScopeMismatch) true.
func (e *ScopeMismatchError) Unwrap() error { return ErrScopeMismatch }

func schemaName(schema string) string {
	if schema == "" {
		return "(search_path)"
	}
	return schema
}

// ScopeInForce returns the exclusive scope recorded in schema ("" means the
// connection's search_path), and whether one is recorded: none is until
// the first client of a riverbpmn engine starts on the schema (or while
// migration riverbpmn/021 is not applied). Every tool
// that says whether a job waits for its key reads it, so that all of them
// agree with the engines that work the schema.
func ScopeInForce(ctx context.Context, db DB, schema string) (Scope, bool, error) {
	recorded, err := ReadScope(ctx, db, schema)
	if err != nil || recorded == nil {
		return 0, false, err
	}
	return recorded.Scope, true, nil
}

// ReadScope returns the exclusive scope recorded in schema with when and by
// whom it was recorded, or nil when none is.
func ReadScope(ctx context.Context, db DB, schema string) (*RecordedScope, error) {
	var (
		name     string
		recorded RecordedScope
	)
	err := db.QueryRow(ctx, sqltemplate.Render(scopeGetSQL, schema)).Scan(&name, &recorded.RecordedAt, &recorded.RecordedBy)
	if errors.Is(err, pgx.ErrNoRows) || isUndefinedTable(err) {
		return nil, nil //nolint:nilnil // none recorded (or migration 021 not applied yet)
	}
	if err != nil {
		return nil, fmt.Errorf("exclusive: reading the scope in force of schema %q: %w", schemaName(schema), err)
	}
	if recorded.Scope, err = ParseScope(name); err != nil {
		return nil, fmt.Errorf("exclusive: schema %q records an exclusive scope this version does not know: %w", schemaName(schema), err)
	}
	return &recorded, nil
}

// isUndefinedTable reports whether err is PostgreSQL's "relation does not
// exist": a schema that migration riverbpmn/021 has not reached yet.
func isUndefinedTable(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "42P01"
}

// RecordOutcome is what RecordScope found.
type RecordOutcome struct {
	// NotMigrated is true when the schema has no settings table yet
	// (migration riverbpmn/021 is not applied, say during a rolling
	// upgrade): nothing was recorded or checked.
	NotMigrated bool
	// First is true when this call recorded the scope: none was recorded.
	First bool
	// Upgraded is true, with First, when the schema was in use before
	// migration riverbpmn/021 (which leaves a marker then): it was worked
	// by a version of riverbpmn that enforced exclusivity only when
	// configured to.
	Upgraded bool
}

// RecordScope records scope as the one in force in schema when none is
// recorded, and otherwise checks that the recorded one is scope: if not, it
// returns a *ScopeMismatchError (wrapping ErrScopeMismatch) naming both.
// clientID says who records it. Engines call it when each client starts.
func RecordScope(ctx context.Context, db DB, schema string, scope Scope, clientID string) (RecordOutcome, error) {
	if err := scope.Validate(); err != nil {
		return RecordOutcome{}, err
	}
	// A concurrent first record makes the insert do nothing and can leave
	// the row invisible to the read's snapshot for a moment: try again.
	for range 3 {
		var value string
		err := db.QueryRow(ctx, sqltemplate.Render(scopeRecordSQL, schema), scope.Name(), clientID).Scan(&value)
		switch {
		case err == nil:
			var upgraded bool
			if err := db.QueryRow(ctx, sqltemplate.Render(schemaPredatesSQL, schema)).Scan(&upgraded); err != nil {
				return RecordOutcome{}, fmt.Errorf("exclusive: recording the scope of schema %q: %w", schemaName(schema), err)
			}
			return RecordOutcome{First: true, Upgraded: upgraded}, nil
		case isUndefinedTable(err):
			return RecordOutcome{NotMigrated: true}, nil
		case !errors.Is(err, pgx.ErrNoRows):
			return RecordOutcome{}, fmt.Errorf("exclusive: recording the scope of schema %q: %w", schemaName(schema), err)
		}
		recorded, err := ReadScope(ctx, db, schema)
		if err != nil {
			return RecordOutcome{}, err
		}
		if recorded == nil {
			continue
		}
		if recorded.Scope != scope {
			return RecordOutcome{}, &ScopeMismatchError{Schema: schema, Configured: scope, Recorded: *recorded}
		}
		return RecordOutcome{}, nil
	}
	return RecordOutcome{}, errScopeNotStored
}

// SetScope records scope as the one in force in schema, replacing any, and
// returns the scope it replaced (nil when none was recorded). by says who
// (empty: by hand). Change the scope only while no client works the schema:
// clients that started under the old scope go on enforcing it, and take
// other keys than the clients of the new one.
func SetScope(ctx context.Context, db DB, schema string, scope Scope, by string) (*Scope, error) {
	if err := scope.Validate(); err != nil {
		return nil, err
	}
	var previous *string
	if err := db.QueryRow(ctx, sqltemplate.Render(scopeSetSQL, schema), scope.Name(), by).Scan(&previous); err != nil {
		return nil, fmt.Errorf("exclusive: recording the scope of schema %q: %w", schemaName(schema), err)
	}
	if previous == nil {
		return nil, nil //nolint:nilnil // none was recorded
	}
	prev, err := ParseScope(*previous)
	if err != nil {
		return nil, err
	}
	return &prev, nil
}
