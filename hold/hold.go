package hold

import (
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/riverbpmn/riverbpmn/internal/sqltemplate"
	"github.com/riverqueue/river/rivertype"
)

// MetadataKey is the key of river_job.metadata under which a held job shows
// its reasons and the state it goes to when released.
const MetadataKey = "bpmn_hold"

// Reason names why a job is held.
type Reason string

// Suspended is the reason of a suspended job (package suspension).
const Suspended Reason = "suspended"

// MaxReasonBytes is the longest reason, in bytes.
const MaxReasonBytes = 255

// Validate reports a reason that is empty or too long.
func (r Reason) Validate() error {
	if r == "" || len(r) > MaxReasonBytes {
		return fmt.Errorf("hold: reason %q must be 1 to %d bytes long", string(r), MaxReasonBytes)
	}
	return nil
}

// State is what a held job's metadata says about its hold.
type State struct {
	// Reasons are the reasons the job is held for, sorted.
	Reasons []Reason `json:"reasons"`
	// ReleaseTo is the state the job goes to when its last reason goes:
	// available, scheduled, retryable or pending. It is empty while a job
	// held during its run still runs.
	ReleaseTo rivertype.JobState `json:"release_to,omitempty"`
	// Since is when the job was first held (the database's clock).
	Since time.Time `json:"since"`
}

// Has says whether the job is held for reason.
func (s *State) Has(reason Reason) bool {
	if s == nil {
		return false
	}
	for _, r := range s.Reasons {
		if r == reason {
			return true
		}
	}
	return false
}

// Of reads the hold of a job from its metadata: nil when the job is not held.
// Metadata that is not a JSON object holds nothing; a malformed hold is an
// error naming it.
func Of(metadata []byte) (*State, error) {
	if !strings.Contains(string(metadata), `"`+MetadataKey+`"`) {
		return nil, nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(metadata, &fields); err != nil {
		return nil, nil //nolint:nilerr // not an object: nothing held
	}
	raw, ok := fields[MetadataKey]
	if !ok {
		return nil, nil
	}
	var state State
	if err := json.Unmarshal(raw, &state); err != nil {
		return nil, fmt.Errorf("hold: metadata[%q] is malformed: %w", MetadataKey, err)
	}
	return &state, nil
}

// DB is what this package needs of a database: a *pgxpool.Pool, a
// *pgxpool.Conn or a pgx.Tx.
type DB interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

//go:embed sql/*.sql
var sqlFS embed.FS

var (
	addSQL     = mustReadSQL("add.sql")
	removeSQL  = mustReadSQL("remove.sql")
	reasonsSQL = mustReadSQL("reasons.sql")
)

func mustReadSQL(name string) string { return sqltemplate.MustRead(sqlFS, "sql/"+name) }

// RenderSQL fills River's schema marker ("/* TEMPLATE: schema */") of tmpl
// with the quoted schema and a dot, or nothing for the connection's
// search_path.
func RenderSQL(tmpl, schema string) string { return sqltemplate.Render(tmpl, schema) }

// Add holds jobs jobIDs for reason, in one statement (one transaction unless
// db is one). Finished jobs, and jobs that do not exist, are left alone; a
// running job keeps running and is held from its next run on. It returns the
// jobs that did not have the reason yet.
func Add(ctx context.Context, db DB, schema string, jobIDs []int64, reason Reason) ([]int64, error) {
	if err := reason.Validate(); err != nil {
		return nil, err
	}
	rows, err := db.Query(ctx, RenderSQL(addSQL, schema), jobIDs, string(reason))
	if err != nil {
		return nil, fmt.Errorf("hold: holding jobs for %q: %w", reason, err)
	}
	added, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return nil, fmt.Errorf("hold: holding jobs for %q: %w", reason, err)
	}
	return added, nil
}

// Removal is what Remove did to one job that had the reason.
type Removal struct {
	JobID int64
	// Released is true when the reason was the job's last: the job is no
	// longer held.
	Released bool
}

// Remove removes reason from jobs jobIDs, in one statement, and releases
// every job whose last reason it was. It returns the jobs that had the
// reason. Producers of queues that got available jobs are woken (River's
// insert notification) when the transaction commits.
func Remove(ctx context.Context, db DB, schema string, jobIDs []int64, reason Reason) ([]Removal, error) {
	if err := reason.Validate(); err != nil {
		return nil, err
	}
	rows, err := db.Query(ctx, RenderSQL(removeSQL, schema), jobIDs, string(reason))
	if err != nil {
		return nil, fmt.Errorf("hold: removing reason %q: %w", reason, err)
	}
	removals, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Removal, error) {
		var r Removal
		err := row.Scan(&r.JobID, &r.Released)
		return r, err
	})
	if err != nil {
		return nil, fmt.Errorf("hold: removing reason %q: %w", reason, err)
	}
	return removals, nil
}

// Reasons returns the reasons job jobID is held for, sorted; none when it is
// not held (or does not exist).
func Reasons(ctx context.Context, db DB, schema string, jobID int64) ([]Reason, error) {
	rows, err := db.Query(ctx, RenderSQL(reasonsSQL, schema), jobID)
	if err != nil {
		return nil, fmt.Errorf("hold: reading the reasons of job %d: %w", jobID, err)
	}
	reasons, err := pgx.CollectRows(rows, pgx.RowTo[Reason])
	if err != nil {
		return nil, fmt.Errorf("hold: reading the reasons of job %d: %w", jobID, err)
	}
	return reasons, nil
}
