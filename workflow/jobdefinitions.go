package workflow

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// AdvisoryLockClassJobDefinition is the first key of the two-key advisory
// lock that serialises setting a job definition's overriding priority with
// inserting its jobs. The second key is hashtext("<river_job oid>:<job
// definition id>"), so that schemas do not contend. The insert trigger of
// migration riverbpmn/002 uses the same keys.
const AdvisoryLockClassJobDefinition = 1380076878

// CascadeBatchSize is how many jobs one transaction of a cascade rewrites.
const CascadeBatchSize = 1000

var (
	jobDefinitionUpsertSQL                = mustReadSQL("job_definition_upsert.sql")
	jobDefinitionSetOverridingPrioritySQL = mustReadSQL("job_definition_set_overriding_priority.sql")
	jobDefinitionCascadeBatchSQL          = mustReadSQL("job_definition_cascade_batch.sql")
	jobDefinitionGetSQL                   = mustReadSQL("job_definition_get.sql")
	jobDefinitionLockSQL                  = mustReadSQL("job_definition_lock.sql")
)

// JobDefinitionState is a job definition as stored, with its run-time state.
type JobDefinitionState struct {
	ID                   string
	ProcessDefinitionKey string
	ActivityID           string
	Kind                 string
	// OverridingPriority is the priority set with SetOverridingJobPriority;
	// nil when none is set.
	OverridingPriority *int64
	// Suspended says whether the definition is suspended
	// (SuspendJobDefinition, or SuspendProcessDefinition of its process):
	// its new jobs are then inserted suspended. SuspendedSince is when.
	Suspended      bool
	SuspendedSince *time.Time
}

// setSuspended fills Suspended from SuspendedSince, in UTC.
func (s *JobDefinitionState) setSuspended() {
	s.Suspended = s.SuspendedSince != nil
	if s.SuspendedSince != nil {
		utc := s.SuspendedSince.UTC()
		s.SuspendedSince = &utc
	}
}

// SyncJobDefinitions stores the declared job definitions, keeping the
// run-time state of those already stored. Clients on the engine's driver do
// this when they start; call it yourself in a process that only inserts.
func (e *Engine) SyncJobDefinitions(ctx context.Context) error {
	if len(e.defs.jobs) == 0 {
		return nil
	}
	if e.dbPool == nil {
		return errNoPool
	}
	var ids, processes, activities, kinds []string
	for _, def := range e.config.JobDefinitions {
		ids = append(ids, def.ID)
		processes = append(processes, def.ProcessDefinitionKey)
		activities = append(activities, def.ActivityID)
		kinds = append(kinds, def.Kind)
	}
	// A declaration must not overwrite a job definition read from a model.
	deployed, err := e.Deployments().DeployedAmong(ctx, ids)
	if err != nil {
		return fmt.Errorf("workflow: storing job definitions: %w", err)
	}
	for _, id := range ids {
		if dep, ok := deployed[id]; ok {
			return &DefinitionError{Definition: fmt.Sprintf("job definition %q", id), Field: "ID", Value: id,
				Problem: fmt.Sprintf("is the id of a job definition of deployment %s: declare another id, or use the deployed one", dep)}
		}
	}
	if _, err := e.dbPool.Exec(ctx, e.sql(jobDefinitionUpsertSQL), ids, processes, activities, kinds); err != nil {
		return fmt.Errorf("workflow: storing job definitions in schema %s (is `riverbpmn migrate-up` applied?): %w", schemaName(e.config.Schema), err)
	}
	return nil
}

// SetOverridingJobPriority gives job definition jobDefinitionID the
// overriding priority p: every job of the definition inserted after this call
// returns gets p, by any insert call from any process (the override is applied
// in the inserting transaction, never from a cache). With cascade, every
// unfinished or discarded job of the definition (available, scheduled,
// retryable, pending, running, discarded: a discarded job revived by
// SetJobRetries then runs with p) is rewritten to p too, in batches of CascadeBatchSize; running
// jobs keep running. The whole int64 range is accepted.
//
// An id that is neither declared nor stored gives an error naming it that
// wraps ErrNotFound.
func (e *Engine) SetOverridingJobPriority(ctx context.Context, jobDefinitionID string, p int64, cascade bool) error {
	if err := e.setOverridingPriority(ctx, jobDefinitionID, &p); err != nil {
		return err
	}
	if !cascade {
		return nil
	}
	_, err := e.cascadeOverridingPriority(ctx, jobDefinitionID)
	return err
}

