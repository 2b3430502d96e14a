package events

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/riverbpmn/riverbpmn/internal/sqltemplate"
)

// DB is what the package needs from a database handle; *pgxpool.Pool and
// pgx.Tx have it.
type DB interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// Status is what happened to a job.
type Status string

// The statuses events report (REGARDS' job events, plus INCIDENT).
const (
	Running   Status = "RUNNING"
	Succeeded Status = "SUCCEEDED"
	Failed    Status = "FAILED"
	Aborted   Status = "ABORTED"
	Incident  Status = "INCIDENT"
)

// Event is one job status change.
type Event struct {
	// ID is the event's id, unique in its schema (at-least-once delivery may
	// repeat an event; the ID says so). Ids increase within a transaction
	// but are not consecutive: the events of one statement are numbered
	// from their outbox row's id, and rows' ids are 1,024 apart.
	ID int64 `json:"id"`
	// Cursor is the event's position; a subscriber that resumes after it
	// gets the events that follow.
	Cursor Cursor `json:"cursor"`
	Status Status `json:"status"`
	JobID  int64  `json:"job_id"`
	Kind   string `json:"kind"`
	Queue  string `json:"queue"`
	// Attempt is the job's attempt when the change happened.
	Attempt int `json:"attempt"`
	// RetriesLeft is set for FAILED: whether the job will run again.
	RetriesLeft *bool `json:"retries_left,omitempty"`
	// Error is the attempt's error, for FAILED and INCIDENT.
	Error string `json:"error,omitempty"`
	// ProcessInstanceID and JobContext come from the job's job context
	// (metadata "bpmn"); empty for a plain River job.
	ProcessInstanceID string          `json:"process_instance_id,omitempty"`
	JobContext        json.RawMessage `json:"job_context,omitempty"`
	// At is when the change happened; CreatedAt when it was recorded.
	At        time.Time `json:"at"`
	CreatedAt time.Time `json:"created_at"`
}

// Cursor is a position in the outbox. The zero Cursor is the beginning.
type Cursor struct {
	// TxID is the 64-bit id of the transaction that wrote the event.
	TxID uint64 `json:"txid"`
	// ID is the event's id.
	ID int64 `json:"id"`
}

// String returns the cursor as "txid:id", the form ParseCursor reads.
func (c Cursor) String() string { return fmt.Sprintf("%d:%d", c.TxID, c.ID) }

// ParseCursor reads a cursor written by Cursor.String.
func ParseCursor(s string) (Cursor, error) {
	tx, id, ok := strings.Cut(s, ":")
	if ok {
		txid, err1 := strconv.ParseUint(tx, 10, 64)
		eid, err2 := strconv.ParseInt(id, 10, 64)
		if err1 == nil && err2 == nil && eid >= 0 {
			return Cursor{TxID: txid, ID: eid}, nil
		}
	}
	return Cursor{}, fmt.Errorf("events: cursor %q is not of the form txid:id (two non-negative integers)", s)
}

func (c Cursor) args() []any { return []any{strconv.FormatUint(c.TxID, 10), c.ID} }

//go:embed sql/*.sql
var sqlFS embed.FS

var (
	enableSQL             = sqltemplate.MustRead(sqlFS, "sql/enable.sql")
	disableSQL            = sqltemplate.MustRead(sqlFS, "sql/disable.sql")
	enabledSQL            = sqltemplate.MustRead(sqlFS, "sql/enabled.sql")
	readSQL               = sqltemplate.MustRead(sqlFS, "sql/read.sql")
	readBackwardSQL       = sqltemplate.MustRead(sqlFS, "sql/read_backward.sql")
	readBackwardInstSQL   = sqltemplate.MustRead(sqlFS, "sql/read_backward_instance.sql")
	countSQL              = sqltemplate.MustRead(sqlFS, "sql/count.sql")
	pendingSQL            = sqltemplate.MustRead(sqlFS, "sql/pending.sql")
	horizonSQL            = sqltemplate.MustRead(sqlFS, "sql/horizon.sql")
	lastSQL               = sqltemplate.MustRead(sqlFS, "sql/last.sql")
	pruneSQL              = sqltemplate.MustRead(sqlFS, "sql/prune.sql")
	pruneCountSQL         = sqltemplate.MustRead(sqlFS, "sql/prune_count.sql")
	prunedSQL             = sqltemplate.MustRead(sqlFS, "sql/pruned.sql")
	subscriptionGetSQL    = sqltemplate.MustRead(sqlFS, "sql/subscription_get.sql")
	subscriptionCreateSQL = sqltemplate.MustRead(sqlFS, "sql/subscription_create.sql")
	subscriptionSaveSQL   = sqltemplate.MustRead(sqlFS, "sql/subscription_save.sql")
	subscriptionDeleteSQL = sqltemplate.MustRead(sqlFS, "sql/subscription_delete.sql")
)

