package bulk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/riverbpmn/riverbpmn/internal/sqltemplate"
)

// Operations as rows (migration riverbpmn/025, table
// river_bpmn_bulk_operation): a bulk action started from the console is
// recorded before it runs, saves its progress after every batch, and is
// taken over and resumed by another process when the one running it dies.

var (
	operationColumns    = strings.TrimSpace(sqltemplate.MustRead(sqlFS, "sql/operation_columns.sql"))
	operationInsertSQL  = operationSQL("sql/operation_insert.sql")
	operationSaveSQL    = sqltemplate.MustRead(sqlFS, "sql/operation_save.sql")
	operationFinishSQL  = sqltemplate.MustRead(sqlFS, "sql/operation_finish.sql")
	operationReleaseSQL = sqltemplate.MustRead(sqlFS, "sql/operation_release.sql")
	operationClaimSQL   = operationSQL("sql/operation_claim.sql")
	operationGetSQL     = operationSQL("sql/operation_get.sql")
	operationListSQL    = operationSQL("sql/operation_list.sql")
)

func operationSQL(name string) string {
	return strings.ReplaceAll(sqltemplate.MustRead(sqlFS, name), "/* COLUMNS */", operationColumns)
}

// HeartbeatInterval is how often the process running an operation proves
// it still does (and saves its progress, at the latest).
const HeartbeatInterval = 5 * time.Second

// StaleAfter is how old a running operation's heartbeat is when its process
// is taken for dead and another takes it over: six missed heartbeats.
const StaleAfter = 6 * HeartbeatInterval

// The actions an operation runs.
const (
	ActionSuspend  = "suspend"
	ActionActivate = "activate"
	ActionStop     = "stop"
	ActionPriority = "priority"
	ActionRetry    = "retry"
)

// Spec is what an operation does: an action on a selection of jobs (Jobs:
// suspend, activate, stop, priority) or of incidents (Incidents: retry).
type Spec struct {
	Action    string     `json:"action"`
	Jobs      *Jobs      `json:"jobs,omitempty"`
	Incidents *Incidents `json:"incidents,omitempty"`
	// Priority is the priority action's value.
	Priority int64 `json:"priority,omitempty"`
	// Retries is the retry action's retries (1 to 32767).
	Retries int `json:"retries,omitempty"`
}

// Validate names the first bad field and value.
func (s *Spec) Validate() error {
	switch s.Action {
	case ActionSuspend, ActionActivate, ActionStop, ActionPriority:
		if s.Jobs == nil {
			return fmt.Errorf("bulk: action %q needs jobs", s.Action)
		}
		if err := s.Jobs.Filter.Validate(); err != nil {
			return err
		}
		if len(s.Jobs.JobIDs) > MaxJobIDs {
			return fmt.Errorf("bulk: %d job ids, more than %d", len(s.Jobs.JobIDs), MaxJobIDs)
		}
	case ActionRetry:
		if s.Incidents == nil {
			return fmt.Errorf("bulk: action %q needs incidents", s.Action)
		}
		if s.Retries < 1 || s.Retries > 32767 {
			return fmt.Errorf("bulk: retries %d is out of range: 1 to 32767", s.Retries)
		}
		if len(s.Incidents.JobIDs) > MaxJobIDs {
			return fmt.Errorf("bulk: %d job ids, more than %d", len(s.Incidents.JobIDs), MaxJobIDs)
		}
	default:
		return fmt.Errorf("bulk: action %q is not %s, %s, %s, %s or %s", s.Action, ActionSuspend, ActionActivate, ActionStop, ActionPriority, ActionRetry)
	}
	return nil
}

// The states of an operation.
const (
	StateRunning  = "running"
	StateFinished = "finished"
	StateFailed   = "failed"
)

// Operation is a recorded bulk operation.
type Operation struct {
	ID          int64  `json:"id"`
	Action      string `json:"action"`
	Description string `json:"description"`
	Spec        Spec   `json:"spec"`
	// State is running, finished or failed (Error says why).
	State    string   `json:"state"`
	Progress Progress `json:"progress"`
	Error    string   `json:"error,omitempty"`
	// Owner is the process running it (or that ran it last); Runs counts
	// the processes that ran it (more than 1: it was taken over).
	Owner       string     `json:"owner"`
	Runs        int        `json:"runs"`
	CreatedAt   time.Time  `json:"created_at"`
	HeartbeatAt time.Time  `json:"heartbeat_at"`
	FinishedAt  *time.Time `json:"finished_at,omitempty"`
}

// ErrNotOwner is returned by SaveProgress and FinishOperation when owner no
// longer runs the operation: another process took it over, or it ended.
var ErrNotOwner = errors.New("bulk: the operation is no longer run by this owner")

// ErrNoOperation is returned by GetOperation for an id with no row.
var ErrNoOperation = errors.New("bulk: no such operation")

// CreateOperation validates spec and records it as a running operation of
// owner.
func CreateOperation(ctx context.Context, db DB, schema string, spec *Spec, description, owner string) (*Operation, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	if owner == "" {
		return nil, errors.New("bulk: owner is empty")
	}
	if len(description) > 2000 {
		description = description[:1997] + "..."
	}
	b, err := json.Marshal(spec)
	if err != nil {
		return nil, fmt.Errorf("bulk: encoding the spec: %w", err)
	}
	op, err := scanOperation(db.QueryRow(ctx, sqltemplate.Render(operationInsertSQL, schema), spec.Action, description, b, owner))
	if err != nil {
		return nil, fmt.Errorf("bulk: recording the operation: %w", err)
	}
	return op, nil
}

