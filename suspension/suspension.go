package suspension

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/riverbpmn/riverbpmn/hold"
	"github.com/riverbpmn/riverbpmn/internal/sqltemplate"
)

// AdvisoryLockClass is the first key of the two-key advisory lock that
// serialises suspending a target with inserting its jobs. The second key is
// hashtext("<river_job oid>:<bucket>"), bucket = hashtext("<target
// type>:<target id>") & (LockBuckets-1); the insert trigger of migration
// riverbpmn/007 uses the same keys.
const AdvisoryLockClass = 1380076879

// LockBuckets is how many advisory locks the targets of one river_job table
// share: an inserting transaction holds at most this many (plus one, the
// lock that tells it whether anything is suspended), however many process
// instances its jobs belong to.
const LockBuckets = 32

// BatchSize is how many jobs one transaction of a cascade changes.
const BatchSize = 1000

// TargetType is what a suspension applies to.
type TargetType string

// Target types.
const (
	JobDefinition     TargetType = "job_definition"
	ProcessDefinition TargetType = "process_definition"
	ProcessInstance   TargetType = "process_instance"
)

// Validate reports an unknown target type.
func (t TargetType) Validate() error {
	switch t {
	case JobDefinition, ProcessDefinition, ProcessInstance:
		return nil
	}
	return fmt.Errorf("suspension: unknown target type %q (want %q, %q or %q)", string(t), JobDefinition, ProcessDefinition, ProcessInstance)
}

// DB is what this package needs of a database: a *pgxpool.Pool (transactions
// are begun on it).
type DB interface {
	hold.DB
	Begin(ctx context.Context) (pgx.Tx, error)
}

//go:embed sql/*.sql
var sqlFS embed.FS

func mustReadSQL(name string) string { return sqltemplate.MustRead(sqlFS, "sql/"+name) }

var (
	lockSQL           = mustReadSQL("lock.sql")
	epochLockSQL      = mustReadSQL("epoch_lock.sql")
	setSQL            = mustReadSQL("set.sql")
	cascadeBatchSQL   = mustReadSQL("cascade_batch.sql")
	jobDefinitionsSQL = mustReadSQL("job_definitions.sql")
	isSuspendedSQL    = mustReadSQL("is_suspended.sql")
	listSQL           = mustReadSQL("list.sql")
	instanceExistsSQL = mustReadSQL("instance_exists.sql")
	jobStateSQL       = mustReadSQL("job_state.sql")
)

// targetFilters select a target's jobs in cascade_batch.sql, each over the
// index named there.
var targetFilters = map[TargetType]string{
	JobDefinition:     `/* TEMPLATE: schema */river_bpmn_ctx_has_job_definition(metadata, $1::text)`,
	ProcessInstance:   `/* TEMPLATE: schema */river_bpmn_ctx_has_instance(metadata, $1::text)`,
	ProcessDefinition: `/* TEMPLATE: schema */river_bpmn_ctx_has_definition(metadata, $1::text)`,
	startTimers: `/* TEMPLATE: schema */river_bpmn_ctx_has_definition(metadata, $1::text)
        AND /* TEMPLATE: schema */river_bpmn_ctx_instance(metadata) IS NULL
        AND /* TEMPLATE: schema */river_bpmn_ctx_is_timer(metadata)`,
}

// startTimers selects, in a cascade, the timer start event jobs of a
// process definition: its timer jobs (job type timer) that belong to no
// process instance. In Camunda they belong to the process definition, and
// follow its suspension whether or not instance jobs are included
// (ProcessDefinitionSuspensionTest, timer start events). Not a target of
// its own: the cascade checks the process definition's state.
const startTimers TargetType = "process_definition_start_timers"

func render(tmpl, schema string) string { return sqltemplate.Render(tmpl, schema) }

