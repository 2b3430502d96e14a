package workflow

import (
	"fmt"
	"strings"

	"github.com/riverbpmn/riverbpmn/internal/notfound"
	"github.com/riverbpmn/riverbpmn/priority"
	"github.com/riverbpmn/riverbpmn/retrypolicy"
)

// ProcessDefinition declares a BPMN process in code.
type ProcessDefinition struct {
	// Key identifies the process definition (required), as in
	// JobContext.ProcessDefinitionKey.
	Key string

	// Priority, if set, is the priority of the process's jobs whose activity
	// has none.
	Priority priority.Source

	// DeploymentID is the deployment that holds the definition. Jobs of this
	// process whose context names no deployment get this one.
	DeploymentID string

	// TenantID is the tenant of the process: its jobs whose context names no
	// tenant get this one (JobContext.TenantID).
	TenantID string
}

// JobDefinition declares one kind of job a process creates: an activity's
// async continuation or timer, run by a River kind.
type JobDefinition struct {
	// ID identifies the job definition (required), as in
	// JobContext.JobDefinitionID. Overrides set at run time are kept under it.
	ID string

	// ProcessDefinitionKey is the declared process the job belongs to
	// (required).
	ProcessDefinitionKey string

	// ActivityID is the BPMN activity that creates the job (required).
	ActivityID string

	// Kind is the River job kind that runs the job (required); a job of this
	// definition must be of this kind. A job whose context names no job
	// definition finds its definition by kind: see JobContext.JobDefinitionID.
	Kind string

	// Priority, if set, is the activity's priority: it wins over the process
	// definition's and loses to an overriding priority set at run time.
	Priority priority.Source

	// RetryCycle is the job definition's ISO-8601 retry time cycle, such as
	// "R5/PT5M" or "PT10M,PT17M,PT20M"; empty means the engine's default
	// (Config.Retry.DefaultCycle). NewEngine rejects an invalid cycle.
	RetryCycle string

	// NonExclusive opts the job definition out of exclusive execution. Jobs
	// are exclusive by default, as in Camunda.
	NonExclusive bool
}

// definitions is the validated, indexed form of a Config's declarations.
type definitions struct {
	processes map[string]*ProcessDefinition
	jobs      map[string]*JobDefinition
	// retryCycles holds the parsed cycle of each job definition that has one.
	retryCycles map[string]retrypolicy.Cycle
	// byKind lists the job definitions of each River kind, in declaration
	// order, for jobs whose context names no job definition.
	byKind map[string][]*JobDefinition
}

// DefinitionError reports an invalid declaration, naming the definition, the
// field and the value.
type DefinitionError struct {
	// Definition is like `job definition "ship-async"`.
	Definition string
	// Field is the Go field name, like "RetryCycle".
	Field string
	// Value is the rejected value.
	Value string
	// Problem says what is wrong.
	Problem string
	// Err is the underlying error, if any.
	Err error
}

func (e *DefinitionError) Error() string {
	msg := fmt.Sprintf("workflow: %s: %s %s: %s", e.Definition, e.Field, quoteForError(e.Value), e.Problem)
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *DefinitionError) Unwrap() error { return e.Err }

