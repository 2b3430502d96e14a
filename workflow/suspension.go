package workflow

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/riverqueue/river/rivershared/startstop"
	"github.com/riverqueue/river/rivertype"

	"github.com/riverbpmn/riverbpmn/hold"
	"github.com/riverbpmn/riverbpmn/suspension"
)

// SuspendOpts are the options of suspending or activating a job definition
// or a process definition.
type SuspendOpts struct {
	// IncludeJobs also suspends (activates) the existing unfinished jobs,
	// in batches of suspension.BatchSize jobs per transaction. Without it,
	// only jobs inserted afterwards are affected.
	IncludeJobs bool

	// At, when in the future, schedules the change instead of making it: it
	// is stored and applied when due by one client (the service River runs
	// on its elected leader), even across restarts. Zero means now.
	At time.Time
}

// SuspensionResult reports a suspension or activation.
type SuspensionResult struct {
	suspension.Result

	// ScheduledID is the id of the stored change when SuspendOpts.At was in
	// the future (nothing else was done); 0 otherwise.
	ScheduledID int64 `json:"scheduled_id,omitempty"`
	// ScheduledAt is when the scheduled change is due.
	ScheduledAt *time.Time `json:"scheduled_at,omitempty"`
}

// MaxSuspendedTargets caps how many targets SuspendedTargets and
// ScheduledSuspensions return.
const MaxSuspendedTargets = 10_000

// SuspendJobDefinition suspends job definition jobDefinitionID: its jobs
// inserted from now on, by any insert call of any process, are inserted
// suspended (including inserts under way when this call commits), and with
// IncludeJobs its existing unfinished jobs are suspended too. A suspended job
// is never fetched; a running one finishes its current execution. Suspending
// what is suspended does nothing. An id that is neither declared nor stored
// gives an error naming it that wraps ErrNotFound.
func (e *Engine) SuspendJobDefinition(ctx context.Context, jobDefinitionID string, opts *SuspendOpts) (*SuspensionResult, error) {
	return e.changeDefinition(ctx, suspension.JobDefinition, jobDefinitionID, true, opts)
}

// ActivateJobDefinition activates job definition jobDefinitionID: its new
// jobs are inserted active, and with IncludeJobs its suspended jobs are
// activated, each going back exactly where it was going (available,
// scheduled at its due time, or retryable with its wait).
func (e *Engine) ActivateJobDefinition(ctx context.Context, jobDefinitionID string, opts *SuspendOpts) (*SuspensionResult, error) {
	return e.changeDefinition(ctx, suspension.JobDefinition, jobDefinitionID, false, opts)
}

// SuspendProcessDefinition suspends process definition key: each of its job
// definitions (so their new jobs start suspended) and its new jobs without a
// job definition; with IncludeJobs, its existing jobs too. A key that is
// neither declared (as a process definition or by a job definition) nor
// stored gives an error naming it that wraps ErrNotFound.
func (e *Engine) SuspendProcessDefinition(ctx context.Context, key string, opts *SuspendOpts) (*SuspensionResult, error) {
	return e.changeDefinition(ctx, suspension.ProcessDefinition, key, true, opts)
}

// ActivateProcessDefinition activates process definition key and each of
// its job definitions; with IncludeJobs, its suspended jobs too.
func (e *Engine) ActivateProcessDefinition(ctx context.Context, key string, opts *SuspendOpts) (*SuspensionResult, error) {
	return e.changeDefinition(ctx, suspension.ProcessDefinition, key, false, opts)
}

// SuspendProcessInstance suspends process instance processInstanceID: all
// its jobs, present and future. An instance with no job (in any state) that
// is not suspended gives an error naming it that wraps ErrNotFound.
func (e *Engine) SuspendProcessInstance(ctx context.Context, processInstanceID string) (*SuspensionResult, error) {
	return e.changeInstance(ctx, processInstanceID, true)
}

// ActivateProcessInstance activates process instance processInstanceID and
// all its suspended jobs.
func (e *Engine) ActivateProcessInstance(ctx context.Context, processInstanceID string) (*SuspensionResult, error) {
	return e.changeInstance(ctx, processInstanceID, false)
}

