package workflow

import (
	"context"
	"fmt"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/riverbpmn/riverbpmn/internal/jobctx"
	"github.com/riverbpmn/riverbpmn/priority"
	"github.com/riverbpmn/riverbpmn/retrypolicy"
)

// middleware is the engine's River middleware. On the insert path it
// attaches, validates and resolves job contexts: River runs global job insert
// middleware for all six insert calls (Insert, InsertTx, InsertMany,
// InsertManyTx, InsertManyFast, InsertManyFastTx) before anything is written,
// so an error here means nothing of the batch is inserted.
type middleware struct {
	river.MiddlewareDefaults

	engine *Engine
}

var _ rivertype.JobInsertMiddleware = (*middleware)(nil)

// InsertMany prepares every job of the batch, then inserts.
func (m *middleware) InsertMany(
	ctx context.Context,
	manyParams []*rivertype.JobInsertParams,
	doInner func(context.Context) ([]*rivertype.JobInsertResult, error),
) ([]*rivertype.JobInsertResult, error) {
	if ctx.Value(wiringProbeKey{}) == m.engine {
		return nil, errWiringProbeOK // a client starting checks it has us (client.go)
	}
	now := time.Now()
	for i, params := range manyParams {
		err := m.engine.prepareInsert(ctx, params)
		if err == nil {
			err = checkLifecycleAtInsert(params, now)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", insertErrorPrefix(manyParams, i), err)
		}
	}
	results, err := insertFollowUps(ctx, manyParams, func() ([]*rivertype.JobInsertResult, error) {
		return doInner(context.WithValue(ctx, wiringKey{}, m.engine))
	})
	if err != nil {
		return nil, lifecycleInsertError(manyParams, err)
	}
	return results, nil
}

// resolve completes a valid job context from the declarations: the job
// definition's process and activity, the process's deployment, the root
// instance, the priority and exclusive flag by Camunda's precedence, and the
// retry cycle (which also sets params.MaxAttempts). An overriding priority is
// applied later, by the insert trigger of migration riverbpmn/002, in the
// inserting transaction.
func (e *Engine) resolve(ctx context.Context, jc JobContext, params *rivertype.JobInsertParams) (JobContext, error) {
	var (
		jobDef   *JobDefinition
		deployed *deployedDefinition // when jobDef comes from a deployed model
	)
	if jc.JobDefinitionID == "" && jc.ProcessDefinitionKey != "" {
		// No job definition named: the declared one of this kind, if exactly
		// one matches (see JobContext.JobDefinitionID).
		def, err := e.defs.jobDefinitionForKind(params.Kind, jc)
		if err != nil {
			return jc, err
		}
		if def != nil {
			jc.JobDefinitionID = def.ID
		}
	}
	if jc.JobDefinitionID != "" {
		if jobDef = e.defs.jobs[jc.JobDefinitionID]; jobDef == nil {
			// Not declared in Go: a deployed one (Engine.Deployments), named
			// by its id or its alias.
			var err error
			if deployed, err = e.deployedJobDefinition(ctx, jc.JobDefinitionID); err != nil {
				return jc, err
			}
			if deployed == nil {
				return jc, &JobContextError{Field: "job_definition_id", Value: jc.JobDefinitionID, Problem: "is not a declared job definition, nor a deployed one"}
			}
			jobDef, jc.JobDefinitionID = deployed.job, deployed.job.ID
		}
		if jobDef.Kind != "" && jobDef.Kind != params.Kind { // a deployed definition runs any kind
			return jc, &JobContextError{Field: "job_definition_id", Value: jc.JobDefinitionID,
				Problem: fmt.Sprintf("runs kind %q, but the job is of kind %q", jobDef.Kind, params.Kind)}
		}
		for _, f := range []struct {
			name     string
			value    *string
			declared string
		}{
			{"process_definition_key", &jc.ProcessDefinitionKey, jobDef.ProcessDefinitionKey},
			{"activity_id", &jc.ActivityID, jobDef.ActivityID},
		} {
			switch *f.value {
			case "":
				*f.value = f.declared
			case f.declared:
			default:
				return jc, &JobContextError{Field: f.name, Value: *f.value,
					Problem: fmt.Sprintf("differs from job definition %q's %q", jobDef.ID, f.declared)}
			}
		}
	}
	if _, declared := e.defs.processes[jc.ProcessDefinitionKey]; !declared && deployed == nil && jc.ProcessDefinitionKey != "" && len(e.defs.processes) > 0 {
		// An engine that declares its processes knows them all: a key it
		// does not know (and no deployed job definition named) is a typo or a
		// process deployed elsewhere, which would get none of its process's
		// priority, deployment or tenant.
		return jc, &JobContextError{Field: "process_definition_key", Value: jc.ProcessDefinitionKey,
			Problem: "is not a declared process definition (Config.ProcessDefinitions)"}
	}
	process := e.defs.processes[jc.ProcessDefinitionKey] // nil for an undeclared process
	if deployed != nil {
		process = deployed.process
		if jc.DeploymentID != "" && jc.DeploymentID != process.DeploymentID {
			return jc, &JobContextError{Field: "deployment_id", Value: jc.DeploymentID,
				Problem: fmt.Sprintf("differs from deployment %q, which holds job definition %q", process.DeploymentID, jobDef.ID)}
		}
		if jc.JobType == "" {
			jc.JobType = deployed.jobType
		}
	}
	if jc.DeploymentID == "" && process != nil {
		jc.DeploymentID = process.DeploymentID
	}
	if jc.TenantID == "" && process != nil {
		jc.TenantID = process.TenantID // a process's jobs inherit its tenant
	}
	if jc.RootProcessInstanceID == "" && jc.ParentProcessInstanceID != "" {
		jc.RootProcessInstanceID = jc.ParentProcessInstanceID // called by a top-level instance
	}
	if jc.RootProcessInstanceID == "" {
		jc.RootProcessInstanceID = jc.ProcessInstanceID // a top-level instance is its own root
	}

	if e.config.Priority.Disabled {
		jc.Priority = nil
	} else {
		p, err := e.priority(jc, jobDef, process, params.Args)
		if err != nil {
			return jc, err
		}
		jc.Priority = &p
	}

	exclusive := true
	switch {
	case jobDef != nil:
		exclusive = !jobDef.NonExclusive
	case jc.Exclusive != nil:
		exclusive = *jc.Exclusive
	}
	jc.Exclusive = &exclusive

	var defCycle retrypolicy.Cycle
	switch {
	case deployed != nil && deployed.cycleFn != nil:
		cycle, err := deployedCycle(deployed, params)
		if err != nil {
			return jc, err
		}
		defCycle = cycle
	case deployed != nil:
		defCycle = deployed.cycle
	case jobDef != nil:
		defCycle = e.defs.retryCycles[jobDef.ID]
	}
	if err := e.resolveRetryCycle(&jc, defCycle, params); err != nil {
		return jc, err
	}
	return jc, nil
}

