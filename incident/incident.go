// Package incident reads the incidents of a riverbpmn schema: the
// operator-facing records, kept in table river_bpmn_incident, that a job
// with a job context ran out of executions and was discarded (Camunda's
// failedJob incident). Incidents are opened and resolved by triggers in the
// transaction that changes the job, so this package only reads them: List
// pages through them as Camunda Cockpit filters them, Groups groups them by
// error, Count counts what a bulk retry would walk. A job's retries are set
// with package job (Jobs.SetRetries), which resolves its incident.
package incident

import (
	"context"
	"embed"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/riverbpmn/riverbpmn/bulk"
	"github.com/riverbpmn/riverbpmn/internal/listpage"
	"github.com/riverbpmn/riverbpmn/internal/notfound"
	"github.com/riverbpmn/riverbpmn/internal/sqltemplate"
)

//go:embed sql/*.sql
var sqlFS embed.FS

func mustSQL(name string) string { return sqltemplate.MustRead(sqlFS, "sql/"+name) }

var (
	listSQL      = mustSQL("list.sql")
	groupsSQL    = mustSQL("groups.sql")
	jobExistsSQL = mustSQL("job_exists.sql")
	openOfJobSQL = mustSQL("open_of_job.sql")
)

// TypeFailedJob is the type of the incident opened when a job with a job
// context runs out of executions and River discards it.
const TypeFailedJob = "failedJob"

// MaxGroups caps how many groups Groups returns.
const MaxGroups = 100

// ErrNotFound is wrapped by List's error for a job that names neither a job
// nor any incident. It is the same error as every other package's
// ErrNotFound (workflow.ErrNotFound too).
var ErrNotFound = notfound.Err

// Incident is an operator-facing record that a job needs attention.
type Incident struct {
	// ID identifies the incident.
	ID int64 `json:"id"`
	// Type is TypeFailedJob.
	Type string `json:"type"`
	// JobID is the River job the incident is about.
	JobID int64 `json:"job_id"`
	// JobDefinitionID, ActivityID and ProcessInstanceID are copied from the
	// job's context when the incident is opened; empty when it has none.
	JobDefinitionID   string `json:"job_definition_id,omitempty"`
	ActivityID        string `json:"activity_id,omitempty"`
	ProcessInstanceID string `json:"process_instance_id,omitempty"`
	// Message is the job's last error (at most 4000 characters); empty if it
	// had none, as when its retries were set to 0 before it ever failed.
	Message string `json:"message,omitempty"`
	// CreatedAt is when the job was discarded.
	CreatedAt time.Time `json:"created_at"`
	// ResolvedAt is when the job left the discarded state (its retries set,
	// River's JobRetry) or was deleted; nil while the incident is open.
	ResolvedAt *time.Time `json:"resolved_at,omitempty"`
}

// Group is the incidents of one error (its first line).
type Group struct {
	Error string    `json:"error"`
	Count int64     `json:"count"`
	First time.Time `json:"first"`
	Last  time.Time `json:"last"`
}

// DB is what the handle needs of a database: a pgxpool.Pool, a pgx.Conn or
// a pgx.Tx.
type DB interface {
	bulk.DB
}

// Config configures an Incidents handle.
type Config struct {
	// DB is the database.
	DB DB
	// Schema is the schema of the tables; empty means the search_path.
	Schema string
}

// Incidents is the handle on a schema's incidents.
type Incidents struct {
	db     DB
	schema string
}

// New returns the handle on the incidents of config.Schema in config.DB.
func New(config Config) *Incidents {
	return &Incidents{db: config.DB, schema: config.Schema}
}

// Filter selects incidents as Camunda Cockpit filters them: the selection
// of a bulk retry (job ids, job definition, activity, process definition,
// tenant, error text, opened before, instance prefix), the incidents of
// one job (JobID, 0: any), open ones only unless Resolved.
type Filter struct {
	bulk.Incidents
	JobID    int64 `json:"job_id,omitempty"`
	Resolved bool  `json:"resolved,omitempty"`
}

// ListParams selects a page of incidents: those Filter keeps, newest first
// unless Oldest, at most Limit (0: 100; at most 1000), after the cursor
// After ("" for the first page, then the Next of the previous page).
type ListParams struct {
	Filter
	Oldest bool   `json:"oldest,omitempty"`
	Limit  int    `json:"limit,omitempty"`
	After  string `json:"after,omitempty"`
}

// ListResult is a page of incidents; Next is the cursor of the next page,
// "" when there is none.
type ListResult struct {
	Items []*Incident `json:"items"`
	Next  string      `json:"next,omitempty"`
}

