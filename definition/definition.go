// Package definition manages the job definitions of a riverbpmn schema with
// their run-time state, as Camunda's management service does: List pages
// through them (the stored ones, with their unfinished jobs and open
// incidents counted, and those the engine declares that no client has
// stored yet), Get reads one, Sync stores the declared ones, and
// SetOverridingPriority and ClearOverridingPriority set and clear a
// definition's overriding priority, which every job of the definition
// inserted afterwards gets, by any insert call from any process.
package definition

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/riverbpmn/riverbpmn/internal/listpage"
	"github.com/riverbpmn/riverbpmn/internal/notfound"
	"github.com/riverbpmn/riverbpmn/internal/sqltemplate"
)

//go:embed sql/*.sql
var sqlFS embed.FS

func mustSQL(name string) string { return sqltemplate.MustRead(sqlFS, "sql/"+name) }

var (
	listSQL                  = mustSQL("list.sql")
	storedAmongSQL           = mustSQL("stored_among.sql")
	getSQL                   = mustSQL("get.sql")
	upsertSQL                = mustSQL("upsert.sql")
	lockSQL                  = mustSQL("lock.sql")
	setOverridingPrioritySQL = mustSQL("set_overriding_priority.sql")
	cascadeBatchSQL          = mustSQL("cascade_batch.sql")
)

// AdvisoryLockClass is the first key of the two-key advisory lock that
// serialises setting a job definition's overriding priority with inserting
// its jobs. The second key is hashtext("<river_job oid>:<job definition
// id>"), so that schemas do not contend. The insert trigger of migration
// riverbpmn/002 uses the same keys.
const AdvisoryLockClass = 1380076878

// CascadeBatchSize is how many jobs one transaction of a cascade rewrites.
const CascadeBatchSize = 1000

// MaxIDBytes is the longest job definition id (the limit of
// river_bpmn_job_definition.id), and so of a List cursor.
const MaxIDBytes = 255

// ErrNotFound is wrapped by the errors for a job definition id that is
// neither declared nor stored. It is the same error as every other package's
// ErrNotFound (workflow.ErrNotFound too).
var ErrNotFound = notfound.Err

// DeployedIDError is Sync's error for a declared job definition whose id is
// that of a job definition read from a deployed model.
type DeployedIDError struct {
	// ID is the declared id; Deployment the deployment that holds it.
	ID         string
	Deployment string
}

func (e *DeployedIDError) Error() string {
	return fmt.Sprintf("definition: job definition %q: ID %q is the id of a job definition of deployment %s: declare another id, or use the deployed one", e.ID, e.ID, e.Deployment)
}

