package timer

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/riverbpmn/riverbpmn/internal/notfound"
	"github.com/riverbpmn/riverbpmn/internal/sqltemplate"
)

// MetadataKey is the river_job.metadata key under which a timer job records
// which timer and which occurrence it is: {"timer_id": 7, "occurrence": 3,
// "definition": "R/PT1H"}.
const MetadataKey = "bpmn_timer"

// JobMetadata is the value stored under MetadataKey.
type JobMetadata struct {
	TimerID    int64  `json:"timer_id"`
	Occurrence int64  `json:"occurrence"`
	Definition string `json:"definition"`
	// Template is the encoded Template of the timer's occurrences (a JSON
	// string, so that River's GIN index on metadata takes one entry for
	// it); empty for timers inserted before templates existed, whose
	// occurrences are copies of their predecessor.
	Template string `json:"template,omitempty"`
}

// Template is what was given when a timer was inserted, before the engine
// resolved it: each occurrence is inserted from it, so that it gets the
// settings in force at its creation (the job definition's priority,
// overriding priority or none, retry cycle, and suspension), as in Camunda,
// rather than its predecessor's.
type Template struct {
	// Context is the job context as given (workflow.JobContext's JSON, job
	// type timer).
	Context json.RawMessage `json:"context"`
	// MaxAttempts is the River MaxAttempts asked for (0: none; a retry
	// cycle decides).
	MaxAttempts int `json:"max_attempts,omitempty"`
}

// SchedulerLookAhead is how far ahead River's job scheduler moves scheduled
// jobs to available: its interval (river v0.51.1,
// maintenance.JobSchedulerIntervalDefault, not configurable outside River's
// tests). A job inserted 'scheduled' with a due date before the
// scheduler's next pass waits for that pass, up to this long after its
// due date.
const SchedulerLookAhead = 5 * time.Second

// NearDue is how close to its due date an occurrence is inserted (or moved)
// 'available' rather than 'scheduled': River's fetch takes only available
// jobs whose scheduled_at has passed (and so does every riverbpmn fetch
// plan), so such a job is fetched by the first fetch after its due date,
// as River's scheduler would have made it with its look-ahead. Twice the
// look-ahead, so that an occurrence due just after it is still covered
// when a scheduler pass runs late; later ones are moved in time by the
// scheduler's look-ahead.
const NearDue = 2 * SchedulerLookAhead

// IsNearDue says whether a job due at at, judged at now, is inserted
// 'available' (see NearDue).
func IsNearDue(at, now time.Time) bool { return !at.After(now.Add(NearDue)) }

// Executor runs statements, in a transaction or not: pgx.Tx, pgx.Conn and
// pgxpool.Pool all are one.
type Executor interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// DB is what the Store needs of a database: transactions (pgxpool.Pool,
// pgx.Conn, or a pgx.Tx, where Begin makes a savepoint).
type DB interface {
	Begin(ctx context.Context) (pgx.Tx, error)
}

// ErrNotFound is wrapped by the errors for a timer id that does not exist.
// It is the same error as every other package's ErrNotFound
// (workflow.ErrNotFound too).
var ErrNotFound = notfound.Err