func schemaArg(schema string) any {
	if schema == "" {
		return nil
	}
	return schema
}

// Enable creates the trigger that records events on schema's river_job
// (empty schema: the connection's search_path). It is idempotent. It takes
// a short lock on river_job (as any CREATE TRIGGER does), so Enabled is
// checked first and nothing is done when events are already on.
func Enable(ctx context.Context, db DB, schema string) error {
	on, err := Enabled(ctx, db, schema)
	if err != nil || on {
		return err
	}
	if _, err := db.Exec(ctx, sqltemplate.Render(enableSQL, schema)); err != nil {
		return fmt.Errorf("events: enabling events in schema %s: %w%s", schemaName(schema), err, migrationHint(err))
	}
	return nil
}

// Disable drops the trigger; from then on nothing is recorded and nothing
// is paid. The outbox and the subscriptions are kept.
func Disable(ctx context.Context, db DB, schema string) error {
	if _, err := db.Exec(ctx, sqltemplate.Render(disableSQL, schema)); err != nil {
		return fmt.Errorf("events: disabling events in schema %s: %w", schemaName(schema), err)
	}
	return nil
}

// Enabled says whether events are recorded in schema.
func Enabled(ctx context.Context, db DB, schema string) (bool, error) {
	var on bool
	if err := db.QueryRow(ctx, enabledSQL, schemaArg(schema)).Scan(&on); err != nil {
		return false, fmt.Errorf("events: checking whether events are enabled in schema %s: %w", schemaName(schema), err)
	}
	return on, nil
}

// Read returns at most limit events after cursor, in cursor order, below the
// oldest transaction still running in the database. Fewer than limit does not mean there are no
// more: an event of a transaction still running comes later (see Pending).
func Read(ctx context.Context, db DB, schema string, after Cursor, limit int) ([]Event, error) {
	if limit <= 0 {
		return nil, fmt.Errorf("events: limit must be positive, got %d", limit)
	}
	rows, err := db.Query(ctx, sqltemplate.Render(readSQL, schema), append(after.args(), limit)...)
	if err != nil {
		return nil, fmt.Errorf("events: reading events: %w%s", err, migrationHint(err))
	}
	defer rows.Close()
	return scanEvents(rows, "reading events")
}

// scanEvents reads the events of rows in the columns of read.sql (which
// read_backward_instance.sql returns too), what naming the reading in
// errors.
func scanEvents(rows pgx.Rows, what string) ([]Event, error) {
	var out []Event
	for rows.Next() {
		var (
			ev          Event
			txid        string
			attempt     int16
			errText     *string
			pi          *string
			retriesLeft *bool
			jobContext  []byte
		)
		if err := rows.Scan(&txid, &ev.ID, &ev.Status, &ev.JobID, &ev.Kind, &ev.Queue, &attempt, &retriesLeft,
			&errText, &pi, &jobContext, &ev.At, &ev.CreatedAt); err != nil {
			return nil, fmt.Errorf("events: %s: %w", what, err)
		}
		tx, err := strconv.ParseUint(txid, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("events: %s: transaction id %q: %w", what, txid, err)
		}
		ev.Cursor = Cursor{TxID: tx, ID: ev.ID}
		ev.Attempt, ev.RetriesLeft, ev.Error, ev.ProcessInstanceID = int(attempt), retriesLeft, deref(errText), deref(pi)
		if jobContext != nil {
			ev.JobContext = jobContext
		}
		ev.At, ev.CreatedAt = ev.At.UTC(), ev.CreatedAt.UTC()
		out = append(out, ev)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("events: %s: %w", what, err)
	}
	return out, nil
}

// Page is a page of events read newest first (ReadBackward).
type Page struct {
	// Events are the page's events, newest first.
	Events []Event
	// Older is where the next, older page starts: pass it to ReadBackward
	// as before. Zero when the page is the last.
	Older Cursor
	// More says whether the outbox holds events before Older (for a page
	// of one process instance: events of that instance).
	More bool
}

