package bulk

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/riverbpmn/riverbpmn/hold"
	"github.com/riverbpmn/riverbpmn/internal/sqltemplate"
	"github.com/riverbpmn/riverbpmn/search"
)

//go:embed sql/*.sql
var sqlFS embed.FS

var (
	incidentsFilterSQL     = stripComments(sqltemplate.MustRead(sqlFS, "sql/incidents_filter.sql"))
	incidentsCountSQL      = withIncidentFilter(sqltemplate.MustRead(sqlFS, "sql/incidents_count.sql"), 2)
	incidentsRetryBatchSQL = withIncidentFilter(sqltemplate.MustRead(sqlFS, "sql/incidents_retry_batch.sql"), 5)
	incidentsNewestSQL     = sqltemplate.MustRead(sqlFS, "sql/incidents_newest.sql")
)

// DefaultBatchSize is how many jobs one batch (one transaction, for a bulk
// retry) takes unless told otherwise.
const DefaultBatchSize = 500

// MaxBatchSize caps a batch.
const MaxBatchSize = 5000

// MaxJobIDs caps an explicit selection.
const MaxJobIDs = 100_000

// MaxErrors caps the error messages a Progress keeps.
const MaxErrors = 10

// Progress is how far a bulk action is: reported after every batch, and
// returned at the end. Cursor (with UpTo, for a retry) resumes it.
type Progress struct {
	// Action names the action (retry, suspend, activate, stop, priority).
	Action string `json:"action"`
	// Total is how many targets the action walks, when known before it
	// starts (-1 for a filter over jobs, counted as it goes).
	Total int `json:"total"`
	// Done counts the targets walked so far; Changed those the action
	// changed (revived, suspended...); Failed those it could not change
	// (Errors keeps the first MaxErrors messages).
	Done    int      `json:"done"`
	Changed int      `json:"changed"`
	Failed  int      `json:"failed"`
	Errors  []string `json:"errors,omitempty"`
	// Batches counts the batches run.
	Batches int `json:"batches"`
	// Cursor is where the next batch begins (an incident id for a retry, a
	// job id otherwise); UpTo bounds a retry (the newest incident when it
	// began). Pass them back to resume after an interruption.
	Cursor int64 `json:"cursor"`
	UpTo   int64 `json:"up_to,omitempty"`
	// Finished is true once every target was walked.
	Finished bool `json:"finished"`
}

func (p *Progress) fail(msg string) {
	p.Failed++
	if len(p.Errors) < MaxErrors {
		p.Errors = append(p.Errors, msg)
	}
}

// DB is what the bulk retry runs on: pgxpool.Pool has it.
type DB interface {
	hold.DB
	Begin(ctx context.Context) (pgx.Tx, error)
}

// Incidents selects the open incidents a bulk retry revives: those of
// JobIDs (nil: every job), of job definition JobDefinitionID and process
// instance id prefix InstancePrefix (empty: any).
type Incidents struct {
	JobIDs          []int64 `json:"job_ids,omitempty"`
	JobDefinitionID string  `json:"job_definition_id,omitempty"`
	InstancePrefix  string  `json:"instance_prefix,omitempty"`
	// ActivityID keeps incidents of that activity; ErrorContains those
	// whose message contains it (case-insensitive); OpenedBefore those
	// opened before it (zero: any); ProcessDefinitionKey and TenantID those
	// whose job's context names them.
	ActivityID           string    `json:"activity_id,omitempty"`
	ErrorContains        string    `json:"error_contains,omitempty"`
	OpenedBefore         time.Time `json:"opened_before,omitzero"`
	ProcessDefinitionKey string    `json:"process_definition_key,omitempty"`
	TenantID             string    `json:"tenant_id,omitempty"`
}

// IncidentArgs are an Incidents selection as the incident statements take
// it (sql/incidents_*.sql and the engine's incident listing): the job ids
// (nil: any), then job definition, instance LIKE prefix, activity, error
// ILIKE pattern, opened before, process definition and tenant (nil: any).
func (sel *Incidents) IncidentArgs() []any {
	ids, jobDef, prefix := sel.args()
	opt := func(s string) *string {
		if s == "" {
			return nil
		}
		return &s
	}
	var errorPattern *string
	if sel.ErrorContains != "" {
		p := "%" + likeEscape(sel.ErrorContains) + "%"
		errorPattern = &p
	}
	var before *time.Time
	if !sel.OpenedBefore.IsZero() {
		before = &sel.OpenedBefore
	}
	return []any{ids, jobDef, prefix, opt(sel.ActivityID), errorPattern, before, opt(sel.ProcessDefinitionKey), opt(sel.TenantID)}
}

// args are the selection as sql/incidents_*.sql take it: the job ids (nil:
// every job), the job definition and the LIKE pattern of the instance
// prefix (nil: any).
func (sel *Incidents) args() (ids []int64, jobDef, prefix *string) {
	if sel.JobIDs != nil {
		ids = sel.JobIDs
	}
	if sel.JobDefinitionID != "" {
		jobDef = &sel.JobDefinitionID
	}
	if sel.InstancePrefix != "" {
		p := LikePrefix(sel.InstancePrefix)
		prefix = &p
	}
	return ids, jobDef, prefix
}