// Store reads and changes timers in river_bpmn_timer and their occurrence
// jobs in river_job.
type Store struct {
	// Schema is the schema of the tables; empty means the search_path.
	Schema string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

//go:embed sql/*.sql
var sqlFS embed.FS

// sql returns the embedded sql/name with the Store's schema filled in.
func (s *Store) sql(name string) string {
	return sqltemplate.Render(sqltemplate.MustRead(sqlFS, "sql/"+name), s.Schema)
}

func (s *Store) now() time.Time {
	if s.Now != nil {
		return s.Now().UTC()
	}
	return time.Now().UTC()
}

// NewTimer is a timer about to be created with Create.
type NewTimer struct {
	Definition Definition
	// Kind and Queue are the River job kind and queue of its occurrences.
	Kind, Queue string
}

// Created is the result of Create: the timer's id and first occurrence.
type Created struct {
	TimerID int64
	First   Occurrence
	// Anchor is the creation time the timer is anchored at.
	Anchor time.Time
}

// Create stores a new timer in tx and returns its id and first occurrence;
// the caller then inserts the first occurrence's job (with JobMetadata
// {TimerID, 1}) and calls Attach. A definition that never fires from now
// on is an error naming it.
func (s *Store) Create(ctx context.Context, tx Executor, t NewTimer) (Created, error) {
	anchor := s.now()
	first, ok := t.Definition.First(anchor)
	if !ok {
		return Created{}, &DefinitionError{Type: t.Definition.Type(), Value: t.Definition.String(),
			Reason: fmt.Sprintf("has no occurrence after %s (or none before year %d)", anchor.Format(time.RFC3339), MaxYear+1)}
	}
	var left *int64
	if first.Left >= 0 {
		left = &first.Left
	}
	var id int64
	if err := tx.QueryRow(ctx, s.sql("timer_create.sql"), string(t.Definition.Type()), t.Definition.String(), anchor, left, t.Kind, t.Queue).Scan(&id); err != nil {
		return Created{}, fmt.Errorf("timer: creating timer %q: %w", t.Definition.String(), err)
	}
	return Created{TimerID: id, First: first, Anchor: anchor}, nil
}

// Identity is what a timer row keeps of its first occurrence's job.
type Identity struct {
	JobID             int64
	Queue             string
	ProcessInstanceID string
	ActivityID        string
	JobDefinitionID   string
}

// Attach records the first occurrence's job of timer id, in the same
// transaction as Create.
func (s *Store) Attach(ctx context.Context, tx Executor, id int64, ident Identity) error {
	_, err := tx.Exec(ctx, s.sql("timer_attach.sql"), id, ident.JobID, ident.ProcessInstanceID, ident.ActivityID, ident.JobDefinitionID, ident.Queue)
	if err != nil {
		return fmt.Errorf("timer: attaching job %d to timer %d: %w", ident.JobID, id, err)
	}
	return nil
}

// UniqueKey is the River unique_key of occurrence n of timer id (n >= 2).
func UniqueKey(id, n int64) []byte {
	return fmt.Appendf(nil, "riverbpmn-timer:%d:%d", id, n)
}

// Why a timer ended (Info.EndReason).
const (
	// EndFinished: a date or duration timer fired, or a cycle passed its
	// last repetition or its end date.
	EndFinished = "finished"
	// EndBeyondMaxYear: the next occurrence of a cycle lies beyond MaxYear.
	EndBeyondMaxYear = "beyond year 9999"
	// EndCancelled: Cancel was called.
	EndCancelled = "cancelled"
)

// FireResult says what a firing did.
type FireResult struct {
	// Created is true when this firing created the next occurrence.
	Created bool
	// NextJobID and Next are the next occurrence's job and due date, when
	// one exists (created now or earlier by another run of this firing).
	NextJobID int64
	Next      time.Time
	// Ended is true when the timer has no further occurrence (now or before).
	Ended bool
}

// Fire is called when occurrence meta.Occurrence of a timer starts to run,
// as job jobID due at dueAt. In one transaction of its own, committed before
// it returns, it creates the next occurrence (a copy of the job, scheduled at
// the next due date after max(now, dueAt)) or ends the timer. It does
// nothing when that was done already, by an earlier attempt of the same
// occurrence or because the timer was cancelled: the timer row is locked,
// and River's unique index refuses a second copy of one occurrence.
//
// With a template (JobMetadata.Template) and insert, the next occurrence is
// inserted by insert from the template (see Template); otherwise it is a
// copy of the firing job. Either way an occurrence due within NearDue is
// inserted 'available'.
func (s *Store) Fire(ctx context.Context, db DB, jobID int64, meta JobMetadata, dueAt time.Time, insert InsertFunc) (FireResult, error) {
	tx, err := db.Begin(ctx)
	if err != nil {
		return FireResult{}, err
	}
	defer func() { _ = tx.Rollback(ctx) }()
	res, err := s.fireTx(ctx, tx, jobID, meta, dueAt, insert)
	if err != nil {
		return FireResult{}, fmt.Errorf("timer: firing occurrence %d of timer %d (job %d): %w", meta.Occurrence, meta.TimerID, jobID, err)
	}
	if err := tx.Commit(ctx); err != nil {
		return FireResult{}, fmt.Errorf("timer: firing occurrence %d of timer %d (job %d): %w", meta.Occurrence, meta.TimerID, jobID, err)
	}
	return res, nil
}

type lockedTimer struct {
	typ        string
	definition string
	anchor     time.Time
	offsetUS   int64
	occurrence int64
	jobID      *int64
	ended      bool
	endReason  *string
}

func (s *Store) lock(ctx context.Context, tx Executor, id int64) (lockedTimer, error) {
	var t lockedTimer
	err := tx.QueryRow(ctx, s.sql("timer_lock.sql"), id).Scan(&t.typ, &t.definition, &t.anchor, &t.offsetUS, &t.occurrence, &t.jobID, &t.ended, &t.endReason)
	if errors.Is(err, pgx.ErrNoRows) {
		return t, fmt.Errorf("timer %d: %w", id, ErrNotFound)
	}
	return t, err
}

// InsertFunc inserts the next occurrence of a timer from its template, in
// tx, through River's client (so that the engine resolves its job
// context), and returns its job id. Fire sets its unique key and, when it
// is near due, makes it available.
type InsertFunc func(ctx context.Context, tx pgx.Tx, next NextOccurrence) (int64, error)

// NextOccurrence is what an InsertFunc inserts.
type NextOccurrence struct {
	// Template is the timer's template.
	Template Template
	// Metadata is the occurrence's timer metadata (MetadataKey).
	Metadata JobMetadata
	// At is its due date.
	At time.Time
	// The predecessor's args, kind, queue, River priority and tags, and its
	// metadata without the job context, the timer metadata, its hold and
	// River's per-run keys: what the occurrence keeps.
	Args      json.RawMessage
	Kind      string
	Queue     string
	Priority  int
	Tags      []string
	OtherMeta json.RawMessage
}

func (s *Store) fireTx(ctx context.Context, tx pgx.Tx, jobID int64, meta JobMetadata, dueAt time.Time, insert InsertFunc) (FireResult, error) {
	t, err := s.lock(ctx, tx, meta.TimerID)
	if errors.Is(err, ErrNotFound) {
		return FireResult{Ended: true}, nil // the timer row was deleted: nothing follows
	}
	if err != nil {
		return FireResult{}, err
	}
	if t.occurrence != meta.Occurrence || t.ended {
		// Done before: by an earlier attempt of this occurrence (the next one
		// exists), or the timer ended (cancelled, or a stale occurrence).
		res := FireResult{Ended: t.ended}
		if t.occurrence > meta.Occurrence && t.jobID != nil {
			res.NextJobID = *t.jobID
		}
		return res, nil
	}
	def, err := Parse(Type(t.typ), t.definition)
	if err != nil {
		return FireResult{}, err
	}
	now := s.now()
	base := now
	if dueAt.After(base) {
		base = dueAt
	}
	next, ok := def.Next(t.anchor, base, time.Duration(t.offsetUS)*time.Microsecond)
	if !ok {
		reason := EndFinished
		if o, ok := def.nextUnbounded(t.anchor, base, time.Duration(t.offsetUS)*time.Microsecond); ok && o.Year() > MaxYear {
			reason = EndBeyondMaxYear
		}
		if _, err := tx.Exec(ctx, s.sql("timer_end.sql"), meta.TimerID, now, reason); err != nil {
			return FireResult{}, err
		}
		return FireResult{Ended: true}, nil
	}
	n := meta.Occurrence + 1
	nextMeta := JobMetadata{TimerID: meta.TimerID, Occurrence: n, Definition: t.definition, Template: meta.Template}
	encoded, err := json.Marshal(nextMeta)
	if err != nil {
		return FireResult{}, err
	}
	key := UniqueKey(meta.TimerID, n)
	created := true
	var nextID int64
	state := "scheduled"
	if IsNearDue(next.At, now) {
		state = "available"
	}
	if meta.Template != "" && insert != nil {
		nextID, created, err = s.insertFromTemplate(ctx, tx, jobID, nextMeta, next.At, key, state == "available", insert)
	} else {
		err = tx.QueryRow(ctx, s.sql("timer_insert_next.sql"), jobID, now, string(encoded), next.At, key, state).Scan(&nextID)
	}
	if errors.Is(err, pgx.ErrNoRows) {
		// Occurrence n exists already (or the firing job is gone).
		created = false
		err = tx.QueryRow(ctx, s.sql("timer_job_by_unique_key.sql"), key).Scan(&nextID)
		if errors.Is(err, pgx.ErrNoRows) {
			return FireResult{}, fmt.Errorf("job %d no longer exists; cannot copy it", jobID)
		}
	}
	if err != nil {
		return FireResult{}, err
	}
	var left *int64
	if next.Left >= 0 {
		left = &next.Left
	}
	if _, err := tx.Exec(ctx, s.sql("timer_advance.sql"), meta.TimerID, n, nextID, left); err != nil {
		return FireResult{}, err
	}
	return FireResult{Created: created, NextJobID: nextID, Next: next.At}, nil
}

// insertFromTemplate inserts occurrence nextMeta.Occurrence with insert,
// unless it exists already (its unique key), then gives it its unique key
// and, near due, the state available. pgx.ErrNoRows when the firing job is
// gone.
func (s *Store) insertFromTemplate(ctx context.Context, tx pgx.Tx, jobID int64, nextMeta JobMetadata, at time.Time, key []byte, nearDue bool, insert InsertFunc) (int64, bool, error) {
	var existing int64
	err := tx.QueryRow(ctx, s.sql("timer_job_by_unique_key.sql"), key).Scan(&existing)
	if err == nil {
		return existing, false, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return 0, false, err
	}
	var tmpl Template
	if err := json.Unmarshal([]byte(nextMeta.Template), &tmpl); err != nil {
		return 0, false, fmt.Errorf("the template of timer %d (%q): %w", nextMeta.TimerID, nextMeta.Template, err)
	}
	next := NextOccurrence{Template: tmpl, Metadata: nextMeta, At: at}
	if err := tx.QueryRow(ctx, s.sql("timer_job_copy_source.sql"), jobID).Scan(&next.Args, &next.Kind, &next.Queue, &next.Priority, &next.Tags, &next.OtherMeta); err != nil {
		return 0, false, err
	}
	id, err := insert(ctx, tx, next)
	if err != nil {
		return 0, false, fmt.Errorf("inserting occurrence %d: %w", nextMeta.Occurrence, err)
	}
	if _, err := tx.Exec(ctx, s.sql("timer_job_mark_next.sql"), id, key, nearDue); err != nil {
		return 0, false, err
	}
	return id, true, nil
}

// MakeAvailableIfNearDue moves job jobID, just inserted 'scheduled' at at,
// to 'available' when it is near due (IsNearDue), in tx, and reports
// whether it did.
func (s *Store) MakeAvailableIfNearDue(ctx context.Context, tx Executor, jobID int64, at time.Time) (bool, error) {
	if !IsNearDue(at, s.now()) {
		return false, nil
	}
	tag, err := tx.Exec(ctx, s.sql("timer_job_near_due.sql"), jobID)
	if err != nil {
		return false, err
	}
	return tag.RowsAffected() == 1, nil
}

// nextUnbounded is Next without the year limit, to tell why a cycle ended.
func (d Definition) nextUnbounded(anchor, base time.Time, offset time.Duration) (time.Time, bool) {
	if d.interval == nil {
		return time.Time{}, false
	}
	o, ok := d.interval.NextOccurrence(anchor.UTC(), base.UTC().Add(-offset))
	if !ok {
		return time.Time{}, false
	}
	if d.until != nil && o.At.After(*d.until) {
		return time.Time{}, false
	}
	return o.At.Add(offset), true
}

// Info describes a timer, for listing.
type Info struct {
	ID         int64  `json:"id"`
	Type       Type   `json:"type"`
	Definition string `json:"definition"`
	// Occurrence is the number of the latest occurrence created (1 = first)
	// and JobID its job, JobState the job's River state.
	Occurrence int64  `json:"occurrence"`
	JobID      int64  `json:"job_id"`
	JobState   string `json:"job_state"`
	// NextDueAt is the due date of the occurrence waiting to fire; nil when
	// none waits (the latest is running or finished).
	NextDueAt *time.Time `json:"next_due_at"`
	// RepetitionsLeft counts the occurrences after the latest one; nil when
	// unbounded (R/..., cron, or a cycle bounded by an end date).
	RepetitionsLeft *int64 `json:"repetitions_left"`
	// RepeatOffset is the sum of the cascaded moves of due dates, added to
	// the later occurrences of an ISO-8601 cycle.
	RepeatOffset time.Duration `json:"repeat_offset_ns"`
	// Anchor is when the timer was created.
	Anchor            time.Time  `json:"anchor"`
	EndedAt           *time.Time `json:"ended_at,omitempty"`
	EndReason         string     `json:"end_reason,omitempty"`
	ProcessInstanceID string     `json:"process_instance_id,omitempty"`
	ActivityID        string     `json:"activity_id,omitempty"`
	JobDefinitionID   string     `json:"job_definition_id,omitempty"`
	Kind              string     `json:"kind"`
	Queue             string     `json:"queue"`
	CreatedAt         time.Time  `json:"created_at"`
}

func scanInfo(row pgx.Row) (*Info, error) {
	var (
		i         Info
		jobID     *int64
		state     *string
		scheduled *time.Time
		offsetUS  int64
		endReason *string
	)
	err := row.Scan(&i.ID, &i.Type, &i.Definition, &i.Occurrence, &jobID, &state, &scheduled,
		&i.RepetitionsLeft, &offsetUS, &i.Anchor, &i.EndedAt, &endReason,
		&i.ProcessInstanceID, &i.ActivityID, &i.JobDefinitionID, &i.Kind, &i.Queue, &i.CreatedAt)
	if err != nil {
		return nil, err
	}
	if jobID != nil {
		i.JobID = *jobID
	}
	if state != nil {
		i.JobState = *state
		switch *state {
		case "available", "scheduled", "retryable", "pending":
			i.NextDueAt = scheduled
		}
	}
	if endReason != nil {
		i.EndReason = *endReason
	}
	utc := func(t *time.Time) *time.Time {
		if t == nil {
			return nil
		}
		u := t.UTC()
		return &u
	}
	i.NextDueAt, i.EndedAt = utc(i.NextDueAt), utc(i.EndedAt)
	i.Anchor, i.CreatedAt = i.Anchor.UTC(), i.CreatedAt.UTC()
	i.RepeatOffset = time.Duration(offsetUS) * time.Microsecond
	return &i, nil
}

// List returns the timers of a process instance, oldest first, at most limit.
func (s *Store) List(ctx context.Context, db Executor, processInstanceID string, limit int) ([]*Info, error) {
	return s.ListPage(ctx, db, processInstanceID, 0, limit)
}

// Get returns one timer, or an error wrapping ErrNotFound.
func (s *Store) Get(ctx context.Context, db Executor, id int64) (*Info, error) {
	i, err := scanInfo(db.QueryRow(ctx, s.sql("timer_select.sql")+" WHERE t.id = $1", id))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("timer %d: %w", id, ErrNotFound)
	}
	return i, err
}