// DB is what the handle needs of a database: a pgxpool.Pool, a pgx.Conn or
// a pgx.Tx (where Begin makes a savepoint).
type DB interface {
	Begin(ctx context.Context) (pgx.Tx, error)
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// Declared is a job definition declared in Go (the engine's
// Config.JobDefinitions), as this package needs it.
type Declared struct {
	ID                   string
	ProcessDefinitionKey string
	ActivityID           string
	Kind                 string
}

// Config configures a Definitions handle.
type Config struct {
	// DB is the database.
	DB DB
	// Schema is the schema of the tables; empty means the search_path.
	Schema string
	// Declared are the job definitions declared in Go: Sync stores them,
	// and List and Get show those not stored yet.
	Declared []Declared
	// DeployedAmong, if set, returns which of ids are job definitions of a
	// deployed model, with their deployment (the engine passes its
	// deployments handle's DeployedAmong): Sync refuses to overwrite one.
	DeployedAmong func(ctx context.Context, ids []string) (map[string]string, error)
}

// Definitions is the handle on a schema's job definitions.
type Definitions struct {
	db            DB
	schema        string
	declared      []Declared
	declaredByID  map[string]Declared
	deployedAmong func(ctx context.Context, ids []string) (map[string]string, error)
}

// New returns the handle on the job definitions of config.Schema in
// config.DB.
func New(config Config) *Definitions {
	d := &Definitions{db: config.DB, schema: config.Schema, declared: slices.Clone(config.Declared),
		declaredByID: make(map[string]Declared, len(config.Declared)), deployedAmong: config.DeployedAmong}
	for _, def := range d.declared {
		d.declaredByID[def.ID] = def
	}
	return d
}

// State is a job definition with its run-time state.
type State struct {
	ID                   string `json:"id"`
	ProcessDefinitionKey string `json:"process_definition_key"`
	ActivityID           string `json:"activity_id"`
	Kind                 string `json:"kind"`
	// OverridingPriority is the priority set with SetOverridingPriority;
	// nil when none is set.
	OverridingPriority *int64 `json:"overriding_priority,omitempty"`
	// Suspended says whether the definition is suspended (its own
	// suspension, or its process definition's): its new jobs are then
	// inserted suspended. SuspendedSince is when.
	Suspended      bool       `json:"suspended"`
	SuspendedSince *time.Time `json:"suspended_since,omitempty"`
}

// setSuspended fills Suspended from SuspendedSince, in UTC.
func (s *State) setSuspended() {
	s.Suspended = s.SuspendedSince != nil
	if s.SuspendedSince != nil {
		utc := s.SuspendedSince.UTC()
		s.SuspendedSince = &utc
	}
}

// Summary is a job definition with its run-time state, as List lists it.
type Summary struct {
	State
	// Stored is false for a definition declared in Go but not stored yet
	// (no client on the engine has started; Sync stores it).
	Stored bool `json:"stored"`
	// UnfinishedJobs counts the definition's jobs that are available,
	// scheduled, retryable, pending or running.
	UnfinishedJobs int64 `json:"unfinished_jobs"`
	// OpenIncidents counts the open incidents of the definition's jobs.
	OpenIncidents int64 `json:"open_incidents"`
}

// ListParams selects a page of job definitions, by id: at most Limit (0:
// 100; at most 1000), after the cursor After ("" for the first page, then
// the Next of the previous page).
type ListParams struct {
	Limit int    `json:"limit,omitempty"`
	After string `json:"after,omitempty"`
}

// ListResult is a page of job definitions; Next is the cursor of the next
// page, "" when there is none.
type ListResult struct {
	Items []*Summary `json:"items"`
	Next  string     `json:"next,omitempty"`
}

// List returns one page of the job definitions by id (params nil: the
// first 100): the stored ones with their run-time state, and, in their
// place by id, those declared in Go that are not stored yet (Stored
// false). A bad Limit or After is an error naming the field and the value.
func (d *Definitions) List(ctx context.Context, params *ListParams) (*ListResult, error) {
	if params == nil {
		params = &ListParams{}
	}
	limit, err := listpage.Limit("definition", params.Limit)
	if err != nil {
		return nil, err
	}
	if len(params.After) > MaxIDBytes {
		return nil, fmt.Errorf("definition: ListParams.After %q is not a cursor of this listing (a job definition id, at most %d bytes, as ListResult.Next gives)", params.After, MaxIDBytes)
	}
	rows, err := d.db.Query(ctx, sqltemplate.Render(listSQL, d.schema), params.After, listpage.Fetch(limit))
	if err != nil {
		return nil, fmt.Errorf("definition: listing job definitions: %w", err)
	}
	defs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (*Summary, error) {
		s := &Summary{Stored: true}
		err := row.Scan(&s.ID, &s.ProcessDefinitionKey, &s.ActivityID, &s.Kind, &s.OverridingPriority, &s.UnfinishedJobs, &s.OpenIncidents, &s.SuspendedSince)
		s.setSuspended()
		return s, err
	})
	if err != nil {
		return nil, fmt.Errorf("definition: listing job definitions: %w", err)
	}
	// The declared definitions after the cursor that are not stored take
	// their place by id among the stored ones: the first Fetch(limit) of
	// both are among the stored page and these.
	var ids []string
	for _, def := range d.declared {
		if def.ID > params.After {
			ids = append(ids, def.ID)
		}
	}
	if len(ids) > 0 {
		rows, err := d.db.Query(ctx, sqltemplate.Render(storedAmongSQL, d.schema), ids)
		if err != nil {
			return nil, fmt.Errorf("definition: listing job definitions: %w", err)
		}
		stored, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return nil, fmt.Errorf("definition: listing job definitions: %w", err)
		}
		for _, id := range ids {
			if !slices.Contains(stored, id) {
				def := d.declaredByID[id]
				defs = append(defs, &Summary{State: State{ID: def.ID, ProcessDefinitionKey: def.ProcessDefinitionKey, ActivityID: def.ActivityID, Kind: def.Kind}})
			}
		}
		slices.SortFunc(defs, func(a, b *Summary) int { return strings.Compare(a.ID, b.ID) })
	}
	res := &ListResult{}
	res.Items, res.Next = listpage.Trim(defs, limit, func(s *Summary) string { return s.ID })
	return res, nil
}

// Get returns a job definition with its current overriding priority and
// whether it is suspended. A declared definition not yet stored is
// returned from its declaration, without an override. An id that is
// neither declared nor stored gives an error naming it that wraps
// ErrNotFound.
func (d *Definitions) Get(ctx context.Context, id string) (*State, error) {
	state := &State{}
	err := d.db.QueryRow(ctx, sqltemplate.Render(getSQL, d.schema), id).Scan(
		&state.ID, &state.ProcessDefinitionKey, &state.ActivityID, &state.Kind, &state.OverridingPriority, &state.SuspendedSince)
	state.setSuspended()
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		def, declared := d.declaredByID[id]
		if !declared {
			return nil, fmt.Errorf("definition: reading job definition %q: %w", id, notFound(id))
		}
		return &State{ID: def.ID, ProcessDefinitionKey: def.ProcessDefinitionKey, ActivityID: def.ActivityID, Kind: def.Kind}, nil
	case err != nil:
		return nil, fmt.Errorf("definition: reading job definition %q: %w", id, err)
	}
	return state, nil
}