// incidentFilterParams are the parameters of sql/incidents_filter.sql, in
// the order of IncidentArgs.
var incidentFilterParams = []string{"ids", "job_definition", "instance_prefix", "activity", "error", "opened_before", "process_definition", "tenant"}

// IncidentFilterSQL is the incident filter (sql/incidents_filter.sql) with
// its parameters numbered from $first, for a statement that passes
// IncidentArgs there.
func IncidentFilterSQL(first int) string {
	pairs := make([]string, 0, 2*len(incidentFilterParams))
	for i, name := range incidentFilterParams {
		pairs = append(pairs, "$"+name+"::", fmt.Sprintf("$%d::", first+i))
	}
	return strings.NewReplacer(pairs...).Replace(incidentsFilterSQL)
}

func withIncidentFilter(tmpl string, first int) string {
	return strings.ReplaceAll(tmpl, "/* FILTER */", "("+IncidentFilterSQL(first)+")")
}

// stripComments drops a statement file's comment lines.
func stripComments(sql string) string {
	var lines []string
	for _, line := range strings.Split(sql, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "--") && strings.TrimSpace(line) != "" {
			lines = append(lines, line)
		}
	}
	return strings.Join(lines, "\n")
}

func likeEscape(s string) string {
	return strings.NewReplacer(`\\`, `\\\\`, `%`, `\\%`, `_`, `\\_`).Replace(s)
}

// CountIncidents counts the open incidents sel selects: what a bulk retry
// begun now would walk.
func CountIncidents(ctx context.Context, db DB, schema string, sel *Incidents) (int64, error) {
	if sel == nil {
		sel = &Incidents{}
	}
	var upTo, open int64
	if err := db.QueryRow(ctx, sqltemplate.Render(incidentsNewestSQL, schema)).Scan(&upTo); err != nil {
		return 0, fmt.Errorf("bulk: reading the newest incident: %w", err)
	}
	if err := db.QueryRow(ctx, sqltemplate.Render(incidentsCountSQL, schema), append([]any{upTo}, sel.IncidentArgs()...)...).Scan(&open); err != nil {
		return 0, fmt.Errorf("bulk: counting incidents: %w", err)
	}
	return open, nil
}

// RetryOpts configure RetryIncidents.
type RetryOpts struct {
	// Retries is what each revived job gets (at least 1).
	Retries int
	// BatchSize is how many incidents one transaction takes (0:
	// DefaultBatchSize).
	BatchSize int
	// Resume continues an interrupted retry from its last Progress (its
	// Cursor and UpTo); nil starts a new one.
	Resume *Progress
	// OnProgress is called after each batch, with the progress so far.
	OnProgress func(Progress)
}

// RetryIncidents gives every job of the selected open incidents opts.Retries
// retries, in batches of opts.BatchSize incidents, one short transaction
// each (sql/incidents_retry_batch.sql): no lock outlives its batch. It walks
// the incidents open when it began (up to the newest incident id then), in
// id order; a job that is no longer discarded is left alone, so running it
// again, or resuming it after an interruption (ctx cancelled, process
// killed), revives each job once. On an error it returns the progress so
// far with the error.
func RetryIncidents(ctx context.Context, db DB, schema string, sel *Incidents, opts *RetryOpts) (*Progress, error) {
	if sel == nil {
		sel = &Incidents{}
	}
	if opts.Retries < 1 || opts.Retries > 32767 {
		return nil, fmt.Errorf("bulk: retries %d is out of range: 1 to 32767", opts.Retries)
	}
	batch, err := batchSize(opts.BatchSize)
	if err != nil {
		return nil, err
	}
	if len(sel.JobIDs) > MaxJobIDs {
		return nil, fmt.Errorf("bulk: %d job ids, more than %d", len(sel.JobIDs), MaxJobIDs)
	}
	args := sel.IncidentArgs()
	p := &Progress{Action: "retry"}
	if opts.Resume != nil {
		p.Cursor, p.UpTo = opts.Resume.Cursor, opts.Resume.UpTo
		p.Done, p.Changed, p.Batches = opts.Resume.Done, opts.Resume.Changed, opts.Resume.Batches
	} else if err := db.QueryRow(ctx, sqltemplate.Render(incidentsNewestSQL, schema)).Scan(&p.UpTo); err != nil {
		return nil, fmt.Errorf("bulk: reading the newest incident: %w", err)
	}
	var open int
	if err := db.QueryRow(ctx, sqltemplate.Render(incidentsCountSQL, schema), append([]any{p.UpTo}, args...)...).Scan(&open); err != nil {
		return nil, fmt.Errorf("bulk: counting incidents: %w", err)
	}
	p.Total = p.Done + open
	sql := sqltemplate.Render(incidentsRetryBatchSQL, schema)
	for {
		if err := ctx.Err(); err != nil {
			return p, fmt.Errorf("bulk: retry interrupted after %d of %d incidents: %w", p.Done, p.Total, err)
		}
		var (
			last           *int64
			taken, revived int
		)
		err := pgx.BeginFunc(ctx, db, func(tx pgx.Tx) error {
			return tx.QueryRow(ctx, sql, append([]any{p.Cursor, batch, p.UpTo, opts.Retries}, args...)...).Scan(&last, &taken, &revived)
		})
		if err != nil {
			return p, fmt.Errorf("bulk: retry batch after incident %d: %w", p.Cursor, err)
		}
		if last == nil {
			p.Finished = true
			p.Total = p.Done
			report(opts.OnProgress, p)
			return p, nil
		}
		p.Cursor = *last
		p.Done += taken
		p.Changed += revived
		p.Batches++
		report(opts.OnProgress, p)
	}
}