// newDefinitions validates and indexes the declarations of config.
func newDefinitions(processes []ProcessDefinition, jobs []JobDefinition) (*definitions, error) {
	defs := &definitions{
		processes:   make(map[string]*ProcessDefinition, len(processes)),
		jobs:        make(map[string]*JobDefinition, len(jobs)),
		retryCycles: make(map[string]retrypolicy.Cycle),
		byKind:      make(map[string][]*JobDefinition),
	}

	for i := range processes {
		process := &processes[i]
		name := fmt.Sprintf("process definition %d", i)
		if process.Key != "" {
			name = fmt.Sprintf("process definition %q", process.Key)
		}
		if err := checkIdentifiers(name,
			field{"Key", process.Key, true},
			field{"DeploymentID", process.DeploymentID, false},
			field{"TenantID", process.TenantID, false},
		); err != nil {
			return nil, err
		}
		if _, dup := defs.processes[process.Key]; dup {
			return nil, &DefinitionError{Definition: name, Field: "Key", Value: process.Key, Problem: "is declared twice"}
		}
		defs.processes[process.Key] = process
	}

	for i := range jobs {
		job := &jobs[i]
		name := fmt.Sprintf("job definition %d", i)
		if job.ID != "" {
			name = fmt.Sprintf("job definition %q", job.ID)
		}
		if err := checkIdentifiers(name,
			field{"ID", job.ID, true},
			field{"ProcessDefinitionKey", job.ProcessDefinitionKey, true},
			field{"ActivityID", job.ActivityID, true},
			field{"Kind", job.Kind, true},
		); err != nil {
			return nil, err
		}
		if _, dup := defs.jobs[job.ID]; dup {
			return nil, &DefinitionError{Definition: name, Field: "ID", Value: job.ID, Problem: "is declared twice"}
		}
		if _, ok := defs.processes[job.ProcessDefinitionKey]; !ok {
			return nil, &DefinitionError{Definition: name, Field: "ProcessDefinitionKey", Value: job.ProcessDefinitionKey, Problem: "is not a declared process definition"}
		}
		if job.RetryCycle != "" {
			cycle, err := retrypolicy.ParseCycle(job.RetryCycle)
			if err != nil {
				return nil, &DefinitionError{Definition: name, Field: "RetryCycle", Value: job.RetryCycle, Problem: "is not a valid retry time cycle", Err: err}
			}
			if problem := retrypolicy.MaxAttemptsProblem(cycle); problem != "" {
				return nil, &DefinitionError{Definition: name, Field: "RetryCycle", Value: job.RetryCycle, Problem: problem}
			}
			defs.retryCycles[job.ID] = cycle
		}
		defs.jobs[job.ID] = job
		defs.byKind[job.Kind] = append(defs.byKind[job.Kind], job)
	}
	return defs, nil
}

// jobDefinitionForKind finds the job definition of a job whose context names
// none: the one declared job definition of the job's kind that matches the
// context's process definition key and activity id (where given). It returns
// nil when none matches, and an error naming the kind and the candidates when
// several do.
func (d *definitions) jobDefinitionForKind(kind string, jc JobContext) (*JobDefinition, error) {
	var matches []*JobDefinition
	for _, def := range d.byKind[kind] {
		if jc.ProcessDefinitionKey != "" && jc.ProcessDefinitionKey != def.ProcessDefinitionKey {
			continue
		}
		if jc.ActivityID != "" && jc.ActivityID != def.ActivityID {
			continue
		}
		matches = append(matches, def)
	}
	switch len(matches) {
	case 0:
		return nil, nil
	case 1:
		return matches[0], nil
	}
	ids := make([]string, len(matches))
	for i, def := range matches {
		ids[i] = fmt.Sprintf("%q", def.ID)
	}
	return nil, &JobContextError{Field: "job_definition_id", Value: "",
		Problem: fmt.Sprintf("is needed: %d declared job definitions run kind %q for this process and activity (%s); name one in JobContext.JobDefinitionID, or give the ActivityID that tells them apart",
			len(matches), kind, strings.Join(ids, ", "))}
}

type field struct {
	name, value string
	required    bool
}

func checkIdentifiers(definition string, fields ...field) error {
	for _, f := range fields {
		if problem := identifierProblem(f.value, f.required); problem != "" {
			return &DefinitionError{Definition: definition, Field: f.name, Value: f.value, Problem: problem}
		}
	}
	return nil
}

// ErrNotFound is wrapped by the management API's errors for an id that names
// nothing. It is the same error as every feature package's ErrNotFound
// (job.ErrNotFound, timer.ErrNotFound, ...), so errors.Is with either
// answers alike.
var ErrNotFound = notfound.Err