// Set suspends (suspend true) or activates target (t, id) for the jobs
// inserted from now on, in one transaction: it waits for inserts of the
// target's jobs under way, and every insert after it sees the change. Existing
// jobs are left alone (see Cascade). It returns whether the target's state
// changed (false: it was already suspended, or already active).
func Set(ctx context.Context, db DB, schema string, t TargetType, id string, suspend bool) (bool, error) {
	if err := t.Validate(); err != nil {
		return false, err
	}
	var changed bool
	err := pgx.BeginFunc(ctx, db, func(tx pgx.Tx) error {
		var (
			timeout          string
			nothingSuspended bool
		)
		if err := tx.QueryRow(ctx, render(epochLockSQL, schema), fmt.Sprintf("%dms", InsertWaitTimeout.Milliseconds())).Scan(&timeout, &nothingSuspended); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, render(lockSQL, schema), AdvisoryLockClass, string(t), id, nothingSuspended && suspend); err != nil {
			if isLockTimeout(err) {
				return fmt.Errorf("%w: a transaction inserting jobs stayed open for more than %s (try again): %w", ErrInsertsInFlight, InsertWaitTimeout, err)
			}
			return err
		}
		var bumped int64
		return tx.QueryRow(ctx, render(setSQL, schema), string(t), id, suspend).Scan(&changed, &bumped)
	})
	if err != nil {
		return false, fmt.Errorf("suspension: %s %s %q: %w", verb(suspend), t, id, err)
	}
	return changed, nil
}

// CascadeResult reports what a cascade did.
type CascadeResult struct {
	// Jobs is how many jobs were suspended (or activated).
	Jobs int64
	// Batches is how many transactions it took.
	Batches int
	// Stopped is true when the cascade stopped because a later call changed
	// the target's state.
	Stopped bool
	// Duration is how long it took.
	Duration time.Duration
	// LongestBatch is the longest transaction, the longest an insert of the
	// target could have waited for the cascade.
	LongestBatch time.Duration
}

// Cascade suspends (or activates) the existing unfinished jobs of target (t,
// id), batchSize jobs per transaction (BatchSize when batchSize <= 0), in id
// order. Call it after Set: jobs inserted before Set committed are then
// committed and found; jobs inserted after were inserted suspended. It stops
// when the target's state is no longer the one asked for.
func Cascade(ctx context.Context, db DB, schema string, t TargetType, id string, suspend bool, batchSize int) (*CascadeResult, error) {
	if _, ok := targetFilters[t]; !ok || t == startTimers {
		return nil, t.Validate()
	}
	return cascade(ctx, db, schema, t, t, id, suspend, batchSize)
}

// cascade is Cascade over the jobs that filter selects (a target type, or
// startTimers), while target (t, id) is in the state asked for.
func cascade(ctx context.Context, db DB, schema string, filter, t TargetType, id string, suspend bool, batchSize int) (*CascadeResult, error) {
	if batchSize <= 0 {
		batchSize = BatchSize
	}
	start := time.Now()
	res := &CascadeResult{}
	sql := CascadeBatchSQL(filter, schema)
	for lastID := int64(0); ; {
		var (
			scanned, changed int64
			still            bool
		)
		batchStart := time.Now()
		after := lastID
		var err error
		// A batch locks its jobs in id order; River's completer locks the jobs
		// it finishes in its own order, so the two can deadlock (PostgreSQL
		// then aborts one). The batch is tried again.
		for attempt := 1; ; attempt++ {
			err = db.QueryRow(ctx, sql, id, after, batchSize, suspend, string(t)).Scan(&scanned, &lastID, &still, &changed)
			if err == nil || attempt == maxBatchAttempts || !retryable(err) {
				break
			}
		}
		if err != nil {
			return res, fmt.Errorf("suspension: %s the jobs of %s %q (after job %d): %w", verbing(suspend), t, id, after, err)
		}
		res.LongestBatch = max(res.LongestBatch, time.Since(batchStart))
		res.Batches++
		res.Jobs += changed
		if !still {
			res.Stopped = true
			break
		}
		if scanned < int64(batchSize) {
			break
		}
	}
	res.Duration = time.Since(start)
	return res, nil
}

// InsertWaitTimeout bounds how long Set waits for transactions inserting
// jobs of its target (or, for the first suspension, any job with a job
// context) to end; inserts of those targets queue behind it meanwhile. It
// then fails with ErrInsertsInFlight, and can be tried again.
const InsertWaitTimeout = 5 * time.Second

// ErrInsertsInFlight is returned (wrapped) by Set when a transaction inserting
// jobs stayed open for longer than InsertWaitTimeout.
var ErrInsertsInFlight = errors.New("suspension: inserts under way did not finish in time")

func isLockTimeout(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "55P03"
}

// maxBatchAttempts is how often a cascade batch is tried when PostgreSQL
// aborts it for a deadlock or a serialization failure.
const maxBatchAttempts = 5

// retryable says whether err is a deadlock or serialization failure.
func retryable(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == "40P01" || pgErr.Code == "40001")
}

