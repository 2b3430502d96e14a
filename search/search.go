package search

import (
	"context"
	"embed"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river/rivertype"

	"github.com/riverbpmn/riverbpmn/internal/sqltemplate"
)

//go:embed sql/*.sql
var sqlFS embed.FS

var (
	jobsSQL      = sqltemplate.MustRead(sqlFS, "sql/jobs.sql")
	countSQL     = sqltemplate.MustRead(sqlFS, "sql/count.sql")
	instancesSQL = sqltemplate.MustRead(sqlFS, "sql/instances.sql")
	settingsSQL  = sqltemplate.MustRead(sqlFS, "sql/page_settings.sql")
	filterSQL    = parseFilters(sqltemplate.MustRead(sqlFS, "sql/filters.sql"))
)

// SparseStates are the states of river_bpmn_job_state_sparse, the partial
// index (state, id) of migration 022.
var SparseStates = []rivertype.JobState{
	rivertype.JobStatePending, rivertype.JobStateScheduled, rivertype.JobStateRetryable,
	rivertype.JobStateDiscarded, rivertype.JobStateCancelled,
}

// MaxLimit caps a page: the 1000 rows a handle's List shows at most
// (job.Jobs.List, instance.Instances.List) and the one more it asks for to
// know whether a further page exists.
const MaxLimit = 1001

// MaxFilterBytes is the longest filter value accepted.
const MaxFilterBytes = 255

// Filter selects jobs (Jobs) or the process instances that have such jobs
// (Instances). The zero value selects everything, newest first.
type Filter struct {
	// States keeps jobs in one of these states; empty for every state.
	States []rivertype.JobState `json:"states,omitempty"`
	// Kind keeps jobs of this kind.
	Kind string `json:"kind,omitempty"`
	// JobDefinitionID, ProcessDefinitionKey and TenantID keep jobs whose
	// job context names them.
	JobDefinitionID      string `json:"job_definition_id,omitempty"`
	ProcessDefinitionKey string `json:"process_definition_key,omitempty"`
	TenantID             string `json:"tenant_id,omitempty"`
	// InstancePrefix keeps jobs whose process instance id starts with it.
	InstancePrefix string `json:"instance_prefix,omitempty"`
	// Held keeps jobs held for this reason (package hold; "suspended" for
	// the suspended ones, which River shows as pending).
	Held string `json:"held,omitempty"`
	// CreatedFrom and CreatedTo keep jobs created at or after CreatedFrom
	// and before CreatedTo (either zero: unbounded).
	CreatedFrom time.Time `json:"created_from,omitzero"`
	CreatedTo   time.Time `json:"created_to,omitzero"`
	// Oldest lists oldest first; the default is newest first.
	Oldest bool `json:"oldest,omitempty"`
}

// Validate names the first bad field and value.
func (f *Filter) Validate() error {
	for _, s := range f.States {
		if !slices.Contains(rivertype.JobStates(), s) {
			return fmt.Errorf("search: state %q is not a job state (%v)", s, rivertype.JobStates())
		}
	}
	for _, v := range []struct{ name, value string }{
		{"kind", f.Kind}, {"job_definition_id", f.JobDefinitionID}, {"process_definition_key", f.ProcessDefinitionKey},
		{"tenant_id", f.TenantID}, {"instance_prefix", f.InstancePrefix}, {"held", f.Held},
	} {
		if len(v.value) > MaxFilterBytes {
			return fmt.Errorf("search: %s is %d bytes long, more than %d", v.name, len(v.value), MaxFilterBytes)
		}
		// PostgreSQL takes neither in a text value.
		if strings.ContainsRune(v.value, 0) {
			return fmt.Errorf("search: %s %q holds a NUL byte", v.name, v.value)
		}
		if !utf8.ValidString(v.value) {
			return fmt.Errorf("search: %s %q is not valid UTF-8", v.name, v.value)
		}
	}
	if !f.CreatedFrom.IsZero() && !f.CreatedTo.IsZero() && !f.CreatedFrom.Before(f.CreatedTo) {
		return fmt.Errorf("search: created_from %s is not before created_to %s", f.CreatedFrom.Format(time.RFC3339), f.CreatedTo.Format(time.RFC3339))
	}
	return nil
}

