package exclusive

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/riverbpmn/riverbpmn/internal/sqltemplate"
)

// Mechanism is how exclusivity is enforced: which record says that a key is
// held. Both enforce the same invariant (doc.go); they differ in what a
// fetch reads and writes.
type Mechanism int

const (
	// LockTable holds a key in a row of river_bpmn_exclusive_lock, written
	// by the fetch that takes the key and given back by the work middleware
	// (doc.go, "Invariant"). The zero value.
	LockTable Mechanism = iota
	// RunningRow holds a key exactly while a job of the key is running in
	// River's own table: no lock row is written or given back. A fetch runs
	// two statements in one transaction, the first taking a transaction
	// advisory lock per candidate key, the second taking each locked key's
	// head with a fresh snapshot only if no job of the key runs (doc.go,
	// "The key held by River's own row"). Needs the running-key index of the
	// scope in force, which a client's start creates.
	RunningRow
)

// String names the mechanism as configurations and reports spell it.
func (m Mechanism) String() string {
	switch m {
	case LockTable:
		return "lock-table"
	case RunningRow:
		return "running-row"
	default:
		return fmt.Sprintf("Mechanism(%d)", int(m))
	}
}

// Valid reports whether m is one of the mechanisms above.
func (m Mechanism) Valid() bool { return m == LockTable || m == RunningRow }

var (
	mechanismGetSQL = mustReadSQL("mechanism_get.sql")
	mechanismSetSQL = mustReadSQL("mechanism_set.sql")
)

// ParseMechanism reads a mechanism as String spells it.
func ParseMechanism(name string) (Mechanism, error) {
	for _, m := range []Mechanism{LockTable, RunningRow} {
		if m.String() == name {
			return m, nil
		}
	}
	return 0, fmt.Errorf("exclusive: unknown exclusive mechanism %q (known: %s, %s)", name, LockTable, RunningRow)
}

// ErrMechanismMismatch is returned (wrapped) by CheckMechanism when a
// client's mechanism is not the one recorded in its schema.
var ErrMechanismMismatch = errors.New("exclusive mechanism differs from the one recorded in the schema")

// ReadMechanism returns the exclusive mechanism recorded in schema: LockTable
// when none is recorded (every client before the record existed used it),
// or when the schema has no settings table yet.
func ReadMechanism(ctx context.Context, db DB, schema string) (Mechanism, error) {
	var name string
	err := db.QueryRow(ctx, sqltemplate.Render(mechanismGetSQL, schema)).Scan(&name)
	if errors.Is(err, pgx.ErrNoRows) || isUndefinedTable(err) {
		return LockTable, nil
	}
	if err != nil {
		return 0, fmt.Errorf("exclusive: reading the exclusive mechanism of schema %q: %w", schemaName(schema), err)
	}
	return ParseMechanism(name)
}

// CheckMechanism returns an error wrapping ErrMechanismMismatch, naming
// both, when schema records another mechanism than m: clients of two
// mechanisms do not exclude each other (one reads lock rows, the other
// running jobs), so a client refuses to start on a schema whose recorded
// mechanism is not its own. Engines call it when each client starts.
func CheckMechanism(ctx context.Context, db DB, schema string, m Mechanism) error {
	recorded, err := ReadMechanism(ctx, db, schema)
	if err != nil {
		return err
	}
	if recorded != m {
		return fmt.Errorf("%w: this engine's Config.ExclusiveMechanism is %s, but schema %q records %s: every client of one schema must use one mechanism, "+
			"or two jobs of one key could run at once; stop every client of the schema, then record the new mechanism (Engine.SetExclusiveMechanism)",
			ErrMechanismMismatch, m, schemaName(schema), recorded)
	}
	return nil
}

// SetMechanism records m as the exclusive mechanism in force in schema. by
// says who (empty: by hand). Change it only while no client works the
// schema: a client checks the record when it starts, and clients of
// riverbpmn versions before the record do not read it at all.
func SetMechanism(ctx context.Context, db DB, schema string, m Mechanism, by string) error {
	if !m.Valid() {
		return fmt.Errorf("exclusive: unknown exclusive mechanism %d", int(m))
	}
	if _, err := db.Exec(ctx, sqltemplate.Render(mechanismSetSQL, schema), m.String(), by); err != nil {
		return fmt.Errorf("exclusive: recording the exclusive mechanism of schema %q: %w", schemaName(schema), err)
	}
	return nil
}