// BackwardScan is the largest page ReadBackward returns.
const BackwardScan = 10_000

// newest is the cursor after every event: ReadBackward from the newest.
var newest = Cursor{TxID: math.MaxUint64, ID: math.MaxInt64}

// ReadBackward returns at most limit events before the cursor before (nil:
// from the newest event), newest first: the page a person reads, where Read
// is what a subscriber follows. Unlike Read it shows every event committed
// now, whatever transactions still run; so an event of a transaction that
// commits later may appear among events already shown (cursor order is the
// order transactions started in, and a subscriber gets it in that order).
//
// With processInstanceID, only that instance's events, found through the
// outbox's index by process instance (migration riverbpmn/027) however far
// back they are: a page costs about the instance's events it shows. Without,
// a page costs about limit events (plus the rest of the oldest outbox row it
// reads, up to 1,023).
func ReadBackward(ctx context.Context, db DB, schema string, before *Cursor, processInstanceID string, limit int) (*Page, error) {
	if limit <= 0 || limit > BackwardScan {
		return nil, fmt.Errorf("events: limit %d is out of range: 1 to %d", limit, BackwardScan)
	}
	from := newest
	if before != nil {
		from = *before
	}
	if processInstanceID != "" {
		return readBackwardInstance(ctx, db, schema, from, processInstanceID, limit)
	}
	// One event more than asked says whether the page is the last.
	rows, err := db.Query(ctx, sqltemplate.Render(readBackwardSQL, schema), append(from.args(), limit+1, limit+1)...)
	if err != nil {
		return nil, fmt.Errorf("events: reading events backwards: %w%s", err, migrationHint(err))
	}
	defer rows.Close()
	page := &Page{}
	var oldest Cursor
	for rows.Next() {
		var (
			oldestTx                                  string
			more                                      bool
			id, jobID                                 *int64
			txid, status, kind, queue, errText, piStr *string
			attempt                                   *int16
			retriesLeft                               *bool
			jobContext                                []byte
			at, createdAt                             *time.Time
		)
		if err := rows.Scan(&oldestTx, &oldest.ID, &more, &txid, &id, &status, &jobID, &kind, &queue, &attempt,
			&retriesLeft, &errText, &piStr, &jobContext, &at, &createdAt); err != nil {
			return nil, fmt.Errorf("events: reading events backwards: %w", err)
		}
		if oldest.TxID, err = strconv.ParseUint(oldestTx, 10, 64); err != nil {
			return nil, fmt.Errorf("events: reading events backwards: transaction id %q: %w", oldestTx, err)
		}
		page.More = more
		if id == nil {
			continue // no event in the rows looked at
		}
		ev := Event{ID: *id, Status: Status(deref(status)), JobID: *jobID, Kind: deref(kind), Queue: deref(queue),
			Attempt: int(*attempt), RetriesLeft: retriesLeft, Error: deref(errText), ProcessInstanceID: deref(piStr),
			At: at.UTC(), CreatedAt: createdAt.UTC()}
		if jobContext != nil {
			ev.JobContext = jobContext
		}
		tx, err := strconv.ParseUint(*txid, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("events: reading events backwards: transaction id %q: %w", *txid, err)
		}
		ev.Cursor = Cursor{TxID: tx, ID: ev.ID}
		page.Events = append(page.Events, ev)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("events: reading events backwards: %w", err)
	}
	switch {
	case len(page.Events) > limit:
		// More events in the rows looked at: the next page starts after
		// the page's last one.
		page.Events = page.Events[:limit]
		page.Older, page.More = page.Events[limit-1].Cursor, true
	case page.More:
		page.Older = oldest
	}
	return page, nil
}

// readBackwardInstance is ReadBackward for one process instance, through the
// index (read_backward_instance.sql): exact, however far back the events are.
func readBackwardInstance(ctx context.Context, db DB, schema string, from Cursor, processInstanceID string, limit int) (*Page, error) {
	rows, err := db.Query(ctx, sqltemplate.Render(readBackwardInstSQL, schema), append(from.args(), limit+1, processInstanceID)...)
	if err != nil {
		return nil, fmt.Errorf("events: reading the events of process instance %q backwards: %w%s", processInstanceID, err, migrationHint(err))
	}
	defer rows.Close()
	evs, err := scanEvents(rows, fmt.Sprintf("reading the events of process instance %q backwards", processInstanceID))
	if err != nil {
		return nil, err
	}
	page := &Page{Events: evs}
	if len(page.Events) > limit {
		page.Events = page.Events[:limit]
		page.Older, page.More = page.Events[limit-1].Cursor, true
	}
	return page, nil
}