// Job is one job of a listing.
type Job struct {
	ID          int64              `json:"id"`
	State       rivertype.JobState `json:"state"`
	Kind        string             `json:"kind"`
	Queue       string             `json:"queue"`
	Attempt     int                `json:"attempt"`
	MaxAttempts int                `json:"max_attempts"`
	Priority    int                `json:"priority"`
	CreatedAt   time.Time          `json:"created_at"`
	ScheduledAt time.Time          `json:"scheduled_at"`
	FinalizedAt *time.Time         `json:"finalized_at,omitempty"`
	// The job context's fields (empty without one).
	ProcessInstanceID    string `json:"process_instance_id,omitempty"`
	ProcessDefinitionKey string `json:"process_definition_key,omitempty"`
	ActivityID           string `json:"activity_id,omitempty"`
	JobDefinitionID      string `json:"job_definition_id,omitempty"`
	TenantID             string `json:"tenant_id,omitempty"`
	// LastError is the last attempt's error, at most 300 characters.
	LastError string `json:"last_error,omitempty"`
}

// Instance is one process instance of a listing.
type Instance struct {
	ID                   string `json:"id"`
	ProcessDefinitionKey string `json:"process_definition_key,omitempty"`
	TenantID             string `json:"tenant_id,omitempty"`
	// JobID, JobState and JobCreatedAt are the instance's newest matching
	// job (oldest, with Filter.Oldest): the listing's order and cursor.
	JobID        int64              `json:"job_id"`
	JobState     rivertype.JobState `json:"job_state"`
	JobCreatedAt time.Time          `json:"job_created_at"`
}

// InstanceWindow is how many matching jobs a page of Instances walks, per
// instance it returns: a page of limit instances walks at most
// limit*InstanceWindow jobs (at most MaxInstanceWalk).
const InstanceWindow = 20

// MaxInstanceWalk caps the jobs a page of Instances walks.
const MaxInstanceWalk = 5000

// Querier runs a page in a transaction of its own: pgxpool.Pool,
// pgxpool.Conn, pgx.Conn and pgx.Tx (a savepoint) have it.
type Querier interface {
	Begin(ctx context.Context) (pgx.Tx, error)
}

// query runs sql in a read-only transaction with sql/page_settings.sql's
// settings, and collects its rows with scan.
func query[T any](ctx context.Context, q Querier, sql string, args []any, scan pgx.RowToFunc[T]) ([]T, error) {
	var out []T
	err := pgx.BeginFunc(ctx, q, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, settingsSQL); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, sql, args...)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, scan)
		return err
	})
	return out, err
}

// Jobs returns one page of the jobs of schema matching f, at most limit,
// after the job id cursor (0: the first page; the next page's cursor is the
// last job's id).
func Jobs(ctx context.Context, q Querier, schema string, f *Filter, cursor int64, limit int) ([]*Job, error) {
	sql, args, err := build(jobsSQL, schema, f, cursor, limit, false)
	if err != nil {
		return nil, err
	}
	jobs, err := query(ctx, q, sql, args, func(row pgx.CollectableRow) (*Job, error) {
		var (
			j                                       Job
			state                                   string
			attempt, maxAttempts, priority          int16
			instance, def, activity, jobDef, tenant *string
			lastError                               *string
		)
		if err := row.Scan(&j.ID, &state, &j.Kind, &j.Queue, &attempt, &maxAttempts, &priority,
			&j.CreatedAt, &j.ScheduledAt, &j.FinalizedAt, &instance, &def, &activity, &jobDef, &tenant, &lastError); err != nil {
			return nil, err
		}
		j.State = rivertype.JobState(state)
		j.Attempt, j.MaxAttempts, j.Priority = int(attempt), int(maxAttempts), int(priority)
		j.ProcessInstanceID, j.ProcessDefinitionKey, j.ActivityID = deref(instance), deref(def), deref(activity)
		j.JobDefinitionID, j.TenantID, j.LastError = deref(jobDef), deref(tenant), deref(lastError)
		j.CreatedAt, j.ScheduledAt = j.CreatedAt.UTC(), j.ScheduledAt.UTC()
		return &j, nil
	})
	if err != nil {
		return nil, fmt.Errorf("search: listing jobs: %w", err)
	}
	return jobs, nil
}

