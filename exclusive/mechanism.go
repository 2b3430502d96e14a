package exclusive

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/riverbpmn/riverbpmn/internal/sqltemplate"
)

// retiredMechanism is how the release before this one recorded its
// experimental running-row mechanism in a schema's settings (name
// "exclusive_mechanism"): its clients held a key while a job of the key
// ran in River's table and wrote no lock rows. Migration riverbpmn/029
// forgets the record once no client of the schema runs.
const retiredMechanism = "running-row"

var mechanismGetSQL = mustReadSQL("mechanism_get.sql")

// ErrRetiredMechanism is returned (wrapped) by CheckMechanism when a schema
// records the running-row mechanism of an earlier release.
var ErrRetiredMechanism = errors.New("the schema records the retired running-row exclusive mechanism")

// CheckMechanism returns an error wrapping ErrRetiredMechanism when schema
// records the running-row mechanism of the release before this one: its
// clients hold keys without lock rows, so a client of this release (which
// holds keys by lock rows) would not exclude them, and two jobs of one key
// could run at once. Engines call it when each client starts. A schema
// that records nothing, or the lock table, or has no settings table yet,
// passes.
func CheckMechanism(ctx context.Context, db DB, schema string) error {
	var name string
	err := db.QueryRow(ctx, sqltemplate.Render(mechanismGetSQL, schema)).Scan(&name)
	if errors.Is(err, pgx.ErrNoRows) || isUndefinedTable(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("exclusive: reading the exclusive mechanism of schema %q: %w", schemaName(schema), err)
	}
	if name != retiredMechanism {
		return nil
	}
	return fmt.Errorf("%w: schema %q was worked by clients of an earlier release with Config.ExclusiveMechanism %s, which hold keys without lock rows, "+
		"so this client would not exclude them; stop every client of the schema, then run `riverbpmn migrate up` (migration 29 forgets the record), then start the clients of this release",
		ErrRetiredMechanism, schemaName(schema), name)
}
