package workflow

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/riverbpmn/riverbpmn/bpmn"
	"github.com/riverbpmn/riverbpmn/deployment"
	"github.com/riverbpmn/riverbpmn/priority"
	"github.com/riverbpmn/riverbpmn/retrypolicy"
)

// errNotDeploymentAware is returned when deployments are registered on a
// driver whose acquisition is not deployment aware.
var errNotDeploymentAware = errors.New("workflow: this driver's acquisition is not deployment aware (Acquisition.DeploymentAware)")

// RegisterDeployment makes the driver's clients fetch jobs of deployment id
// from their next fetch on. Registering twice is harmless.
func (d *Driver) RegisterDeployment(id string) error {
	if !d.acquisition.DeploymentAware {
		return errNotDeploymentAware
	}
	if problem := identifierProblem(id, true); problem != "" {
		return fmt.Errorf("workflow: deployment id %s %s", quoteForError(id), problem)
	}
	d.deployments.add(id)
	return nil
}

// UnregisterDeployment stops the driver's clients fetching jobs of deployment
// id from their next fetch on (jobs already fetched keep running). It
// reports whether id was registered. Like RegisterDeployment, it is an error
// on a driver whose acquisition is not deployment aware.
func (d *Driver) UnregisterDeployment(id string) (bool, error) {
	if !d.acquisition.DeploymentAware {
		return false, errNotDeploymentAware
	}
	return d.deployments.remove(id), nil
}

// RegisteredDeployments returns the deployments the driver's clients fetch
// jobs of, sorted.
func (d *Driver) RegisteredDeployments() []string {
	return slices.Clone(d.deployments.snapshot())
}

// Deployments returns the handle on the BPMN models deployed in the engine's
// schema: Create, List, Get and Delete (package deployment). Job
// definitions read from a model are stored beside those declared in Go:
// every engine and tool of the schema sees them, a job names one in
// JobContext.JobDefinitionID (by id, or by its alias for the newest
// version), and the job then gets its priority, retry cycle and exclusive
// flag as a declared one's. A deployment made through this handle is
// registered with every deployment-aware driver of the engine, as Camunda
// registers a deployment with its job executor.
//
// Expressions in models bind to Config.Expressions. A model that defines
// differently what Config declares in Go (a process's priority, or the
// priority, retry cycle or exclusive flag of a job definition of the same
// process and activity) is refused, naming both.
func (e *Engine) Deployments() *deployment.Deployments {
	e.deploymentsOnce.Do(func() { e.deployments = e.newDeployments() })
	return e.deployments
}

// newDeployments makes the engine's deployments handle.
func (e *Engine) newDeployments() *deployment.Deployments {
	return deployment.New(deployment.Config{
		DB:          e.db(),
		Schema:      e.config.Schema,
		Expressions: e.config.Expressions,
		Check:       e.checkModel,
		Created:     e.registerDeployment,
	})
}

// registerDeployment registers a deployment made through the engine with
// its deployment-aware drivers.
func (e *Engine) registerDeployment(id string) {
	e.driversMu.Lock()
	drivers := slices.Clone(e.drivers)
	e.driversMu.Unlock()
	for _, d := range drivers {
		if d.acquisition.DeploymentAware {
			_ = d.RegisterDeployment(id) // a deployment id is a valid identifier
		}
	}
}

// checkModel refuses a model that defines differently what the engine
// declares in Go, or whose retry cycle River cannot hold.
func (e *Engine) checkModel(m *bpmn.Model) error {
	for _, p := range m.Processes {
		if declared := e.defs.processes[p.Key]; declared != nil {
			if problem := prioritiesDiffer(declared.Priority, p.Priority); problem != "" {
				return &bpmn.Error{Resource: m.Resource, ElementID: p.Key, Attribute: "camunda:jobPriority", Value: p.Priority,
					Problem: fmt.Sprintf("process definition %q is declared in Go (Config.ProcessDefinitions) with %s", p.Key, problem)}
			}
		}
		for _, jd := range p.JobDefinitions {
			if jd.RetryCycle != "" && !bpmn.IsExpression(jd.RetryCycle) {
				cycle, err := retrypolicy.ParseCycle(jd.RetryCycle)
				if err == nil {
					if problem := retrypolicy.MaxAttemptsProblem(cycle); problem != "" {
						return &bpmn.Error{Resource: m.Resource, ElementID: jd.ActivityID, Attribute: "failedJobRetryTimeCycle", Value: jd.RetryCycle, Problem: problem}
					}
				}
			}
			for _, declared := range e.config.JobDefinitions {
				if declared.ProcessDefinitionKey != p.Key || declared.ActivityID != jd.ActivityID {
					continue
				}
				if problem := jobDefinitionsDiffer(&declared, jd); problem != "" {
					return &bpmn.Error{Resource: m.Resource, ElementID: jd.ActivityID, Value: jd.ActivityID, Attribute: "id",
						Problem: fmt.Sprintf("job definition %q (Config.JobDefinitions) declares this activity in Go differently: %s", declared.ID, problem)}
				}
			}
		}
	}
	return nil
}