// Instances returns one page of the process instances of schema that have a
// job matching f, at most limit, each once on the page, after the job id
// cursor (0: the first page; the next page's cursor is the last instance's
// JobID). The page walks at most limit*InstanceWindow matching jobs (see
// sql/instances.sql): an instance whose matching jobs are far apart can
// appear again on a later page, and a page can hold fewer than limit
// instances while more follow (an empty page is the end). InstancesPage
// says where the next page starts, and whether there is one.
func Instances(ctx context.Context, q Querier, schema string, f *Filter, cursor int64, limit int) ([]*Instance, error) {
	page, err := InstancesPage(ctx, q, schema, f, cursor, limit)
	if err != nil {
		return nil, err
	}
	return page.Instances, nil
}

// InstancePage is one page of process instances and the cursor of the next.
type InstancePage struct {
	// Instances are the page's process instances, as Instances returns them.
	Instances []*Instance `json:"instances"`
	// Next is the cursor of the next page: the last instance's JobID when
	// the page is full, the last job the page walked when it walked its
	// whole window (more may follow), and 0 when the page is the last.
	Next int64 `json:"next,omitempty"`
}

// InstancesPage is Instances with the cursor of the next page. It pages as
// Jobs does: a page that is not full is the last (Next 0) unless it walked
// its whole window of jobs, and a full page names the next, which comes
// back empty only when the instances ran out exactly at its end.
func InstancesPage(ctx context.Context, q Querier, schema string, f *Filter, cursor int64, limit int) (*InstancePage, error) {
	sql, args, err := build(instancesSQL, schema, f, cursor, limit, true)
	if err != nil {
		return nil, err
	}
	var walked struct {
		count    int
		min, max int64
	}
	list, err := query(ctx, q, sql, args, func(row pgx.CollectableRow) (*Instance, error) {
		var (
			in          Instance
			def, tenant *string
			state       string
		)
		if err := row.Scan(&in.JobID, &in.ID, &def, &tenant, &state, &in.JobCreatedAt, &walked.count, &walked.min, &walked.max); err != nil {
			return nil, err
		}
		in.ProcessDefinitionKey, in.TenantID, in.JobState = deref(def), deref(tenant), rivertype.JobState(state)
		in.JobCreatedAt = in.JobCreatedAt.UTC()
		return &in, nil
	})
	if err != nil {
		return nil, fmt.Errorf("search: listing process instances: %w", err)
	}
	page := &InstancePage{Instances: list}
	switch {
	case len(list) == limit:
		page.Next = list[len(list)-1].JobID
	case len(list) > 0 && walked.count == args[1].(int): // the window ran out: more may follow
		page.Next = walked.min
		if f != nil && f.Oldest {
			page.Next = walked.max
		}
	}
	return page, nil
}

// MaxCount bounds Count: it counts at most this many jobs.
const MaxCount = 1_000_000

// Count returns how many jobs of schema match f, counting at most MaxCount
// (a count of MaxCount means "at least that many"): what a bulk action on
// the filter will walk, shown before it runs.
func Count(ctx context.Context, q Querier, schema string, f *Filter) (int64, error) {
	sql, args, err := build(countSQL, schema, f, 0, 1, false)
	if err != nil {
		return 0, err
	}
	args[0] = MaxCount
	n, err := query(ctx, q, sql, args, pgx.RowTo[int64])
	if err != nil {
		return 0, fmt.Errorf("search: counting jobs: %w", err)
	}
	return n[0], nil
}