// CascadeBatchSQL returns the statement of one cascade batch for target type
// t (empty for an unknown type), to look at its plan. Its parameters: target
// id, last id seen, batch size, suspend, target type.
func CascadeBatchSQL(t TargetType, schema string) string {
	filter, ok := targetFilters[t]
	if !ok {
		return ""
	}
	return render(strings.ReplaceAll(cascadeBatchSQL, "/* TARGET_FILTER */", filter), schema)
}

// SetJob suspends (or activates) one job. A running job keeps running. It
// returns whether the job's suspension changed, and ErrJobNotFound (wrapped,
// naming the id) when there is no such job. A finished job is left alone.
func SetJob(ctx context.Context, db DB, schema string, jobID int64, suspend bool) (bool, error) {
	var state string
	err := db.QueryRow(ctx, render(jobStateSQL, schema), jobID).Scan(&state)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, fmt.Errorf("suspension: job %d: %w", jobID, ErrJobNotFound)
	}
	if err != nil {
		return false, fmt.Errorf("suspension: reading job %d: %w", jobID, err)
	}
	if suspend {
		added, err := hold.Add(ctx, db, schema, []int64{jobID}, hold.Suspended)
		return len(added) > 0, err
	}
	removed, err := hold.Remove(ctx, db, schema, []int64{jobID}, hold.Suspended)
	return len(removed) > 0, err
}

// ErrJobNotFound is returned (wrapped) by SetJob for a job that does not
// exist.
var ErrJobNotFound = errors.New("no such job")

// JobDefinitionsOf returns the stored job definitions of process definition
// key.
func JobDefinitionsOf(ctx context.Context, db DB, schema, key string) ([]string, error) {
	rows, err := db.Query(ctx, render(jobDefinitionsSQL, schema), key)
	if err != nil {
		return nil, fmt.Errorf("suspension: listing the job definitions of process definition %q: %w", key, err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("suspension: listing the job definitions of process definition %q: %w", key, err)
	}
	return ids, nil
}

// SuspendedSince returns when target (t, id) was suspended, or nil when it
// is active.
func SuspendedSince(ctx context.Context, db DB, schema string, t TargetType, id string) (*time.Time, error) {
	var since time.Time
	err := db.QueryRow(ctx, render(isSuspendedSQL, schema), string(t), id).Scan(&since)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("suspension: reading the state of %s %q: %w", t, id, err)
	}
	since = since.UTC()
	return &since, nil
}

// Suspended is a suspended target.
type Suspended struct {
	Type  TargetType `json:"type"`
	ID    string     `json:"id"`
	Since time.Time  `json:"since"`
}

// List returns the suspended targets (at most limit), oldest first.
func List(ctx context.Context, db DB, schema string, limit int) ([]Suspended, error) {
	return listAfter(ctx, db, schema, nil, "", limit)
}

// listAfter returns the suspended targets after the target after (nil: from
// the first), only those of type t ("" all), oldest first, at most limit.
func listAfter(ctx context.Context, db DB, schema string, after *Suspended, t TargetType, limit int) ([]Suspended, error) {
	var since *time.Time
	var afterType, afterID string
	if after != nil {
		since, afterType, afterID = &after.Since, string(after.Type), after.ID
	}
	rows, err := db.Query(ctx, render(listSQL, schema), limit, since, afterType, afterID, string(t))
	if err != nil {
		return nil, fmt.Errorf("suspension: listing suspended targets: %w", err)
	}
	list, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Suspended, error) {
		var s Suspended
		err := row.Scan(&s.Type, &s.ID, &s.Since)
		s.Since = s.Since.UTC()
		return s, err
	})
	if err != nil {
		return nil, fmt.Errorf("suspension: listing suspended targets: %w", err)
	}
	return list, nil
}

// InstanceKnown says whether process instance id has a job (in any state)
// or is suspended.
func InstanceKnown(ctx context.Context, db DB, schema, id string) (bool, error) {
	var known bool
	if err := db.QueryRow(ctx, render(instanceExistsSQL, schema), id).Scan(&known); err != nil {
		return false, fmt.Errorf("suspension: looking for process instance %q: %w", id, err)
	}
	return known, nil
}

func verb(suspend bool) string {
	if suspend {
		return "suspending"
	}
	return "activating"
}

func verbing(suspend bool) string { return verb(suspend) }