// SuspendJob suspends one job (any job, with or without a job context). A
// running job finishes its current execution and is not run again until
// activated. It returns whether the job was not suspended yet; a finished
// job is left alone. An unknown id gives an error naming it that wraps
// ErrNotFound.
func (e *Engine) SuspendJob(ctx context.Context, jobID int64) (bool, error) {
	return e.changeJob(ctx, jobID, true)
}

// ActivateJob activates one job, whatever suspended it (as in Camunda). The
// job goes back exactly where it was going, unless another reason still holds
// it (package hold). It returns whether the job was suspended.
func (e *Engine) ActivateJob(ctx context.Context, jobID int64) (bool, error) {
	return e.changeJob(ctx, jobID, false)
}

// SuspendedTargets returns the suspended job definitions, process
// definitions and process instances, oldest first.
func (e *Engine) SuspendedTargets(ctx context.Context) ([]suspension.Suspended, error) {
	if e.dbPool == nil {
		return nil, errNoPool
	}
	return suspension.List(ctx, e.dbPool, e.config.Schema, MaxSuspendedTargets)
}

// ScheduledSuspensions returns the suspensions and activations scheduled
// for later and not yet applied, in due order.
func (e *Engine) ScheduledSuspensions(ctx context.Context) ([]suspension.Scheduled, error) {
	if e.dbPool == nil {
		return nil, errNoPool
	}
	return suspension.Pending(ctx, e.dbPool, e.config.Schema, MaxSuspendedTargets)
}

// JobHold returns why a job is held (package hold), read from its metadata:
// nil when it is not held. A suspended job is held for hold.Suspended.
func JobHold(job *rivertype.JobRow) (*hold.State, error) {
	state, err := hold.Of(job.Metadata)
	if err != nil {
		return nil, fmt.Errorf("workflow: job %d: %w", job.ID, err)
	}
	return state, nil
}

// IsJobSuspended says whether a job is suspended, from its metadata.
func IsJobSuspended(job *rivertype.JobRow) bool {
	state, err := hold.Of(job.Metadata)
	return err == nil && state.Has(hold.Suspended)
}

func (e *Engine) changeDefinition(ctx context.Context, t suspension.TargetType, id string, suspend bool, opts *SuspendOpts) (*SuspensionResult, error) {
	if opts == nil {
		opts = &SuspendOpts{}
	}
	if e.dbPool == nil {
		return nil, errNoPool
	}
	if err := e.checkDefinitionKnown(ctx, t, id); err != nil {
		return nil, err
	}
	change := suspension.Change{Type: t, ID: id, Suspend: suspend, IncludeJobs: opts.IncludeJobs}
	if !opts.At.IsZero() && opts.At.After(time.Now()) {
		scheduledID, err := suspension.Schedule(ctx, e.dbPool, e.config.Schema, change, opts.At)
		if err != nil {
			return nil, fmt.Errorf("workflow: %w", err)
		}
		at := opts.At.UTC()
		return &SuspensionResult{ScheduledID: scheduledID, ScheduledAt: &at}, nil
	}
	res, err := suspension.Apply(ctx, e.dbPool, e.config.Schema, change)
	if err != nil {
		return nil, fmt.Errorf("workflow: %w", err)
	}
	return &SuspensionResult{Result: *res}, nil
}

// checkDefinitionKnown returns ErrNotFound (wrapped, naming id) for a job
// definition or process definition that is neither declared nor stored, and
// stores the declared job definitions, so that a process definition's
// change (now or when due) finds them all.
func (e *Engine) checkDefinitionKnown(ctx context.Context, t suspension.TargetType, id string) error {
	if err := e.SyncJobDefinitions(ctx); err != nil {
		return err
	}
	switch t {
	case suspension.JobDefinition:
		_, err := e.JobDefinition(ctx, id)
		return err
	case suspension.ProcessDefinition:
		if _, declared := e.defs.processes[id]; declared {
			return nil
		}
		jobDefs, err := suspension.JobDefinitionsOf(ctx, e.dbPool, e.config.Schema, id)
		if err != nil {
			return fmt.Errorf("workflow: %w", err)
		}
		if len(jobDefs) > 0 {
			return nil
		}
		since, err := suspension.SuspendedSince(ctx, e.dbPool, e.config.Schema, t, id)
		if err != nil {
			return fmt.Errorf("workflow: %w", err)
		}
		if since != nil {
			return nil
		}
		return fmt.Errorf("workflow: process definition %q: %w", id, ErrNotFound)
	}
	return t.Validate()
}

