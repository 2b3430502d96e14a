package workflow

import (
	"context"
	"fmt"
	"os"
	"strconv"

	"github.com/riverqueue/river/rivershared/startstop"
	"github.com/riverqueue/river/rivertype"

	"github.com/riverbpmn/riverbpmn/hold"
	"github.com/riverbpmn/riverbpmn/suspension"
)

// SuspendOpts are the options of suspending or activating a job definition
// or a process definition.
//
// Deprecated: use [suspension.Opts].
type SuspendOpts = suspension.Opts

// SuspensionResult reports a suspension or activation.
//
// Deprecated: use [suspension.Outcome].
type SuspensionResult = suspension.Outcome

// MaxSuspendedTargets caps how many targets SuspendedTargets and
// ScheduledSuspensions return.
const MaxSuspendedTargets = 10_000

// Suspensions returns the handle on suspension and activation in the
// engine's schema (package suspension): suspend and activate job
// definitions, process definitions (now or scheduled), process instances
// and jobs; List what is suspended, ListScheduled what is scheduled, and
// ApplyScheduled a scheduled change early. A job definition or process
// definition that is neither declared in Config nor stored gives an error
// naming it that wraps ErrNotFound, as do an unknown process instance and
// job. On an engine without a pool every call fails.
func (e *Engine) Suspensions() *suspension.Suspensions {
	return e.suspensions.get(func() *suspension.Suspensions {
		host, _ := os.Hostname()
		return suspension.New(suspension.HandleConfig{
			DB:              e.db(),
			Schema:          e.config.Schema,
			CheckDefinition: e.checkDefinitionKnown,
			CheckInstance: func(id string) error {
				if problem := identifierProblem(id, true); problem != "" {
					return &JobContextError{Field: "process_instance_id", Value: id, Problem: problem}
				}
				return nil
			},
			NotFound:  ErrNotFound,
			AppliedBy: "manual " + host + "/" + strconv.Itoa(os.Getpid()),
		})
	})
}

// suspensionConfig is Config.Suspension, with the deprecated
// Config.SuspensionServiceInterval when Suspension.ServiceInterval is zero.
func (c *Config) suspensionConfig() suspension.Config {
	s := c.Suspension
	if s.ServiceInterval == 0 {
		s.ServiceInterval = c.SuspensionServiceInterval
	}
	return s
}

// validateSuspension refuses Config.Suspension.ServiceInterval and the
// deprecated Config.SuspensionServiceInterval set to different values.
func validateSuspension(c *Config) error {
	if c.Suspension.ServiceInterval != 0 && c.SuspensionServiceInterval != 0 && c.Suspension.ServiceInterval != c.SuspensionServiceInterval {
		return fmt.Errorf("workflow: Config.Suspension.ServiceInterval (%s) and the deprecated Config.SuspensionServiceInterval (%s) differ: set only Config.Suspension.ServiceInterval",
			c.Suspension.ServiceInterval, c.SuspensionServiceInterval)
	}
	return nil
}

// SuspendJobDefinition suspends job definition jobDefinitionID.
//
// Deprecated: use [Engine.Suspensions] and [suspension.Suspensions.SuspendJobDefinition].
func (e *Engine) SuspendJobDefinition(ctx context.Context, jobDefinitionID string, opts *SuspendOpts) (*SuspensionResult, error) {
	return e.Suspensions().SuspendJobDefinition(ctx, jobDefinitionID, opts)
}

// ActivateJobDefinition activates job definition jobDefinitionID.
//
// Deprecated: use [Engine.Suspensions] and [suspension.Suspensions.ActivateJobDefinition].
func (e *Engine) ActivateJobDefinition(ctx context.Context, jobDefinitionID string, opts *SuspendOpts) (*SuspensionResult, error) {
	return e.Suspensions().ActivateJobDefinition(ctx, jobDefinitionID, opts)
}

// SuspendProcessDefinition suspends process definition key.
//
// Deprecated: use [Engine.Suspensions] and [suspension.Suspensions.SuspendProcessDefinition].
func (e *Engine) SuspendProcessDefinition(ctx context.Context, key string, opts *SuspendOpts) (*SuspensionResult, error) {
	return e.Suspensions().SuspendProcessDefinition(ctx, key, opts)
}

// ActivateProcessDefinition activates process definition key.
//
// Deprecated: use [Engine.Suspensions] and [suspension.Suspensions.ActivateProcessDefinition].
func (e *Engine) ActivateProcessDefinition(ctx context.Context, key string, opts *SuspendOpts) (*SuspensionResult, error) {
	return e.Suspensions().ActivateProcessDefinition(ctx, key, opts)
}