// Jobs selects the jobs of a bulk action: JobIDs, or every job matching
// Filter (package search) when JobIDs is empty.
type Jobs struct {
	JobIDs []int64       `json:"job_ids,omitempty"`
	Filter search.Filter `json:"filter"`
}

// JobOpts configure ForEachJob.
type JobOpts struct {
	// Action names the action in the progress.
	Action string
	// BatchSize is how many jobs one batch takes (0: DefaultBatchSize).
	BatchSize int
	// Resume continues from an earlier Progress (its Cursor); nil starts.
	Resume *Progress
	// OnProgress is called after each batch.
	OnProgress func(Progress)
}

// ForEachJob applies apply to each selected job, one job at a time (each
// change is its own short transaction, apply's), batch after batch, and
// reports progress after each batch. apply returns whether it changed the
// job; an error is counted and kept (the first MaxErrors), and the walk
// goes on. A filter is walked in its order with a keyset cursor, so jobs the
// action moves out of the filter (suspended jobs leave "available") are
// neither skipped nor taken twice; the actions are idempotent (suspending a
// suspended job changes nothing), so running or resuming it again is safe.
func ForEachJob(ctx context.Context, q search.Querier, schema string, sel *Jobs, opts *JobOpts, apply func(ctx context.Context, jobID int64) (bool, error)) (*Progress, error) {
	batch, err := batchSize(opts.BatchSize)
	if err != nil {
		return nil, err
	}
	if sel == nil {
		sel = &Jobs{}
	}
	if len(sel.JobIDs) > MaxJobIDs {
		return nil, fmt.Errorf("bulk: %d job ids, more than %d", len(sel.JobIDs), MaxJobIDs)
	}
	p := &Progress{Action: opts.Action, Total: -1}
	if opts.Resume != nil {
		p.Cursor, p.Done, p.Changed, p.Batches = opts.Resume.Cursor, opts.Resume.Done, opts.Resume.Changed, opts.Resume.Batches
	}
	var next func() ([]int64, error)
	if len(sel.JobIDs) > 0 {
		ids := slices.Clone(sel.JobIDs)
		slices.Sort(ids)
		ids = slices.Compact(ids)
		p.Total = len(ids)
		next = func() ([]int64, error) {
			i, _ := slices.BinarySearch(ids, p.Cursor+1)
			return ids[i:min(i+batch, len(ids))], nil
		}
	} else {
		if err := sel.Filter.Validate(); err != nil {
			return nil, err
		}
		next = func() ([]int64, error) {
			jobs, err := search.Jobs(ctx, q, schema, &sel.Filter, p.Cursor, batch)
			if err != nil {
				return nil, err
			}
			ids := make([]int64, len(jobs))
			for i, j := range jobs {
				ids[i] = j.ID
			}
			return ids, nil
		}
	}
	for {
		if err := ctx.Err(); err != nil {
			return p, fmt.Errorf("bulk: %s interrupted after %d jobs: %w", opts.Action, p.Done, err)
		}
		ids, err := next()
		if err != nil {
			return p, fmt.Errorf("bulk: %s: selecting jobs: %w", opts.Action, err)
		}
		if len(ids) == 0 {
			p.Finished = true
			if p.Total < 0 {
				p.Total = p.Done
			}
			report(opts.OnProgress, p)
			return p, nil
		}
		for _, id := range ids {
			changed, err := apply(ctx, id)
			if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
				return p, fmt.Errorf("bulk: %s interrupted at job %d: %w", opts.Action, id, err)
			}
			switch {
			case err != nil:
				p.fail(fmt.Sprintf("job %d: %v", id, err))
			case changed:
				p.Changed++
			}
			p.Done++
			p.Cursor = id
		}
		p.Batches++
		report(opts.OnProgress, p)
	}
}

func batchSize(n int) (int, error) {
	switch {
	case n == 0:
		return DefaultBatchSize, nil
	case n < 1 || n > MaxBatchSize:
		return 0, fmt.Errorf("bulk: batch size %d is out of range: 1 to %d", n, MaxBatchSize)
	}
	return n, nil
}

func report(f func(Progress), p *Progress) {
	if f != nil {
		c := *p
		c.Errors = slices.Clone(p.Errors)
		f(c)
	}
}

// LikePrefix is a LIKE pattern matching the strings that start with prefix.
func LikePrefix(prefix string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(prefix) + "%"
}