// prioritiesDiffer compares a priority declared in Go with one written in a
// model.
func prioritiesDiffer(declared priority.Source, written string) string {
	switch {
	case declared == nil && written == "":
		return ""
	case declared == nil:
		return "no priority"
	case written == "":
		return "priority " + declared.String() + ", the model with none"
	}
	src, problem := bpmn.Expressions{}.PrioritySource(written)
	if problem == "" && src.String() == declared.String() {
		return ""
	}
	return "priority " + declared.String()
}

func jobDefinitionsDiffer(declared *JobDefinition, jd bpmn.JobDefinition) string {
	if declared.NonExclusive == jd.Exclusive {
		return fmt.Sprintf("Go says exclusive %t, the model %t", !declared.NonExclusive, jd.Exclusive)
	}
	if declared.RetryCycle != jd.RetryCycle {
		return fmt.Sprintf("Go says retry cycle %q, the model %q", declared.RetryCycle, jd.RetryCycle)
	}
	if problem := prioritiesDiffer(declared.Priority, jd.Priority); problem != "" {
		return "Go says " + problem + ", the model " + strconv.Quote(jd.Priority)
	}
	return ""
}

// deployedDefinition is a deployed job definition in the form resolve
// uses.
type deployedDefinition struct {
	job     *JobDefinition
	process *ProcessDefinition
	// cycle is the constant retry cycle; cycleFn the expression's function.
	cycle   retrypolicy.Cycle
	cycleFn bpmn.RetryCycleFunc
	jobType string
}

// deployedJobDefinition resolves a job definition id (or alias) that Go
// does not declare against the deployed ones; nil when none has it.
func (e *Engine) deployedJobDefinition(ctx context.Context, id string) (*deployedDefinition, error) {
	if e.dbPool == nil {
		return nil, nil
	}
	r, err := e.Deployments().Resolve(ctx, id)
	if err != nil || r == nil {
		return nil, err
	}
	exprs := e.config.Expressions
	def := &deployedDefinition{
		job: &JobDefinition{ID: r.Job.ID, ProcessDefinitionKey: r.Process.Key, ActivityID: r.Job.ActivityID,
			NonExclusive: !r.Job.Exclusive, RetryCycle: r.Job.RetryCycle},
		process: &ProcessDefinition{Key: r.Process.Key, DeploymentID: r.Process.DeploymentID, TenantID: r.Process.TenantID},
		jobType: JobTypeAsync,
	}
	if r.Job.TimerType != "" {
		def.jobType = JobTypeTimer
	}
	fail := func(field, value, problem string) error {
		return &JobContextError{Field: "job_definition_id", Value: id,
			Problem: fmt.Sprintf("is deployed (resource %q of deployment %s) with %s %q, but %s", r.Process.Resource, r.Process.DeploymentID, field, value, problem)}
	}
	if r.Job.Priority != "" {
		src, problem := exprs.PrioritySource(r.Job.Priority)
		if problem != "" {
			return nil, fail("camunda:jobPriority", r.Job.Priority, problem+" in this engine's Config.Expressions")
		}
		def.job.Priority = src
	}
	if r.Process.Priority != "" {
		src, problem := exprs.PrioritySource(r.Process.Priority)
		if problem != "" {
			return nil, fail("process camunda:jobPriority", r.Process.Priority, problem+" in this engine's Config.Expressions")
		}
		def.process.Priority = src
	}
	switch {
	case r.Job.RetryCycle == "":
	case bpmn.IsExpression(r.Job.RetryCycle):
		fn, problem := exprs.RetryCycleFunc(r.Job.RetryCycle)
		if problem != "" {
			return nil, fail("failedJobRetryTimeCycle", r.Job.RetryCycle, problem+" in this engine's Config.Expressions")
		}
		def.cycleFn = fn
	default:
		cycle, err := retrypolicy.ParseCycle(r.Job.RetryCycle)
		if err != nil {
			return nil, fail("failedJobRetryTimeCycle", r.Job.RetryCycle, err.Error())
		}
		def.cycle = cycle
	}
	return def, nil
}
