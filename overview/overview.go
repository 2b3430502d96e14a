package overview

import (
	"context"
	"embed"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/riverbpmn/riverbpmn/internal/sqltemplate"
)

//go:embed sql/*.sql
var sqlFS embed.FS

var (
	definitionsSQL      = sqltemplate.MustRead(sqlFS, "sql/definitions.sql")
	heldSQL             = sqltemplate.MustRead(sqlFS, "sql/held.sql")
	waitingOnKeySQL     = sqltemplate.MustRead(sqlFS, "sql/waiting_on_key.sql")
	incidentsOpenSQL    = sqltemplate.MustRead(sqlFS, "sql/incidents_open.sql")
	queuesSQL           = sqltemplate.MustRead(sqlFS, "sql/queues.sql")
	unrecordedQueuesSQL = sqltemplate.MustRead(sqlFS, "sql/unrecorded_queues.sql")
	throughputSQL       = sqltemplate.MustRead(sqlFS, "sql/throughput.sql")
	incidentsOpenedSQL  = sqltemplate.MustRead(sqlFS, "sql/incidents_opened.sql")
)

// DB runs the statements: pgxpool.Pool, pgx.Conn and pgx.Tx have it.
type DB interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// Row is one process definition and job definition ("" for jobs without
// one: plain River jobs) with its jobs by state.
type Row struct {
	ProcessDefinition string `json:"process_definition"`
	JobDefinition     string `json:"job_definition"`
	// Jobs in River's states.
	Available int64 `json:"available"`
	Scheduled int64 `json:"scheduled"`
	Retryable int64 `json:"retryable"`
	Running   int64 `json:"running"`
	Pending   int64 `json:"pending"`
	// Failed are the discarded jobs River still keeps (they ran out of
	// attempts or were discarded).
	Failed int64 `json:"failed"`
	// WaitingOnKey are available exclusive jobs whose key another job holds.
	WaitingOnKey int64 `json:"waiting_on_key"`
	// Held counts the held jobs by reason (package hold); Suspended is
	// Held["suspended"].
	Held      map[string]int64 `json:"held,omitempty"`
	Suspended int64            `json:"suspended"`
	// Incidents are the open incidents of the job definition.
	Incidents int64 `json:"incidents"`
}

// HeldText lists the reasons the row's jobs are held for, with counts.
func (r *Row) HeldText() string {
	reasons := make([]string, 0, len(r.Held))
	for reason := range r.Held {
		reasons = append(reasons, reason)
	}
	slices.Sort(reasons)
	parts := make([]string, len(reasons))
	for i, reason := range reasons {
		parts[i] = fmt.Sprintf("%s %d", reason, r.Held[reason])
	}
	return strings.Join(parts, ", ")
}

// Queue is River's record of a queue, or a queue with jobs River has no
// record of (Recorded false), with its unfinished jobs.
type Queue struct {
	Name     string     `json:"name"`
	Recorded bool       `json:"recorded"`
	PausedAt *time.Time `json:"paused_at,omitempty"`
	// ReportedAt is the queue's last report by a client working it;
	// Worked whether it is recent (within workedWithin).
	ReportedAt *time.Time `json:"reported_at,omitempty"`
	Worked     bool       `json:"worked"`
	Available  int64      `json:"available"`
	Running    int64      `json:"running"`
	// Waiting are its scheduled, retryable and pending jobs.
	Waiting int64 `json:"waiting"`
}

// Bucket is one time bucket of the charts.
type Bucket struct {
	Start           time.Time `json:"start"`
	Completed       int64     `json:"completed"`
	Failed          int64     `json:"failed"`
	IncidentsOpened int64     `json:"incidents_opened"`
}

// Overview is what the overview page shows.
type Overview struct {
	Rows []*Row `json:"rows"`
	// Total sums the rows.
	Total   Row       `json:"total"`
	Queues  []*Queue  `json:"queues"`
	Buckets []*Bucket `json:"buckets"`
	// Since and Step are the charts' window and bucket width.
	Since time.Time     `json:"since"`
	Step  time.Duration `json:"step"`
}

