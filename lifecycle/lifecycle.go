package lifecycle

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/riverbpmn/riverbpmn/hold"
)

// MetadataKey is the key of river_job.metadata under which a job keeps what
// it asked for at insert (Opts).
const MetadataKey = "bpmn_lifecycle"

// DependentsKey marks, in river_job.metadata, a job that other jobs wait
// for ("bpmn_dependents": true). Only such jobs fire the release trigger.
const DependentsKey = "bpmn_dependents"

// Hold reasons of this package (package hold).
const (
	// Pending is the reason of a job inserted with Opts.Pending until it is
	// queued.
	Pending hold.Reason = "pending"
	// Prerequisites is the reason of a job that waits for prerequisites.
	Prerequisites hold.Reason = "prerequisites"
)

// Opts is what a job asks of its lifecycle at insert. Store it in the
// job's metadata with AddToMetadata (or InsertOpts); the database reads it
// when the job is inserted.
type Opts struct {
	// Pending inserts the job held for reason Pending: it runs only once
	// Queue is called for it (and nothing else holds it).
	Pending bool `json:"pending,omitempty"`
	// DependsOn are the jobs this one waits for: it is held for reason
	// Prerequisites until every one of them has completed. Each must exist
	// (inserted earlier, possibly in the same transaction).
	DependsOn []int64 `json:"depends_on,omitempty"`
	// ExpiresAt, if set, is when the job expires: if it has not started by
	// then, it never starts, and is discarded with an error naming this
	// time (kept to the microsecond, as PostgreSQL keeps it).
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
}

// Validate reports a prerequisite id that cannot be a job's (not positive)
// and a zero expiration time.
func (o Opts) Validate() error {
	for _, id := range o.DependsOn {
		if id <= 0 {
			return fmt.Errorf("lifecycle: depends_on: %d is not a job id", id)
		}
	}
	if o.ExpiresAt != nil && o.ExpiresAt.IsZero() {
		return errors.New("lifecycle: expires_at: the zero time is not an expiration date")
	}
	return nil
}

// AddToMetadata returns metadata (a JSON object, or empty) with o stored
// under MetadataKey.
func (o Opts) AddToMetadata(metadata []byte) ([]byte, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	fields := map[string]json.RawMessage{}
	if len(bytes.TrimSpace(metadata)) > 0 {
		if err := json.Unmarshal(metadata, &fields); err != nil || fields == nil {
			return nil, fmt.Errorf("lifecycle: job metadata must be a JSON object, got %q", string(metadata))
		}
	}
	if o.ExpiresAt != nil {
		// PostgreSQL keeps microseconds: store what it will read, so that
		// the work path and the database name the same time.
		at := o.ExpiresAt.UTC().Truncate(time.Microsecond)
		o.ExpiresAt = &at
	}
	encoded, err := json.Marshal(o)
	if err != nil {
		return nil, err
	}
	fields[MetadataKey] = encoded
	return json.Marshal(fields)
}

// Apply stores o in opts.Metadata, keeping what is there (a job context,
// for instance). opts may be nil: a new InsertOpts is returned.
func (o Opts) Apply(opts *river.InsertOpts) (*river.InsertOpts, error) {
	if opts == nil {
		opts = &river.InsertOpts{}
	}
	metadata, err := o.AddToMetadata(opts.Metadata)
	if err != nil {
		return nil, err
	}
	opts.Metadata = metadata
	return opts, nil
}

