package exclusive

import (
	"fmt"
	"strings"
)

// Scope says which jobs exclude each other: the engine's choice of exclusive
// key. Every client working one database must use the same scope; clients
// with different scopes take different keys and do not exclude each other.
type Scope int

const (
	// ProcessInstance makes two exclusive jobs of one process instance never
	// run at the same time. This is Camunda's rule, and the zero value: an
	// engine configured with nothing enforces it.
	ProcessInstance Scope = iota

	// RootProcessInstance makes two exclusive jobs of one process hierarchy
	// (a root instance and every instance it calls, at any depth) never run at
	// the same time: the key is the root process instance.
	RootProcessInstance

	// None switches enforcement off, explicitly: jobs keep their exclusive
	// flag, but the fetch is River's own and nothing is sequenced. An engine
	// with None and liveness disabled fetches exactly like stock River.
	None
)

// Scopes lists the declared scopes, the default first.
var Scopes = []Scope{ProcessInstance, RootProcessInstance, None}

// String returns the scope's name, as used in errors and logs.
func (s Scope) String() string {
	switch s {
	case None:
		return "none"
	case ProcessInstance:
		return "process instance"
	case RootProcessInstance:
		return "root process instance"
	default:
		return fmt.Sprintf("exclusive.Scope(%d)", int(s))
	}
}

// Name returns the scope's name as written in flags and in the database:
// "process-instance", "root-process-instance" or "none".
func (s Scope) Name() string { return strings.ReplaceAll(s.String(), " ", "-") }

// ParseScope returns the scope named name, as Name or String writes it
// ("root-process-instance" or "root process instance").
func ParseScope(name string) (Scope, error) {
	for _, s := range Scopes {
		if name == s.Name() || name == s.String() {
			return s, nil
		}
	}
	return 0, fmt.Errorf("exclusive: unknown scope %q (want one of process-instance, root-process-instance, none)", name)
}

// Enabled reports whether s enforces exclusivity.
func (s Scope) Enabled() bool { return s == ProcessInstance || s == RootProcessInstance }

// Validate returns an error for a value that is not one of the declared
// scopes.
func (s Scope) Validate() error {
	switch s {
	case None, ProcessInstance, RootProcessInstance:
		return nil
	default:
		return fmt.Errorf("exclusive: unknown scope %d", int(s))
	}
}

// Key returns the exclusive key of a job with the given resolved exclusive
// flag, process instance and root process instance under scope, and whether
// it has one. A job has no key when the scope is None, when it is not
// exclusive, or when it belongs to no process instance. An empty root means
// the instance is its own root.
//
// The fetch query computes the same key in SQL
// (exclusive/sql/exclusive_key_*.sql); the two must agree.
func Key(scope Scope, exclusive bool, processInstanceID, rootProcessInstanceID string) (string, bool) {
	if !exclusive || !scope.Enabled() {
		return "", false
	}
	key := processInstanceID
	if scope == RootProcessInstance && rootProcessInstanceID != "" {
		key = rootProcessInstanceID
	}
	return key, key != ""
}