// SQL returns the statement and arguments Jobs (instances false) or
// Instances (true) runs for f, cursor and limit, for EXPLAIN and
// benchmarks; Jobs and Instances run it after sql/page_settings.sql (no
// parallel workers, no JIT) in the same transaction.
func SQL(schema string, f *Filter, cursor int64, limit int, instances bool) (string, []any, error) {
	tmpl := jobsSQL
	if instances {
		tmpl = instancesSQL
	}
	return build(tmpl, schema, f, cursor, limit, instances)
}

// build renders tmpl for f: the filters, ANDed, their arguments after $1
// (the limit), the direction.
func build(tmpl, schema string, f *Filter, cursor int64, limit int, instances bool) (string, []any, error) {
	if f == nil {
		f = &Filter{}
	}
	if err := f.Validate(); err != nil {
		return "", nil, err
	}
	if limit < 1 || limit > MaxLimit {
		return "", nil, fmt.Errorf("search: limit %d is out of range: 1 to %d", limit, MaxLimit)
	}
	if cursor < 0 {
		return "", nil, fmt.Errorf("search: cursor %d is negative", cursor)
	}
	args := []any{limit}
	if instances {
		args = append(args, min(limit*InstanceWindow, MaxInstanceWalk))
	}
	var preds []string // the filters, over alias t
	add := func(name string, value any) {
		args = append(args, value)
		preds = append(preds, strings.ReplaceAll(filterSQL[name], "$?", "$"+strconv.Itoa(len(args))))
	}
	if len(f.States) > 0 {
		quoted := make([]string, len(f.States))
		for i, s := range f.States {
			quoted[i] = "'" + string(s) + "'" // validated: one of River's states
		}
		preds = append(preds, "t.state IN ("+strings.Join(quoted, ", ")+")")
	}
	if f.Kind != "" {
		add("kind", f.Kind)
	}
	// With only sparse states, their partial index starts the walk and the
	// job context's fields are filters on it (see filters.sql).
	walk := ""
	if len(f.States) > 0 && !slices.ContainsFunc(f.States, func(s rivertype.JobState) bool { return !slices.Contains(SparseStates, s) }) {
		walk = "_walk"
	}
	if f.JobDefinitionID != "" {
		add("job_definition"+walk, f.JobDefinitionID)
	}
	if f.ProcessDefinitionKey != "" {
		add("process_definition"+walk, f.ProcessDefinitionKey)
	}
	if f.TenantID != "" {
		add("tenant"+walk, f.TenantID)
	}
	if f.InstancePrefix != "" {
		add("instance_prefix", likePrefix(f.InstancePrefix))
	}
	if f.Held != "" {
		add("held", f.Held)
	}
	if !f.CreatedFrom.IsZero() {
		add("created_from", f.CreatedFrom)
	}
	if !f.CreatedTo.IsZero() {
		add("created_to", f.CreatedTo)
	}
	direction := "DESC"
	if f.Oldest {
		direction = "ASC"
	}
	if cursor > 0 {
		if f.Oldest {
			add("after", cursor)
		} else {
			add("before", cursor)
		}
	}
	where, alias := "true", ""
	if instances {
		alias = "j."
	}
	if len(preds) > 0 {
		where = strings.ReplaceAll(strings.Join(preds, "\n    AND "), "t.", alias)
	}
	sql := sqltemplate.Render(tmpl, schema, "/* FILTERS */", where, "/* DIRECTION */", direction)
	// The filters hold the schema marker too: render once more.
	return sqltemplate.Render(sql, schema), args, nil
}

// likePrefix is a LIKE pattern matching strings that start with prefix.
func likePrefix(prefix string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return r.Replace(prefix) + "%"
}

// parseFilters reads filters.sql: name to predicate.
func parseFilters(text string) map[string]string {
	out := map[string]string{}
	var name string
	var body []string
	flush := func() {
		if name != "" {
			out[name] = strings.TrimSpace(strings.Join(body, "\n"))
		}
	}
	for _, line := range strings.Split(text, "\n") {
		if n, ok := strings.CutPrefix(line, "-- filter: "); ok {
			flush()
			name, body = strings.TrimSpace(n), nil
			continue
		}
		if strings.HasPrefix(line, "--") || name == "" {
			continue
		}
		body = append(body, line)
	}
	flush()
	return out
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