// SaveProgress saves p as operation id's progress and refreshes its
// heartbeat; ErrNotOwner when owner no longer runs it.
func SaveProgress(ctx context.Context, db DB, schema string, id int64, owner string, p *Progress) error {
	var b []byte
	if p != nil {
		var err error
		if b, err = json.Marshal(p); err != nil {
			return fmt.Errorf("bulk: encoding the progress: %w", err)
		}
	}
	var got int64
	err := db.QueryRow(ctx, sqltemplate.Render(operationSaveSQL, schema), id, owner, b).Scan(&got)
	if errors.Is(err, pgx.ErrNoRows) {
		return ErrNotOwner
	}
	if err != nil {
		return fmt.Errorf("bulk: saving the progress of operation %d: %w", id, err)
	}
	return nil
}

// FinishOperation ends operation id with its last progress: finished, or
// failed with runErr's message.
func FinishOperation(ctx context.Context, db DB, schema string, id int64, owner string, p *Progress, runErr error) error {
	if p == nil {
		p = &Progress{}
	}
	b, err := json.Marshal(p)
	if err != nil {
		return fmt.Errorf("bulk: encoding the progress: %w", err)
	}
	state, msg := StateFinished, (*string)(nil)
	if runErr != nil {
		s := runErr.Error()
		state, msg = StateFailed, &s
	}
	var got int64
	err = db.QueryRow(ctx, sqltemplate.Render(operationFinishSQL, schema), id, owner, b, state, msg).Scan(&got)
	if errors.Is(err, pgx.ErrNoRows) {
		return ErrNotOwner
	}
	if err != nil {
		return fmt.Errorf("bulk: finishing operation %d: %w", id, err)
	}
	return nil
}

// ReleaseOperation gives operation id up (owner's process stops): the next
// ClaimStaleOperations, by any process, takes it over at once.
func ReleaseOperation(ctx context.Context, db DB, schema string, id int64, owner string) error {
	if _, err := db.Exec(ctx, sqltemplate.Render(operationReleaseSQL, schema), id, owner); err != nil {
		return fmt.Errorf("bulk: releasing operation %d: %w", id, err)
	}
	return nil
}

// ClaimStaleOperations makes owner the owner of the running operations
// whose heartbeat is older than staleAfter (at most limit), and returns
// them, to be resumed from their progress.
func ClaimStaleOperations(ctx context.Context, db DB, schema, owner string, staleAfter time.Duration, limit int) ([]*Operation, error) {
	rows, err := db.Query(ctx, sqltemplate.Render(operationClaimSQL, schema), owner, staleAfter.String(), limit)
	if err != nil {
		return nil, fmt.Errorf("bulk: taking over operations: %w", err)
	}
	ops, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (*Operation, error) { return scanOperation(row) })
	if err != nil {
		return nil, fmt.Errorf("bulk: taking over operations: %w", err)
	}
	return ops, nil
}

// GetOperation returns operation id; ErrNoOperation when there is none.
func GetOperation(ctx context.Context, db DB, schema string, id int64) (*Operation, error) {
	op, err := scanOperation(db.QueryRow(ctx, sqltemplate.Render(operationGetSQL, schema), id))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("%w: %d", ErrNoOperation, id)
	}
	if err != nil {
		return nil, fmt.Errorf("bulk: reading operation %d: %w", id, err)
	}
	return op, nil
}

// ListOperations returns the operations before id before (0: from the newest),
// newest first, at most limit.
func ListOperations(ctx context.Context, db DB, schema string, before int64, limit int) ([]*Operation, error) {
	rows, err := db.Query(ctx, sqltemplate.Render(operationListSQL, schema), before, limit)
	if err != nil {
		return nil, fmt.Errorf("bulk: listing operations: %w", err)
	}
	ops, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (*Operation, error) { return scanOperation(row) })
	if err != nil {
		return nil, fmt.Errorf("bulk: listing operations: %w", err)
	}
	return ops, nil
}

func scanOperation(row pgx.Row) (*Operation, error) {
	var (
		op             Operation
		spec, progress []byte
		msg            *string
	)
	if err := row.Scan(&op.ID, &op.Action, &op.Description, &spec, &op.State, &progress, &msg, &op.Owner, &op.Runs,
		&op.CreatedAt, &op.HeartbeatAt, &op.FinishedAt); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(spec, &op.Spec); err != nil {
		return nil, fmt.Errorf("bulk: operation %d: reading its spec: %w", op.ID, err)
	}
	if err := json.Unmarshal(progress, &op.Progress); err != nil {
		return nil, fmt.Errorf("bulk: operation %d: reading its progress: %w", op.ID, err)
	}
	if msg != nil {
		op.Error = *msg
	}
	op.CreatedAt, op.HeartbeatAt = op.CreatedAt.UTC(), op.HeartbeatAt.UTC()
	if op.FinishedAt != nil {
		t := op.FinishedAt.UTC()
		op.FinishedAt = &t
	}
	return &op, nil
}