// CountRows is how many outbox rows Count reads at most: with the packed
// rows of a busy system (a hundred events a row or more), millions of
// events; a plain scan of that many small rows takes a fraction of a
// second.
const CountRows = 100_000

// Count returns how many events the outbox holds, only those of
// processInstanceID when it is not empty, reading at most CountRows outbox
// rows: atLeast says the count stopped there.
func Count(ctx context.Context, db DB, schema, processInstanceID string) (n int64, atLeast bool, err error) {
	var pi any
	if processInstanceID != "" {
		pi = processInstanceID
	}
	var rows int64
	if err := db.QueryRow(ctx, sqltemplate.Render(countSQL, schema), pi, CountRows).Scan(&n, &rows); err != nil {
		return 0, false, fmt.Errorf("events: counting events: %w%s", err, migrationHint(err))
	}
	return n, rows >= CountRows, nil
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// Pending says whether an event after cursor exists that Read cannot return
// yet, because the transaction that wrote it (or an older one) was still
// running.
func Pending(ctx context.Context, db DB, schema string, after Cursor) (bool, error) {
	var pending bool
	if err := db.QueryRow(ctx, sqltemplate.Render(pendingSQL, schema), after.args()...).Scan(&pending); err != nil {
		return false, fmt.Errorf("events: checking for pending events: %w", err)
	}
	return pending, nil
}

// Now returns the cursor of "from now on": a subscriber starting there gets
// every event of transactions that had not ended yet, and later ones.
func Now(ctx context.Context, db DB) (Cursor, error) {
	var txid string
	if err := db.QueryRow(ctx, horizonSQL).Scan(&txid); err != nil {
		return Cursor{}, fmt.Errorf("events: reading the transaction horizon: %w", err)
	}
	tx, err := strconv.ParseUint(txid, 10, 64)
	if err != nil {
		return Cursor{}, fmt.Errorf("events: transaction horizon %q: %w", txid, err)
	}
	return Cursor{TxID: tx}, nil
}

// Last returns the cursor of the last event written, committed or not yet
// readable; ok is false when the outbox is empty.
func Last(ctx context.Context, db DB, schema string) (c Cursor, ok bool, err error) {
	var txid string
	err = db.QueryRow(ctx, sqltemplate.Render(lastSQL, schema)).Scan(&txid, &c.ID)
	if errors.Is(err, pgx.ErrNoRows) {
		return Cursor{}, false, nil
	}
	if err != nil {
		return Cursor{}, false, fmt.Errorf("events: reading the last event: %w%s", err, migrationHint(err))
	}
	if c.TxID, err = strconv.ParseUint(txid, 10, 64); err != nil {
		return Cursor{}, false, fmt.Errorf("events: last event: transaction id %q: %w", txid, err)
	}
	return c, true, nil
}

// Less says whether c comes before other in cursor order.
func (c Cursor) Less(other Cursor) bool {
	return c.TxID < other.TxID || (c.TxID == other.TxID && c.ID < other.ID)
}

// DefaultPruneBatch is how many outbox rows one Prune statement deletes
// (each row holds the events of one statement on river_job).
const DefaultPruneBatch = 1_000

// Prune deletes the events written before olderThan, in cursor order (it
// stops at the first event written later), batch outbox rows per statement
// (DefaultPruneBatch if batch <= 0). An outbox row holds the events of one
// statement on river_job, all written at the same time, so they go
// PruneCount returns how many events Prune with olderThan would delete now.
func PruneCount(ctx context.Context, db DB, schema string, olderThan time.Time) (int64, error) {
	var n int64
	if err := db.QueryRow(ctx, sqltemplate.Render(pruneCountSQL, schema), olderThan).Scan(&n); err != nil {
		return 0, fmt.Errorf("events: counting the events to prune: %w%s", err, migrationHint(err))
	}
	return n, nil
}

// together. It returns how many events it deleted.
func Prune(ctx context.Context, db DB, schema string, olderThan time.Time, batch int) (int64, error) {
	if batch <= 0 {
		batch = DefaultPruneBatch
	}
	var total int64
	for {
		var rows, deleted int64
		if err := db.QueryRow(ctx, sqltemplate.Render(pruneSQL, schema), olderThan, batch).Scan(&rows, &deleted); err != nil {
			return total, fmt.Errorf("events: pruning events: %w%s", err, migrationHint(err))
		}
		total += deleted
		if rows < int64(batch) {
			return total, nil
		}
	}
}

// DeleteSubscription forgets a named subscription; it reports whether one
// existed.
func DeleteSubscription(ctx context.Context, db DB, schema, name string) (bool, error) {
	tag, err := db.Exec(ctx, sqltemplate.Render(subscriptionDeleteSQL, schema), name)
	if err != nil {
		return false, fmt.Errorf("events: deleting subscription %q: %w", name, err)
	}
	return tag.RowsAffected() > 0, nil
}

func schemaName(schema string) string {
	if schema == "" {
		return "(search_path)"
	}
	return strconv.Quote(schema)
}

// migrationHint adds what to do when riverbpmn's migration 009 (events) is missing.
func migrationHint(err error) string {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && (pgErr.Code == "42P01" || pgErr.Code == "42883") {
		return " (are riverbpmn's migrations applied? run `riverbpmn migrate up`)"
	}
	return ""
}

var subscriptionsSQL = sqltemplate.MustRead(sqlFS, "sql/subscriptions.sql")

// ErrSubscriptionNotFound is wrapped by GetSubscription's error for a name
// no subscription has.
var ErrSubscriptionNotFound = errors.New("events: no such subscription")

// Subscription is a named subscription's saved position, and how far it is
// behind: what an operator reads to see whether a consumer keeps up.
type Subscription struct {
	// Name is the subscription's name (SubscribeConfig.Name).
	Name string `json:"name"`
	// Cursor is its saved position: the last event it handled (it resumes
	// after it).
	Cursor Cursor `json:"cursor"`
	// UpdatedAt is when the position was last saved (a subscriber saves it
	// after every batch it handled; it stays put while there is nothing to
	// read).
	UpdatedAt time.Time `json:"updated_at"`
	// Behind counts the committed events after Cursor that the outbox still
	// holds: the events the subscriber has yet to handle (0: caught up).
	Behind int64 `json:"behind"`
	// Last is the cursor of the last event written (Last), nil when the
	// outbox is empty.
	Last *Cursor `json:"last,omitempty"`
}

// Subscriptions returns every named subscription with its position and how
// far behind it is, by name.
func Subscriptions(ctx context.Context, db DB, schema string) ([]Subscription, error) {
	return querySubscriptions(ctx, db, schema, nil)
}

// GetSubscription returns the named subscription's position and how far
// behind it is; an unknown name gives an error wrapping
// ErrSubscriptionNotFound.
func GetSubscription(ctx context.Context, db DB, schema, name string) (*Subscription, error) {
	subs, err := querySubscriptions(ctx, db, schema, &name)
	if err != nil {
		return nil, err
	}
	if len(subs) == 0 {
		return nil, fmt.Errorf("%w: %q", ErrSubscriptionNotFound, name)
	}
	return &subs[0], nil
}

func querySubscriptions(ctx context.Context, db DB, schema string, name *string) ([]Subscription, error) {
	rows, err := db.Query(ctx, sqltemplate.Render(subscriptionsSQL, schema), name)
	if err != nil {
		return nil, fmt.Errorf("events: reading subscriptions: %w%s", err, migrationHint(err))
	}
	subs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Subscription, error) {
		var (
			s    Subscription
			txid string
		)
		if err := row.Scan(&s.Name, &txid, &s.Cursor.ID, &s.UpdatedAt, &s.Behind); err != nil {
			return s, err
		}
		s.UpdatedAt = s.UpdatedAt.UTC()
		tx, err := strconv.ParseUint(txid, 10, 64)
		if err != nil {
			return s, fmt.Errorf("subscription %q: transaction id %q: %w", s.Name, txid, err)
		}
		s.Cursor.TxID = tx
		return s, nil
	})
	if err != nil {
		return nil, fmt.Errorf("events: reading subscriptions: %w", err)
	}
	if len(subs) > 0 {
		last, ok, err := Last(ctx, db, schema)
		if err != nil {
			return nil, err
		}
		if ok {
			for i := range subs {
				subs[i].Last = &last
			}
		}
	}
	return subs, nil
}