// Of reads a job's Opts from its metadata: nil when it has none.
func Of(metadata []byte) (*Opts, error) {
	if !bytes.Contains(metadata, []byte(`"`+MetadataKey+`"`)) {
		return nil, nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(metadata, &fields); err != nil {
		return nil, nil //nolint:nilerr // not an object: nothing asked
	}
	raw, ok := fields[MetadataKey]
	if !ok {
		return nil, nil
	}
	var o Opts
	if err := json.Unmarshal(raw, &o); err != nil {
		return nil, fmt.Errorf("lifecycle: metadata[%q] is malformed: %w", MetadataKey, err)
	}
	return &o, nil
}

//go:embed sql/*.sql
var sqlFS embed.FS

func mustReadSQL(name string) string {
	b, err := sqlFS.ReadFile("sql/" + name)
	if err != nil {
		panic("lifecycle: missing embedded SQL file " + name + ": " + err.Error())
	}
	return string(b)
}

var (
	queueSQL           = mustReadSQL("queue.sql")
	existingSQL        = mustReadSQL("existing.sql")
	instancePendingSQL = mustReadSQL("instance_pending.sql")
	instanceExistsSQL  = mustReadSQL("instance_exists.sql")
	prerequisitesSQL   = mustReadSQL("prerequisites.sql")
	dependentsSQL      = mustReadSQL("dependents.sql")
	jobStateSQL        = mustReadSQL("job_state.sql")
	expireDueSQL       = mustReadSQL("expire_due.sql")
	expireRunningSQL   = mustReadSQL("expire_running.sql")
	nextExpirySQL      = mustReadSQL("next_expiry.sql")
	linkSQL            = mustReadSQL("link.sql")
)

// ErrJobNotFound is returned (wrapped in a *NotFoundError) for job ids that
// do not exist.
var ErrJobNotFound = errors.New("job not found")

// NotFoundError names the job ids that do not exist.
type NotFoundError struct {
	// IDs are the unknown job ids, sorted.
	IDs []int64
}

func (e *NotFoundError) Error() string {
	ids := make([]string, len(e.IDs))
	for i, id := range e.IDs {
		ids[i] = fmt.Sprint(id)
	}
	if len(ids) == 1 {
		return "lifecycle: job " + ids[0] + ": " + ErrJobNotFound.Error()
	}
	return "lifecycle: jobs " + strings.Join(ids, ", ") + ": " + ErrJobNotFound.Error()
}

// Unwrap returns ErrJobNotFound.
func (e *NotFoundError) Unwrap() error { return ErrJobNotFound }

// Outcome is what Queue did to one job.
type Outcome string

// Outcomes of Queue.
const (
	// Queued: the job was pending and now runs as soon as it can (or when
	// it is due, if it is scheduled).
	Queued Outcome = "queued"
	// StillHeld: the job was pending and is no longer, but something else
	// holds it (a suspension, prerequisites): it runs once released.
	StillHeld Outcome = "still_held"
	// NotPending: the job was not pending (already queued, running,
	// finished); nothing was done.
	NotPending Outcome = "not_pending"
)

// QueueResult is what Queue did to one job.
type QueueResult struct {
	JobID   int64              `json:"job_id"`
	Outcome Outcome            `json:"outcome"`
	State   rivertype.JobState `json:"state"`
}

// Queue queues jobs: a job held for reason Pending loses it (and runs once
// nothing else holds it); a job River's own InsertOpts.Pending left pending
// becomes available (scheduled, if due later). Queuing a job that is not
// pending does nothing (NotPending). It all happens in one statement; when
// an id does not exist, nothing is queued and a *NotFoundError names it
// (give db a transaction to make the check and the queuing atomic).
// Producers of queues that got available jobs are woken at commit.
func Queue(ctx context.Context, db hold.DB, schema string, jobIDs []int64) ([]QueueResult, error) {
	ids := slices.Clone(jobIDs)
	slices.Sort(ids)
	ids = slices.Compact(ids)
	if len(ids) == 0 {
		return nil, nil
	}
	rows, err := db.Query(ctx, hold.RenderSQL(existingSQL, schema), ids)
	if err != nil {
		return nil, fmt.Errorf("lifecycle: queuing jobs: %w", err)
	}
	existing, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return nil, fmt.Errorf("lifecycle: queuing jobs: %w", err)
	}
	if len(existing) != len(ids) {
		var missing []int64
		for _, id := range ids {
			if !slices.Contains(existing, id) {
				missing = append(missing, id)
			}
		}
		return nil, &NotFoundError{IDs: missing}
	}
	rows, err = db.Query(ctx, hold.RenderSQL(queueSQL, schema), ids)
	if err != nil {
		return nil, fmt.Errorf("lifecycle: queuing jobs: %w", err)
	}
	results, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (QueueResult, error) {
		var r QueueResult
		err := row.Scan(&r.JobID, &r.Outcome, &r.State)
		return r, err
	})
	if err != nil {
		return nil, fmt.Errorf("lifecycle: queuing jobs: %w", err)
	}
	return results, nil
}

// ErrInstanceNotFound is returned (wrapped) by QueueProcessInstance for a
// process instance no job belongs to.
var ErrInstanceNotFound = errors.New("process instance not found")

// QueueProcessInstance queues every pending job of process instance
// processInstanceID (see Queue). An instance without any job is
// ErrInstanceNotFound; one without pending jobs queues nothing.
func QueueProcessInstance(ctx context.Context, db hold.DB, schema, processInstanceID string) ([]QueueResult, error) {
	rows, err := db.Query(ctx, hold.RenderSQL(instancePendingSQL, schema), processInstanceID)
	if err != nil {
		return nil, fmt.Errorf("lifecycle: queuing process instance %q: %w", processInstanceID, err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return nil, fmt.Errorf("lifecycle: queuing process instance %q: %w", processInstanceID, err)
	}
	if len(ids) == 0 {
		var exists bool
		if err := db.QueryRow(ctx, hold.RenderSQL(instanceExistsSQL, schema), processInstanceID).Scan(&exists); err != nil {
			return nil, fmt.Errorf("lifecycle: queuing process instance %q: %w", processInstanceID, err)
		}
		if !exists {
			return nil, fmt.Errorf("lifecycle: process instance %q: %w", processInstanceID, ErrInstanceNotFound)
		}
		return []QueueResult{}, nil
	}
	return Queue(ctx, db, schema, ids)
}