// Options configure Read.
type Options struct {
	// Since and Step are the charts' window and bucket width.
	Since time.Time
	Step  time.Duration
	// RootScope is true when the exclusive scope in force is the root
	// process instance (the key of a job is its root's id).
	RootScope bool
	// WorkedWithin is how recent a queue's report must be for a client to
	// be taken as working it.
	WorkedWithin time.Duration
}

// Read reads the overview of schema.
func Read(ctx context.Context, db DB, schema string, opts *Options) (*Overview, error) {
	if opts.Step <= 0 {
		return nil, fmt.Errorf("overview: step %s must be positive", opts.Step)
	}
	o := &Overview{Since: opts.Since.UTC(), Step: opts.Step}
	rows := map[[2]string]*Row{}
	row := func(def, jobDef string) *Row {
		k := [2]string{def, jobDef}
		if r, ok := rows[k]; ok {
			return r
		}
		r := &Row{ProcessDefinition: def, JobDefinition: jobDef}
		rows[k] = r
		return r
	}
	q := func(what, sql string, args []any, scan func(pgx.Rows) error) error {
		r, err := db.Query(ctx, sqltemplate.Render(sql, schema), args...)
		if err != nil {
			return fmt.Errorf("overview: reading %s: %w", what, err)
		}
		defer r.Close()
		for r.Next() {
			if err := scan(r); err != nil {
				return fmt.Errorf("overview: reading %s: %w", what, err)
			}
		}
		if err := r.Err(); err != nil {
			return fmt.Errorf("overview: reading %s: %w", what, err)
		}
		return nil
	}
	err := q("jobs by definition", definitionsSQL, nil, func(r pgx.Rows) error {
		var (
			def, jobDef, state string
			n                  int64
		)
		if err := r.Scan(&def, &jobDef, &state, &n); err != nil {
			return err
		}
		x := row(def, jobDef)
		switch state {
		case "available":
			x.Available = n
		case "scheduled":
			x.Scheduled = n
		case "retryable":
			x.Retryable = n
		case "running":
			x.Running = n
		case "pending":
			x.Pending = n
		case "discarded":
			x.Failed = n
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = q("held jobs", heldSQL, nil, func(r pgx.Rows) error {
		var (
			def, jobDef, reason string
			n                   int64
		)
		if err := r.Scan(&def, &jobDef, &reason, &n); err != nil {
			return err
		}
		x := row(def, jobDef)
		if x.Held == nil {
			x.Held = map[string]int64{}
		}
		x.Held[reason] = n
		if reason == "suspended" {
			x.Suspended = n
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = q("jobs waiting on a key", waitingOnKeySQL, []any{opts.RootScope}, func(r pgx.Rows) error {
		var (
			def, jobDef string
			n           int64
		)
		if err := r.Scan(&def, &jobDef, &n); err != nil {
			return err
		}
		row(def, jobDef).WaitingOnKey = n
		return nil
	})
	if err != nil {
		return nil, err
	}
	incidents := map[string]int64{}
	err = q("open incidents", incidentsOpenSQL, nil, func(r pgx.Rows) error {
		var (
			jobDef string
			n      int64
		)
		if err := r.Scan(&jobDef, &n); err != nil {
			return err
		}
		incidents[jobDef] = n
		return nil
	})
	if err != nil {
		return nil, err
	}
	// An incident belongs to a job definition, shown on the rows of that
	// job definition (a job definition has one process definition).
	for jobDef, n := range incidents {
		var x *Row
		for _, r := range rows {
			if r.JobDefinition == jobDef {
				x = r
				break
			}
		}
		if x == nil {
			x = row("", jobDef)
		}
		x.Incidents = n
	}
	for _, r := range rows {
		o.Rows = append(o.Rows, r)
		t := &o.Total
		t.Available += r.Available
		t.Scheduled += r.Scheduled
		t.Retryable += r.Retryable
		t.Running += r.Running
		t.Pending += r.Pending
		t.Failed += r.Failed
		t.WaitingOnKey += r.WaitingOnKey
		t.Suspended += r.Suspended
		t.Incidents += r.Incidents
		for reason, n := range r.Held {
			if t.Held == nil {
				t.Held = map[string]int64{}
			}
			t.Held[reason] += n
		}
	}
	slices.SortFunc(o.Rows, func(a, b *Row) int {
		if c := strings.Compare(a.ProcessDefinition, b.ProcessDefinition); c != 0 {
			return c
		}
		return strings.Compare(a.JobDefinition, b.JobDefinition)
	})

	if o.Queues, err = Queues(ctx, db, schema, opts.WorkedWithin); err != nil {
		return nil, err
	}

	buckets := map[time.Time]*Bucket{}
	for t := o.Since; !t.After(time.Now()); t = t.Add(opts.Step) {
		b := &Bucket{Start: t}
		buckets[t] = b
		o.Buckets = append(o.Buckets, b)
	}
	bucket := func(t time.Time) *Bucket {
		t = t.UTC()
		if b, ok := buckets[t]; ok {
			return b
		}
		b := &Bucket{Start: t}
		buckets[t] = b
		o.Buckets = append(o.Buckets, b)
		return b
	}
	step := fmt.Sprintf("%d microseconds", opts.Step.Microseconds())
	err = q("throughput", throughputSQL, []any{o.Since, step}, func(r pgx.Rows) error {
		var (
			at    time.Time
			state string
			n     int64
		)
		if err := r.Scan(&at, &state, &n); err != nil {
			return err
		}
		if state == "completed" {
			bucket(at).Completed = n
		} else {
			bucket(at).Failed = n
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = q("incidents opened", incidentsOpenedSQL, []any{o.Since, step}, func(r pgx.Rows) error {
		var (
			at time.Time
			n  int64
		)
		if err := r.Scan(&at, &n); err != nil {
			return err
		}
		bucket(at).IncidentsOpened = n
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(o.Buckets, func(a, b *Bucket) int { return a.Start.Compare(b.Start) })
	return o, nil
}

// Queues returns River's queues (river_queue) and the queues with
// unfinished jobs River has no record of, by name, with their unfinished
// jobs, and whether a client reported working each within workedWithin.
func Queues(ctx context.Context, db DB, schema string, workedWithin time.Duration) ([]*Queue, error) {
	var queues []*Queue
	scanAll := func(what, sql string, scan func(pgx.Rows) (*Queue, error)) error {
		rows, err := db.Query(ctx, sqltemplate.Render(sql, schema))
		if err != nil {
			return fmt.Errorf("overview: reading %s: %w", what, err)
		}
		list, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (*Queue, error) { return scan(row.(pgx.Rows)) })
		if err != nil {
			return fmt.Errorf("overview: reading %s: %w", what, err)
		}
		queues = append(queues, list...)
		return nil
	}
	err := scanAll("queues", queuesSQL, func(r pgx.Rows) (*Queue, error) {
		var (
			x             = &Queue{Recorded: true}
			reported, now time.Time
		)
		if err := r.Scan(&x.Name, &x.PausedAt, &reported, &now, &x.Available, &x.Running, &x.Waiting); err != nil {
			return nil, err
		}
		reported = reported.UTC()
		x.ReportedAt, x.Worked = &reported, now.Sub(reported) <= workedWithin
		return x, nil
	})
	if err != nil {
		return nil, err
	}
	err = scanAll("queues without a record", unrecordedQueuesSQL, func(r pgx.Rows) (*Queue, error) {
		x := &Queue{}
		return x, r.Scan(&x.Name, &x.Available, &x.Running, &x.Waiting)
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(queues, func(a, b *Queue) int { return strings.Compare(a.Name, b.Name) })
	return queues, nil
}
