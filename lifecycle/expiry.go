package lifecycle

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/riverbpmn/riverbpmn/hold"
)

// expiryTimeFormat is how expiry errors name the expiration time (UTC,
// microseconds, as the database writes it).
const expiryTimeFormat = "2006-01-02T15:04:05.000000Z"

// ExpiryMessage is the error recorded for a job that expired at expiresAt
// before it started.
func ExpiryMessage(expiresAt time.Time) string {
	return "riverbpmn: job expired at " + expiresAt.UTC().Format(expiryTimeFormat) + " before it started"
}

var expiresAtMarker = []byte(`"expires_at"`)

// ExpiresAt returns the expiration time in a job's metadata, if any. It
// costs one byte search for a job without one.
func ExpiresAt(metadata []byte) (time.Time, bool) {
	if !bytes.Contains(metadata, expiresAtMarker) {
		return time.Time{}, false
	}
	o, err := Of(metadata)
	if err != nil || o == nil || o.ExpiresAt == nil {
		return time.Time{}, false
	}
	return *o.ExpiresAt, true
}

// EndExpired ends running job jobID, which expired at expiresAt before it
// started, as discarded with ExpiryMessage, without running it. It returns
// whether the job was changed (false if it was no longer running).
func EndExpired(ctx context.Context, db hold.DB, schema string, jobID int64, expiresAt time.Time) (bool, error) {
	tag, err := db.Exec(ctx, hold.RenderSQL(expireRunningSQL, schema), jobID, ExpiryMessage(expiresAt))
	if err != nil {
		return false, fmt.Errorf("lifecycle: ending expired job %d: %w", jobID, err)
	}
	return tag.RowsAffected() > 0, nil
}

// ExpireBatch is how many jobs one statement of ExpireDue discards.
const ExpireBatch = 1000

// ExpireDue discards jobs whose expiration time has passed while they
// still wait, in statements of ExpireBatch jobs, and returns them, with the
// next expiration time still to act on (zero if none).
func ExpireDue(ctx context.Context, db hold.DB, schema string) ([]int64, time.Time, error) {
	var all []int64
	for {
		rows, err := db.Query(ctx, hold.RenderSQL(expireDueSQL, schema), ExpireBatch)
		if err != nil {
			return all, time.Time{}, fmt.Errorf("lifecycle: expiring jobs: %w", err)
		}
		ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
		if err != nil {
			return all, time.Time{}, fmt.Errorf("lifecycle: expiring jobs: %w", err)
		}
		all = append(all, ids...)
		if len(ids) < ExpireBatch {
			break
		}
	}
	var next *time.Time
	if err := db.QueryRow(ctx, hold.RenderSQL(nextExpirySQL, schema)).Scan(&next); err != nil {
		return all, time.Time{}, fmt.Errorf("lifecycle: expiring jobs: %w", err)
	}
	if next == nil {
		return all, time.Time{}, nil
	}
	return all, *next, nil
}