// ClearOverridingJobPriority removes job definition jobDefinitionID's
// overriding priority. Jobs created afterwards get their priority from the
// declarations again; existing jobs are never touched.
func (e *Engine) ClearOverridingJobPriority(ctx context.Context, jobDefinitionID string) error {
	return e.setOverridingPriority(ctx, jobDefinitionID, nil)
}

func (e *Engine) setOverridingPriority(ctx context.Context, jobDefinitionID string, p *int64) error {
	if e.dbPool == nil {
		return errNoPool
	}
	def, declared := e.defs.jobs[jobDefinitionID]
	var process, activity, kind string
	if declared {
		process, activity, kind = def.ProcessDefinitionKey, def.ActivityID, def.Kind
	}
	err := pgx.BeginFunc(ctx, e.dbPool, func(tx pgx.Tx) error {
		// Waits for inserts of this definition under way; blocks new ones
		// until the override is committed. See migration riverbpmn/002.
		if _, err := tx.Exec(ctx, e.sql(jobDefinitionLockSQL), AdvisoryLockClassJobDefinition, jobDefinitionID); err != nil {
			return err
		}
		var id string
		err := tx.QueryRow(ctx, e.sql(jobDefinitionSetOverridingPrioritySQL), jobDefinitionID, p, process, activity, kind, declared).Scan(&id)
		if errors.Is(err, pgx.ErrNoRows) {
			return jobDefinitionNotFound(jobDefinitionID)
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("workflow: setting the overriding priority of job definition %q: %w", jobDefinitionID, err)
	}
	return nil
}

// CascadeResult reports what a cascade did.
type CascadeResult struct {
	// Rewritten is how many unfinished jobs got the overriding priority.
	Rewritten int64
	// Batches is how many transactions it took.
	Batches int
	// Duration is how long it took.
	Duration time.Duration
}

// cascadeOverridingPriority rewrites the unfinished jobs of a definition to
// its current overriding priority, CascadeBatchSize jobs per transaction, in
// id order. Jobs inserted after the override committed already have it (the
// insert trigger); jobs inserted before were committed before the override
// could commit (the advisory lock), so one pass over the ids finds them all.
func (e *Engine) cascadeOverridingPriority(ctx context.Context, jobDefinitionID string) (*CascadeResult, error) {
	start := time.Now()
	res := &CascadeResult{}
	sql := e.sql(jobDefinitionCascadeBatchSQL)
	for lastID := int64(0); ; {
		var scanned, rewritten int64
		if err := e.dbPool.QueryRow(ctx, sql, jobDefinitionID, lastID, CascadeBatchSize).Scan(&scanned, &lastID, &rewritten); err != nil {
			return res, fmt.Errorf("workflow: cascading the overriding priority of job definition %q (after job %d): %w", jobDefinitionID, lastID, err)
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

// JobDefinition returns a job definition with its current overriding
// priority and whether it is suspended. A declared definition not yet stored (no client has started)
// is returned from its declaration, without an override.
func (e *Engine) JobDefinition(ctx context.Context, jobDefinitionID string) (*JobDefinitionState, error) {
	if e.dbPool == nil {
		return nil, errNoPool
	}
	state := &JobDefinitionState{}
	err := e.dbPool.QueryRow(ctx, e.sql(jobDefinitionGetSQL), jobDefinitionID).Scan(
		&state.ID, &state.ProcessDefinitionKey, &state.ActivityID, &state.Kind, &state.OverridingPriority, &state.SuspendedSince)
	state.setSuspended()
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		def, declared := e.defs.jobs[jobDefinitionID]
		if !declared {
			return nil, fmt.Errorf("workflow: reading job definition %q: %w", jobDefinitionID, jobDefinitionNotFound(jobDefinitionID))
		}
		return &JobDefinitionState{ID: def.ID, ProcessDefinitionKey: def.ProcessDefinitionKey, ActivityID: def.ActivityID, Kind: def.Kind}, nil
	case err != nil:
		return nil, fmt.Errorf("workflow: reading job definition %q: %w", jobDefinitionID, err)
	}
	return state, nil
}

func jobDefinitionNotFound(id string) error {
	return fmt.Errorf("job definition %q: %w", id, ErrNotFound)
}

// sql renders one of our SQL files for the engine's schema.
func (e *Engine) sql(tmpl string) string { return renderSQL(tmpl, e.config.Schema) }
