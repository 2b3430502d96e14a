package bpmn

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/riverqueue/river"

	"github.com/riverbpmn/riverbpmn/priority"
	"github.com/riverbpmn/riverbpmn/timer"
)

// Job definition types, as Camunda 7 names its job handlers.
const (
	TypeAsyncContinuation           = "async-continuation"
	TypeTimerStartEvent             = "timer-start-event"
	TypeTimerStartEventSubprocess   = "timer-start-event-subprocess"
	TypeTimerIntermediateTransition = "timer-intermediate-transition"
	TypeTimerTransition             = "timer-transition"
)

// Configurations of an async-continuation job definition, as Camunda has them.
const (
	ConfigurationAsyncBefore = "async-before"
	ConfigurationAsyncAfter  = "async-after"
)

// MultiInstanceBodySuffix is appended to a multi-instance activity's id to
// name its multi-instance body, as in Camunda.
const MultiInstanceBodySuffix = "#multiInstanceBody"

// Model is what one BPMN resource holds for the job executor.
type Model struct {
	// Resource is the resource's name, such as "invoice.bpmn".
	Resource string
	// Processes are the resource's process elements, in document order.
	Processes []Process
	// Unsupported lists what bears on the job executor but cannot be applied.
	Unsupported []Finding
	// Ignored lists the engines' extensions that only an executing engine
	// uses, which the reader does not read.
	Ignored []Finding
}

// Process is a process definition read from a model.
type Process struct {
	// Key is the process element's id.
	Key string
	// Name is its name attribute.
	Name string
	// Priority is camunda:jobPriority on the process, as written: a
	// constant, an expression, or "" for none.
	Priority string
	// CallActivities are the process's call activities, for the process
	// hierarchy.
	CallActivities []CallActivity
	// JobDefinitions are the job definitions of the process's activities.
	JobDefinitions []JobDefinition
}

// CallActivity is a call activity and the process it calls.
type CallActivity struct {
	ActivityID string
	// CalledElement is the called process's key (calledElement).
	CalledElement string
}

// JobDefinition is a job definition read from a model.
type JobDefinition struct {
	// ActivityID is the activity that creates the job; a multi-instance
	// body's ends with MultiInstanceBodySuffix.
	ActivityID string
	// Type is one of the Type constants.
	Type string
	// Configuration is ConfigurationAsyncBefore or ConfigurationAsyncAfter
	// for an async continuation, "DATE: <value>", "DURATION: <value>" or
	// "CYCLE: <value>" for a timer.
	Configuration string
	// Exclusive is the job definition's exclusive flag (true by default).
	Exclusive bool
	// Priority is the activity's camunda:jobPriority as written, or "".
	Priority string
	// RetryCycle is the failedJobRetryTimeCycle as written, or "".
	RetryCycle string
	// Timer is the timer definition of a timer job definition, else nil.
	Timer *Timer
}

// Slot is the last part of the job definition's id in a deployment:
// "async-before", "async-after" or "timer".
func (d JobDefinition) Slot() string {
	if d.Timer != nil {
		return "timer"
	}
	return d.Configuration
}

// Timer is a timer event's definition as written.
type Timer struct {
	// Type is timer.TypeDate, timer.TypeDuration or timer.TypeCycle.
	Type timer.Type
	// Value is timeDate, timeDuration or timeCycle's text, trimmed.
	Value string
}

// Finding is one construct of a model the reader reports rather than reads.
type Finding struct {
	Resource  string `json:"resource"`
	ElementID string `json:"element_id,omitempty"`
	// Element is the element's local name, such as "serviceTask".
	Element string `json:"element"`
	// Attribute is the attribute or extension element concerned, prefixed
	// with its namespace's usual prefix ("camunda:class"), or "".
	Attribute string `json:"attribute,omitempty"`
	Value     string `json:"value,omitempty"`
	Reason    string `json:"reason"`
}

func (f Finding) String() string {
	s := f.Resource + ": " + f.Element
	if f.ElementID != "" {
		s += fmt.Sprintf(" %q", f.ElementID)
	}
	if f.Attribute != "" {
		s += " " + f.Attribute
	}
	if f.Value != "" {
		s += fmt.Sprintf(" %q", f.Value)
	}
	return s + ": " + f.Reason
}

// Error is a model that cannot be deployed: it names the resource, the
// element id, the attribute and the value.
type Error struct {
	Resource  string
	ElementID string
	Attribute string
	Value     string
	Problem   string
	Err       error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("bpmn: ")
	b.WriteString(e.Resource)
	if e.ElementID != "" {
		fmt.Fprintf(&b, ": element %q", e.ElementID)
	}
	if e.Attribute != "" {
		fmt.Fprintf(&b, ": %s", e.Attribute)
	}
	if e.Value != "" || e.Attribute != "" {
		fmt.Fprintf(&b, " %q", e.Value)
	}
	b.WriteString(": ")
	b.WriteString(e.Problem)
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// RetryCycleFunc computes a retry time cycle for a job about to be inserted,
// from its args.
type RetryCycleFunc func(args river.JobArgs) (string, error)

// Expressions are the Go functions that expressions in models bind to, each
// under the expression's body: "${customerPriority}" binds to
// Priorities["customerPriority"].
type Expressions struct {
	Priorities  map[string]priority.Source
	RetryCycles map[string]RetryCycleFunc

	// Unbound accepts expressions nothing is registered for: the engine
	// that inserts a job of the definition binds them then (and fails the
	// insert, naming the expression, if it cannot). For tools that deploy
	// without the application's functions, such as the riverbpmn CLI.
	Unbound bool
}

// priorityProblem is PrioritySource's problem, "" for an unbound
// expression when x.Unbound.
func (x Expressions) priorityProblem(v string) string {
	_, problem := x.PrioritySource(v)
	if problem != "" && x.Unbound && IsExpression(v) {
		return ""
	}
	return problem
}

// retryCycleProblem is RetryCycleFunc's problem, "" when x.Unbound.
func (x Expressions) retryCycleProblem(v string) string {
	_, problem := x.RetryCycleFunc(v)
	if x.Unbound {
		return ""
	}
	return problem
}

// IsExpression reports whether a value is an expression, "${...}" or
// "#{...}".
func IsExpression(v string) bool {
	return (strings.HasPrefix(v, "${") || strings.HasPrefix(v, "#{")) && strings.HasSuffix(v, "}")
}

// ExpressionBody returns the text between the braces of an expression.
func ExpressionBody(v string) string {
	return strings.TrimSpace(v[2 : len(v)-1])
}

// PrioritySource returns the priority a value written in a model gives: a
// constant, an integer literal expression, or the registered source of an
// expression. problem says why there is none.
func (x Expressions) PrioritySource(v string) (src priority.Source, problem string) {
	if !IsExpression(v) {
		p, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return nil, "is not a valid priority (an integer or an expression)"
		}
		return priority.Constant(p), ""
	}
	body := ExpressionBody(v)
	if p, err := strconv.ParseInt(body, 10, 64); err == nil {
		return priority.Constant(p), ""
	}
	if src := x.Priorities[body]; src != nil {
		return src, ""
	}
	return nil, fmt.Sprintf("expression %q has no priority function registered under %q", v, body)
}

// RetryCycleFunc returns the registered function of a retry cycle
// expression. problem says why there is none.
func (x Expressions) RetryCycleFunc(v string) (fn RetryCycleFunc, problem string) {
	body := ExpressionBody(v)
	if fn := x.RetryCycles[body]; fn != nil {
		return fn, ""
	}
	return nil, fmt.Sprintf("expression %q has no retry cycle function registered under %q", v, body)
}