// List returns one page of the incidents params selects (nil: the first
// 100 open ones, newest first). Incidents are ordered by id, the order they
// were opened in. A params.JobID that names neither a job nor any incident
// (a deleted job keeps its resolved incidents) gives an error naming it that
// wraps ErrNotFound. A bad Limit or After is an error naming the field.
func (i *Incidents) List(ctx context.Context, params *ListParams) (*ListResult, error) {
	if params == nil {
		params = &ListParams{}
	}
	limit, err := listpage.Limit("incident", params.Limit)
	if err != nil {
		return nil, err
	}
	after, err := listpage.ParseID("incident", params.After)
	if err != nil {
		return nil, err
	}
	direction, op := "DESC", "<"
	if params.Oldest {
		direction, op = "ASC", ">"
	}
	job := "$4::bigint = 0"
	if params.JobID != 0 {
		job = "job_id = $4::bigint"
	}
	// The filter names tables too: its markers go in before the schema's.
	sql := sqltemplate.Render(strings.NewReplacer("/* FILTER */", "("+bulk.IncidentFilterSQL(5)+")",
		"/* DIRECTION */", direction, "/* CURSOR */", op, "/* JOB */", job).Replace(listSQL), i.schema)
	what := "listing incidents"
	if params.JobID != 0 {
		what = fmt.Sprintf("listing incidents of job %d", params.JobID)
	}
	args := append([]any{after, listpage.Fetch(limit), params.Resolved, params.JobID}, params.IncidentArgs()...)
	incidents, err := i.query(ctx, what, sql, args...)
	if err != nil {
		return nil, err
	}
	if params.JobID != 0 && len(incidents) == 0 && after == 0 {
		var exists bool
		if err := i.db.QueryRow(ctx, sqltemplate.Render(jobExistsSQL, i.schema), params.JobID).Scan(&exists); err != nil {
			return nil, fmt.Errorf("incident: %s: %w", what, err)
		}
		if !exists {
			return nil, fmt.Errorf("incident: job %d: %w", params.JobID, ErrNotFound)
		}
	}
	res := &ListResult{}
	res.Items, res.Next = listpage.Trim(incidents, limit, func(in *Incident) string { return listpage.ID(in.ID) })
	return res, nil
}

// Groups groups the incidents f selects (nil: the open ones) by the first
// line of their error, the largest group first (at most MaxGroups).
func (i *Incidents) Groups(ctx context.Context, f *Filter) ([]*Group, error) {
	if f == nil {
		f = &Filter{}
	}
	job := "$2::bigint = 0"
	if f.JobID != 0 {
		job = "job_id = $2::bigint"
	}
	sql := sqltemplate.Render(strings.NewReplacer("/* FILTER */", "("+bulk.IncidentFilterSQL(3)+")", "/* JOB */", job).Replace(groupsSQL), i.schema)
	rows, err := i.db.Query(ctx, sql, append([]any{f.Resolved, f.JobID}, f.IncidentArgs()...)...)
	if err != nil {
		return nil, fmt.Errorf("incident: grouping incidents: %w", err)
	}
	groups, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (*Group, error) {
		g := &Group{}
		err := row.Scan(&g.Error, &g.Count, &g.First, &g.Last)
		g.First, g.Last = g.First.UTC(), g.Last.UTC()
		return g, err
	})
	if err != nil {
		return nil, fmt.Errorf("incident: grouping incidents: %w", err)
	}
	return groups, nil
}

// Count returns how many open incidents sel selects (nil: all): what a bulk
// retry begun now would walk.
func (i *Incidents) Count(ctx context.Context, sel *bulk.Incidents) (int64, error) {
	return bulk.CountIncidents(ctx, i.db, i.schema, sel)
}

// Querier runs one statement: a pgxpool.Pool, a pgx.Conn or a pgx.Tx.
type Querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// OpenOf reports whether job jobID of schema has an open incident, on q:
// the pool, or the transaction that changes the job (to see what its
// triggers did).
func OpenOf(ctx context.Context, q Querier, schema string, jobID int64) (bool, error) {
	var open bool
	if err := q.QueryRow(ctx, sqltemplate.Render(openOfJobSQL, schema), jobID).Scan(&open); err != nil {
		return false, fmt.Errorf("incident: reading the incident of job %d: %w", jobID, err)
	}
	return open, nil
}

func (i *Incidents) query(ctx context.Context, what, sql string, args ...any) ([]*Incident, error) {
	rows, err := i.db.Query(ctx, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("incident: %s: %w", what, err)
	}
	incidents, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (*Incident, error) {
		var (
			in                                                      Incident
			jobDefinitionID, activityID, processInstanceID, message *string
		)
		if err := row.Scan(&in.ID, &in.Type, &in.JobID, &jobDefinitionID, &activityID,
			&processInstanceID, &message, &in.CreatedAt, &in.ResolvedAt); err != nil {
			return nil, err
		}
		in.JobDefinitionID = deref(jobDefinitionID)
		in.ActivityID = deref(activityID)
		in.ProcessInstanceID = deref(processInstanceID)
		in.Message = deref(message)
		in.CreatedAt = in.CreatedAt.UTC()
		if in.ResolvedAt != nil {
			resolvedAt := in.ResolvedAt.UTC()
			in.ResolvedAt = &resolvedAt
		}
		return &in, nil
	})
	if err != nil {
		return nil, fmt.Errorf("incident: %s: %w", what, err)
	}
	return incidents, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
