// Package jobrow reads river_job rows the way River's own driver does, for
// the riverbpmn statements that select whole job rows (the fetch, and the
// listings of a process instance's jobs). It imports no other riverbpmn
// package, so every feature package may use it.
package jobrow

import (
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/rivershared/uniquestates"
	"github.com/riverqueue/river/rivertype"
)

// Columns lists river_job's columns in the order Scan reads them.
// Queries name them explicitly (never "*") so a column River adds in a later
// version cannot shift the scan.
var Columns = []string{
	"id", "args", "attempt", "attempted_at", "attempted_by", "created_at",
	"errors", "finalized_at", "kind", "max_attempts", "metadata", "priority",
	"queue", "state", "scheduled_at", "tags", "unique_key", "unique_states",
}

// ColumnsMarker is the marker a statement selects the job row with; Render
// replaces it by the qualified Columns of river_job.
const ColumnsMarker = "/* COLUMNS: river_job */"

// QualifiedColumns returns Columns as "table.col, table.col, ...".
func QualifiedColumns(table string) string {
	var sb strings.Builder
	for i, col := range Columns {
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString(table)
		sb.WriteByte('.')
		sb.WriteString(col)
	}
	return sb.String()
}

// Scan decodes one river_job row selected with Columns, the way
// River's own driver does (riverpgxv5 jobRowFromInternalPartial): times in
// UTC, negative counters clamped to zero, unique states from their bitmask.
//
// A row is always returned when the scan itself succeeded. decodeErr reports a
// field that could not be decoded (today: an entry of `errors` that is not a
// valid attempt error); that field is left empty, as River does, so that the
// caller can keep the row and fail its attempt instead of losing it.
func Scan(row pgx.Row) (job *rivertype.JobRow, decodeErr error, err error) {
	var (
		attempt      int16
		attemptedAt  *time.Time
		createdAt    time.Time
		rawErrors    [][]byte
		finalizedAt  *time.Time
		maxAttempts  int16
		priority     int16
		state        string
		scheduledAt  time.Time
		uniqueStates pgtype.Bits
	)
	job = &rivertype.JobRow{}
	if err := row.Scan(
		&job.ID,
		&job.EncodedArgs,
		&attempt,
		&attemptedAt,
		&job.AttemptedBy,
		&createdAt,
		&rawErrors,
		&finalizedAt,
		&job.Kind,
		&maxAttempts,
		&job.Metadata,
		&priority,
		&job.Queue,
		&state,
		&scheduledAt,
		&job.Tags,
		&job.UniqueKey,
		&uniqueStates,
	); err != nil {
		return nil, nil, err
	}

	job.Attempt = max(int(attempt), 0)
	job.AttemptedAt = utcPtr(attemptedAt)
	job.CreatedAt = createdAt.UTC()
	job.FinalizedAt = utcPtr(finalizedAt)
	job.MaxAttempts = max(int(maxAttempts), 0)
	job.Priority = max(int(priority), 0)
	job.ScheduledAt = scheduledAt.UTC()
	job.State = rivertype.JobState(state)

	var uniqueStatesByte byte
	if uniqueStates.Valid && len(uniqueStates.Bytes) > 0 {
		uniqueStatesByte = uniqueStates.Bytes[0]
	}
	job.UniqueStates = uniquestates.UniqueBitmaskToStates(uniqueStatesByte)

	job.Errors = make([]rivertype.AttemptError, len(rawErrors))
	for i, rawError := range rawErrors {
		if err := riverdriver.UnmarshalAttemptError(rawError, &job.Errors[i]); err != nil {
			job.Errors = nil
			decodeErr = fmt.Errorf("error unmarshaling `errors`: %w", err)
			break
		}
	}

	return job, decodeErr, nil
}

func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	utc := t.UTC()
	return &utc
}

// ScanRows reads every row of a river_job query selecting Columns.
// A row with a field that cannot be decoded is kept, with its error in
// decodeErrors (keyed by job id): rows fetched for work have already been
// moved to running, and River fails such an attempt instead of losing the job.
func ScanRows(rows pgx.Rows) (jobs []*rivertype.JobRow, decodeErrors map[int64]error, err error) {
	defer rows.Close()

	jobs = []*rivertype.JobRow{} // never nil, like River's driver
	for rows.Next() {
		job, decodeErr, err := Scan(rows)
		if err != nil {
			return nil, nil, err
		}
		jobs = append(jobs, job)
		if decodeErr != nil {
			if decodeErrors == nil {
				decodeErrors = make(map[int64]error)
			}
			decodeErrors[job.ID] = decodeErr
		}
	}
	if err := rows.Err(); err != nil {
		return nil, nil, err
	}
	return jobs, decodeErrors, nil
}