// Sync stores the declared job definitions, keeping the run-time state of
// those already stored. Clients on the engine's driver do this when they
// start; call it yourself in a process that only inserts. A declared id
// that names a job definition of a deployed model is refused with a
// *DeployedIDError naming the id and the deployment.
func (d *Definitions) Sync(ctx context.Context) error {
	if len(d.declared) == 0 {
		return nil
	}
	var ids, processes, activities, kinds []string
	for _, def := range d.declared {
		ids = append(ids, def.ID)
		processes = append(processes, def.ProcessDefinitionKey)
		activities = append(activities, def.ActivityID)
		kinds = append(kinds, def.Kind)
	}
	if d.deployedAmong != nil {
		// A declaration must not overwrite a job definition read from a model.
		deployed, err := d.deployedAmong(ctx, ids)
		if err != nil {
			return fmt.Errorf("definition: storing job definitions: %w", err)
		}
		for _, id := range ids {
			if dep, ok := deployed[id]; ok {
				return &DeployedIDError{ID: id, Deployment: dep}
			}
		}
	}
	if _, err := d.db.Exec(ctx, sqltemplate.Render(upsertSQL, d.schema), ids, processes, activities, kinds); err != nil {
		return fmt.Errorf("definition: storing job definitions in schema %s (is `riverbpmn migrate up` applied?): %w", schemaName(d.schema), err)
	}
	return nil
}

// CascadeResult reports what a cascade did.
type CascadeResult struct {
	// Rewritten is how many unfinished jobs got the overriding priority.
	Rewritten int64 `json:"rewritten"`
	// Batches is how many transactions it took.
	Batches int `json:"batches"`
	// Duration is how long it took.
	Duration time.Duration `json:"duration"`
}

// SetOverridingPriority gives job definition id the overriding priority p:
// every job of the definition inserted after this call returns gets p, by
// any insert call from any process (the override is applied in the
// inserting transaction, never from a cache). With cascade, every
// unfinished or discarded job of the definition (available, scheduled,
// retryable, pending, running, discarded: a discarded job revived by
// job.Jobs.SetRetries then runs with p) is rewritten to p too, in batches
// of CascadeBatchSize, and the result says what the cascade did (nil
// without cascade); running jobs keep running. The whole int64 range is
// accepted.
//
// An id that is neither declared nor stored gives an error naming it that
// wraps ErrNotFound.
func (d *Definitions) SetOverridingPriority(ctx context.Context, id string, p int64, cascade bool) (*CascadeResult, error) {
	if err := d.setOverridingPriority(ctx, id, &p); err != nil {
		return nil, err
	}
	if !cascade {
		return nil, nil
	}
	return d.cascade(ctx, id)
}

// ClearOverridingPriority removes job definition id's overriding priority.
// Jobs created afterwards get their priority from the declarations again;
// existing jobs are never touched.
func (d *Definitions) ClearOverridingPriority(ctx context.Context, id string) error {
	return d.setOverridingPriority(ctx, id, nil)
}

func (d *Definitions) setOverridingPriority(ctx context.Context, id string, p *int64) error {
	def, declared := d.declaredByID[id]
	err := pgx.BeginFunc(ctx, d.db, func(tx pgx.Tx) error {
		// Waits for inserts of this definition under way; blocks new ones
		// until the override is committed. See migration riverbpmn/002.
		if _, err := tx.Exec(ctx, sqltemplate.Render(lockSQL, d.schema), AdvisoryLockClass, id); err != nil {
			return err
		}
		var got string
		err := tx.QueryRow(ctx, sqltemplate.Render(setOverridingPrioritySQL, d.schema), id, p, def.ProcessDefinitionKey, def.ActivityID, def.Kind, declared).Scan(&got)
		if errors.Is(err, pgx.ErrNoRows) {
			return notFound(id)
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("definition: setting the overriding priority of job definition %q: %w", id, err)
	}
	return nil
}

// cascade rewrites the unfinished jobs of a definition to its current
// overriding priority, CascadeBatchSize jobs per transaction, in id order.
// Jobs inserted after the override committed already have it (the insert
// trigger); jobs inserted before were committed before the override could
// commit (the advisory lock), so one pass over the ids finds them all.
func (d *Definitions) cascade(ctx context.Context, id string) (*CascadeResult, error) {
	start := time.Now()
	res := &CascadeResult{}
	sql := sqltemplate.Render(cascadeBatchSQL, d.schema)
	for lastID := int64(0); ; {
		var scanned, rewritten int64
		if err := d.db.QueryRow(ctx, sql, id, lastID, CascadeBatchSize).Scan(&scanned, &lastID, &rewritten); err != nil {
			return res, fmt.Errorf("definition: cascading the overriding priority of job definition %q (after job %d): %w", id, lastID, err)
		}
		res.Batches++
		res.Rewritten += rewritten
		if scanned < CascadeBatchSize {
			break
		}
	}
	res.Duration = time.Since(start)
	return res, nil
}

func notFound(id string) error {
	return fmt.Errorf("job definition %q: %w", id, ErrNotFound)
}

// schemaName names schema in an error.
func schemaName(schema string) string {
	if schema == "" {
		return "(search_path)"
	}
	return fmt.Sprintf("%q", schema)
}
