package events

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/riverbpmn/riverbpmn/internal/sqltemplate"
)

// ErrPruned is what a *GapError matches with errors.Is: events after a
// reader's cursor were deleted by Prune before the reader got them.
var ErrPruned = errors.New("events after the cursor were pruned before they were read")

// GapError says that events after After, up to and including Through, were
// pruned (retention, Prune) before they were read: the reader was away, or
// behind, for longer than the outbox keeps events. Not every cursor between
// the two was an event, but Through was one, so at least one event is lost.
type GapError struct {
	// After is the reader's cursor.
	After Cursor
	// Through is the last event Prune deleted; reading on from it skips
	// the gap.
	Through Cursor
	// PrunedAt is when that event was deleted.
	PrunedAt time.Time
}

// Error names both cursors and when the events were pruned.
func (e *GapError) Error() string {
	return fmt.Sprintf("events: events after cursor %s were pruned before they were read (pruned through %s at %s)",
		e.After, e.Through, e.PrunedAt.UTC().Format(time.RFC3339))
}

// Is makes errors.Is(err, ErrPruned) true for a *GapError.
func (e *GapError) Is(target error) bool { return target == ErrPruned }

// Pruned returns the cursor of the last event Prune deleted and when; ok is
// false when nothing was pruned yet.
func Pruned(ctx context.Context, db DB, schema string) (through Cursor, at time.Time, ok bool, err error) {
	var txid string
	err = db.QueryRow(ctx, sqltemplate.Render(prunedSQL, schema)).Scan(&txid, &through.ID, &at)
	if errors.Is(err, pgx.ErrNoRows) {
		return Cursor{}, time.Time{}, false, nil
	}
	if err != nil {
		return Cursor{}, time.Time{}, false, fmt.Errorf("events: reading how far events were pruned: %w%s", err, migrationHint(err))
	}
	if through.TxID, err = strconv.ParseUint(txid, 10, 64); err != nil {
		return Cursor{}, time.Time{}, false, fmt.Errorf("events: pruned through: transaction id %q: %w", txid, err)
	}
	return through, at.UTC(), true, nil
}

// CheckNotPruned returns a *GapError when an event after cursor after was
// pruned, nil when every event after it is still in the outbox. The zero
// cursor means "from the beginning of what the outbox retains" and is
// never a gap. Read it in the snapshot of the read it guards (ReadChecked)
// to be exact: Prune deletes events and records how far in one statement.
func CheckNotPruned(ctx context.Context, db DB, schema string, after Cursor) error {
	if after == (Cursor{}) {
		return nil
	}
	through, at, ok, err := Pruned(ctx, db, schema)
	if err != nil || !ok || !after.Less(through) {
		return err
	}
	return &GapError{After: after, Through: through, PrunedAt: at}
}

// TxDB is a DB that can begin a transaction; *pgxpool.Pool has it.
type TxDB interface {
	DB
	BeginTx(ctx context.Context, opts pgx.TxOptions) (pgx.Tx, error)
}

// ReadChecked is Read, but it fails with a *GapError (errors.Is ErrPruned)
// instead of returning events that follow a gap: it checks how far the
// outbox was pruned and reads in one snapshot (a read-only REPEATABLE READ
// transaction), so an event pruned after the check cannot go missing
// unnoticed. pending is Pending's answer, asked in the same snapshot, when
// no event came back.
func ReadChecked(ctx context.Context, db TxDB, schema string, after Cursor, limit int) (batch []Event, pending bool, err error) {
	err = pgx.BeginTxFunc(ctx, db, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		if err := CheckNotPruned(ctx, tx, schema, after); err != nil {
			return err
		}
		var err error
		if batch, err = Read(ctx, tx, schema, after, limit); err != nil || len(batch) > 0 {
			return err
		}
		pending, err = Pending(ctx, tx, schema, after)
		return err
	})
	return batch, pending, err
}