// ErrNotWaiting is wrapped by SetDueDate's error when the timer has no
// occurrence waiting to fire.
var ErrNotWaiting = errors.New("no occurrence waiting to fire")

// SetDueDate moves the due date of the timer's waiting occurrence to due.
// With cascade, an ISO-8601 cycle keeps the move as its repeat offset, so
// every later occurrence is shifted by the same amount; a cron cycle, a date
// and a duration timer are not shifted (Camunda's rule). It returns the
// offset added (0 without cascade).
func (s *Store) SetDueDate(ctx context.Context, db DB, id int64, due time.Time, cascade bool) (time.Duration, error) {
	tx, err := db.Begin(ctx)
	if err != nil {
		return 0, err
	}
	defer func() { _ = tx.Rollback(ctx) }()
	t, err := s.lock(ctx, tx, id)
	if err != nil {
		return 0, err
	}
	if t.jobID == nil {
		return 0, fmt.Errorf("timer %d: %w", id, ErrNotWaiting)
	}
	var (
		state string
		old   time.Time
	)
	if err := tx.QueryRow(ctx, s.sql("timer_job_lock.sql"), *t.jobID).Scan(&state, &old); err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return 0, fmt.Errorf("timer %d: job %d of occurrence %d is gone: %w", id, *t.jobID, t.occurrence, ErrNotWaiting)
		}
		return 0, err
	}
	switch state {
	case "available", "scheduled", "retryable", "pending":
	default:
		return 0, fmt.Errorf("timer %d: occurrence %d (job %d) is %s: %w", id, t.occurrence, *t.jobID, state, ErrNotWaiting)
	}
	due = due.UTC()
	if _, err := tx.Exec(ctx, s.sql("timer_job_set_due.sql"), *t.jobID, due, s.now().Add(NearDue)); err != nil {
		return 0, err
	}
	var shift time.Duration
	if cascade && t.typ == string(TypeCycle) && strings.HasPrefix(t.definition, "R") {
		shift = due.Sub(old).Truncate(time.Microsecond)
		if _, err := tx.Exec(ctx, s.sql("timer_shift_offset.sql"), id, shift.Microseconds()); err != nil {
			return 0, err
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return 0, err
	}
	return shift, nil
}

// Cancel ends the timer's cycle and cancels its occurrences that have not
// started (the waiting one, and earlier ones waiting to be retried). An
// occurrence that is running finishes; it creates no successor. It returns
// the cancelled jobs' ids. Cancelling a cancelled timer does nothing more.
func (s *Store) Cancel(ctx context.Context, db DB, id int64) ([]int64, error) {
	tx, err := db.Begin(ctx)
	if err != nil {
		return nil, err
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := s.lock(ctx, tx, id); err != nil {
		return nil, err
	}
	var open []int64
	if err := tx.QueryRow(ctx, s.sql("timer_open_jobs.sql"), id).Scan(&open); err != nil {
		return nil, err
	}
	now := s.now()
	rows, err := tx.Query(ctx, s.sql("timer_cancel_jobs.sql"), open, now)
	if err != nil {
		return nil, err
	}
	cancelled, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return nil, err
	}
	if _, err := tx.Exec(ctx, s.sql("timer_end.sql"), id, now, EndCancelled); err != nil {
		return nil, err
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, err
	}
	return cancelled, nil
}