func (e *Engine) changeInstance(ctx context.Context, processInstanceID string, suspend bool) (*SuspensionResult, error) {
	if problem := identifierProblem(processInstanceID, true); problem != "" {
		return nil, &JobContextError{Field: "process_instance_id", Value: processInstanceID, Problem: problem}
	}
	if e.dbPool == nil {
		return nil, errNoPool
	}
	known, err := suspension.InstanceKnown(ctx, e.dbPool, e.config.Schema, processInstanceID)
	if err != nil {
		return nil, fmt.Errorf("workflow: %w", err)
	}
	if !known {
		return nil, fmt.Errorf("workflow: process instance %q: %w", processInstanceID, ErrNotFound)
	}
	res, err := suspension.Apply(ctx, e.dbPool, e.config.Schema, suspension.Change{
		Type: suspension.ProcessInstance, ID: processInstanceID, Suspend: suspend, IncludeJobs: true,
	})
	if err != nil {
		return nil, fmt.Errorf("workflow: %w", err)
	}
	return &SuspensionResult{Result: *res}, nil
}

func (e *Engine) changeJob(ctx context.Context, jobID int64, suspend bool) (bool, error) {
	if e.dbPool == nil {
		return false, errNoPool
	}
	changed, err := suspension.SetJob(ctx, e.dbPool, e.config.Schema, jobID, suspend)
	if errors.Is(err, suspension.ErrJobNotFound) {
		return false, fmt.Errorf("workflow: job %d: %w", jobID, ErrNotFound)
	}
	if err != nil {
		return false, fmt.Errorf("workflow: %w", err)
	}
	return changed, nil
}

// suspensionServices returns the service that applies scheduled
// suspensions, for River's elected leader (PluginMaintenanceServices).
func (p *pilot) suspensionServices() []startstop.Service {
	engine := p.driver.engine
	if engine == nil || engine.dbPool == nil {
		return nil
	}
	host, _ := os.Hostname()
	return []startstop.Service{suspension.NewService(engine.dbPool, suspension.ServiceConfig{
		Schema:   engine.config.Schema,
		ClientID: host + "/" + strconv.Itoa(os.Getpid()),
		Interval: engine.config.SuspensionServiceInterval,
	})}
}

// ApplyScheduledSuspension applies the scheduled suspension or activation
// scheduleID (SuspendOpts.At, listed by ScheduledSuspensions) now, before
// it is due, and records it as applied so that it is not applied again when
// due: Camunda's managementService.executeJob on the timer job of a delayed
// suspension (ProcessDefinitionSuspensionTest
// testDelayedSuspendProcessDefinition), for which riverbpmn stores a row
// rather than a job. It returns the change and what it did. An unknown id wraps ErrNotFound; a change applied already is an
// error saying when.
func (e *Engine) ApplyScheduledSuspension(ctx context.Context, scheduleID int64) (*suspension.Scheduled, *SuspensionResult, error) {
	if e.dbPool == nil {
		return nil, nil, errNoPool
	}
	host, _ := os.Hostname()
	s, res, err := suspension.ApplyScheduled(ctx, e.dbPool, e.config.Schema, scheduleID, "manual "+host+"/"+strconv.Itoa(os.Getpid()))
	if errors.Is(err, suspension.ErrScheduleNotFound) {
		return nil, nil, fmt.Errorf("workflow: scheduled suspension %d: %w", scheduleID, ErrNotFound)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("workflow: %w", err)
	}
	return s, &SuspensionResult{Result: *res}, nil
}