// priority applies the static part of Camunda's precedence: activity
// (job definition) > process > explicit value > 0.
func (e *Engine) priority(jc JobContext, jobDef *JobDefinition, process *ProcessDefinition, args river.JobArgs) (int64, error) {
	switch {
	case jobDef != nil && jobDef.Priority != nil:
		p, err := jobDef.Priority.Priority(args)
		if err != nil {
			return 0, fmt.Errorf("workflow: job definition %q: %w", jobDef.ID, err)
		}
		return p, nil
	case process != nil && process.Priority != nil:
		p, err := process.Priority.Priority(args)
		if err != nil {
			return 0, fmt.Errorf("workflow: process definition %q: %w", process.Key, err)
		}
		return p, nil
	case jc.Priority != nil:
		return *jc.Priority, nil
	default:
		return priority.Default, nil
	}
}

// prepareInsert finds the job context of a job about to be inserted (from its
// args or from its metadata), validates it and stores it, normalised, in the
// job's metadata.
func (e *Engine) prepareInsert(ctx context.Context, params *rivertype.JobInsertParams) error {
	stored, err := jobctx.Stored(params.Metadata)
	if err != nil {
		return err
	}

	var jc JobContext
	switch argsWithContext, fromArgs := params.Args.(JobArgsWithJobContext); {
	case fromArgs && stored != nil:
		return fmt.Errorf("workflow: job context given twice, by the args' JobContext method and in InsertOpts.Metadata[%q]; give it once", MetadataKey)
	case fromArgs:
		jc = argsWithContext.JobContext()
		if err := jc.Validate(); err != nil {
			return err
		}
	case stored != nil:
		if jc, err = decodeJobContextAsGiven(stored); err != nil {
			return err
		}
	default:
		// A plain River job: River's own retry behaviour, unless the engine
		// has a default retry cycle.
		return retrypolicy.ApplyDefaultCycle(params, e.defaultRetryCycle)
	}

	jc, err = e.resolve(ctx, jc, params)
	if err != nil {
		return err
	}
	params.Metadata, err = jc.addResolvedToMetadata(params.Metadata, e.labelledContext(ctx))
	return err
}

// deployedCycle evaluates a deployed job definition's retry cycle
// expression for a job about to be inserted.
func deployedCycle(deployed *deployedDefinition, params *rivertype.JobInsertParams) (retrypolicy.Cycle, error) {
	fail := func(value, problem string) error {
		return &JobContextError{Field: "retry_cycle", Value: value,
			Problem: fmt.Sprintf("from job definition %q's failedJobRetryTimeCycle %q %s", deployed.job.ID, deployed.job.RetryCycle, problem)}
	}
	s, err := deployed.cycleFn(params.Args)
	if err != nil {
		return retrypolicy.Cycle{}, fail("", "failed: "+err.Error())
	}
	cycle, err := retrypolicy.ParseCycle(s)
	if err != nil {
		return retrypolicy.Cycle{}, fail(s, "is not a valid retry time cycle: "+err.Error())
	}
	if problem := retrypolicy.MaxAttemptsProblem(cycle); problem != "" {
		return retrypolicy.Cycle{}, fail(s, problem)
	}
	return cycle, nil
}