// SuspendProcessInstance suspends process instance processInstanceID.
//
// Deprecated: use [Engine.Suspensions] and [suspension.Suspensions.SuspendProcessInstance].
func (e *Engine) SuspendProcessInstance(ctx context.Context, processInstanceID string) (*SuspensionResult, error) {
	return e.Suspensions().SuspendProcessInstance(ctx, processInstanceID)
}

// ActivateProcessInstance activates process instance processInstanceID.
//
// Deprecated: use [Engine.Suspensions] and [suspension.Suspensions.ActivateProcessInstance].
func (e *Engine) ActivateProcessInstance(ctx context.Context, processInstanceID string) (*SuspensionResult, error) {
	return e.Suspensions().ActivateProcessInstance(ctx, processInstanceID)
}

// SuspendJob suspends one job.
//
// Deprecated: use [Engine.Suspensions] and [suspension.Suspensions.SuspendJob].
func (e *Engine) SuspendJob(ctx context.Context, jobID int64) (bool, error) {
	return e.Suspensions().SuspendJob(ctx, jobID)
}

// ActivateJob activates one job.
//
// Deprecated: use [Engine.Suspensions] and [suspension.Suspensions.ActivateJob].
func (e *Engine) ActivateJob(ctx context.Context, jobID int64) (bool, error) {
	return e.Suspensions().ActivateJob(ctx, jobID)
}

// SuspendedTargets returns the suspended targets, oldest first (at most
// MaxSuspendedTargets).
//
// Deprecated: use [Engine.Suspensions] and [suspension.Suspensions.List].
func (e *Engine) SuspendedTargets(ctx context.Context) ([]suspension.Suspended, error) {
	return collectPages(func(after string) ([]suspension.Suspended, string, error) {
		res, err := e.Suspensions().List(ctx, &suspension.ListParams{Limit: 1000, After: after})
		if err != nil {
			return nil, "", err
		}
		return res.Items, res.Next, nil
	}, MaxSuspendedTargets)
}

// ScheduledSuspensions returns the scheduled changes not yet applied, in
// due order (at most MaxSuspendedTargets).
//
// Deprecated: use [Engine.Suspensions] and [suspension.Suspensions.ListScheduled].
func (e *Engine) ScheduledSuspensions(ctx context.Context) ([]suspension.Scheduled, error) {
	return collectPages(func(after string) ([]suspension.Scheduled, string, error) {
		res, err := e.Suspensions().ListScheduled(ctx, &suspension.ListScheduledParams{Limit: 1000, After: after})
		if err != nil {
			return nil, "", err
		}
		return res.Items, res.Next, nil
	}, MaxSuspendedTargets)
}

// collectPages gathers the pages of a listing, up to max items: the
// deprecated whole-list forms of the handles' List.
func collectPages[T any](page func(after string) ([]T, string, error), max int) ([]T, error) {
	all := []T{}
	after := ""
	for {
		items, next, err := page(after)
		if err != nil {
			return nil, err
		}
		all = append(all, items...)
		if next == "" || len(all) >= max {
			if len(all) > max {
				all = all[:max]
			}
			return all, nil
		}
		after = next
	}
}

// ApplyScheduledSuspension applies the scheduled change scheduleID now.
//
// Deprecated: use [Engine.Suspensions] and [suspension.Suspensions.ApplyScheduled].
func (e *Engine) ApplyScheduledSuspension(ctx context.Context, scheduleID int64) (*suspension.Scheduled, *SuspensionResult, error) {
	return e.Suspensions().ApplyScheduled(ctx, scheduleID)
}

// suspensionServices returns the service that applies scheduled
// suspensions, for River's elected leader (PluginMaintenanceServices).
func (p *pilot) suspensionServices() []startstop.Service {
	engine := p.driver.engine
	if engine == nil || engine.dbPool == nil {
		return nil
	}
	host, _ := os.Hostname()
	return []startstop.Service{engine.Suspensions().Service(engine.config.suspensionConfig(), host+"/"+strconv.Itoa(os.Getpid()), nil)}
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

// checkDefinitionKnown returns ErrNotFound (wrapped, naming id) for a job
// definition or process definition that is neither declared nor stored, and
// stores the declared job definitions, so that a process definition's
// change (now or when due) finds them all.
func (e *Engine) checkDefinitionKnown(ctx context.Context, t suspension.TargetType, id string) error {
	if e.dbPool == nil {
		return errNoPool
	}
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
