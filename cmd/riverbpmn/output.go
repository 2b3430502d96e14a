package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/riverbpmn/riverbpmn/bpmn"
	"github.com/riverbpmn/riverbpmn/definition"
	"github.com/riverbpmn/riverbpmn/deployment"
	"github.com/riverbpmn/riverbpmn/incident"
	"github.com/riverbpmn/riverbpmn/job"
	"github.com/riverbpmn/riverbpmn/jobcontrol"
	"github.com/riverbpmn/riverbpmn/timer"
	"github.com/riverbpmn/riverbpmn/workflow"
)

// Exit codes every verb shares, so that scripts can tell a wrong command
// line and a missing object from a failure.
const (
	exitOK       = 0 // found, or done; also -h / --help
	exitError    = 1 // the database or the operation failed
	exitUsage    = 2 // the command line is wrong: unknown verb or flag, missing, extra or malformed argument
	exitNotFound = 3 // the id or key named on the command line does not exist
)

// exitCode maps a verb's error to the process exit code. opened says whether
// the verb had begun opening the database when it failed: an error found
// before is the command line's (a verb checks its flags and arguments
// first), so it exits exitUsage without each verb having to say so. An
// error wrapping workflow.ErrNotFound or a handle's ErrNotFound exits
// exitNotFound.
func exitCode(err error, opened bool) int {
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return exitOK
	case isNotFound(err):
		return exitNotFound
	case !opened, errors.As(err, new(*usageError)), errors.As(err, new(*bpmn.Error)):
		return exitUsage
	default:
		return exitError
	}
}

// notFound are the errors that say an id or key names nothing: the
// engine's and each handle's.
var notFound = []error{
	workflow.ErrNotFound, deployment.ErrNotFound, definition.ErrNotFound, job.ErrNotFound, incident.ErrNotFound, jobcontrol.ErrNotFound, timer.ErrNotFound,
}

// isNotFound reports whether err wraps one of notFound.
func isNotFound(err error) bool {
	for _, target := range notFound {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}

// usageError is a command line error a verb finds after it opened the
// database (the flag combination the operation refuses): exitUsage too.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

// usagef returns a usageError.
func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// instanceNotFound is the error of a verb on a process instance no job
// belongs to.
func instanceNotFound(processInstanceID string) error {
	return fmt.Errorf("process instance %q has no jobs: %w", processInstanceID, workflow.ErrNotFound)
}

// outputFlag is the --json flag of a verb that prints a result.
type outputFlag struct{ json bool }

func (f *outputFlag) register(fs *flag.FlagSet) {
	fs.BoolVar(&f.json, "json", false, "print the result as JSON")
}

// print writes v as indented JSON with --json, otherwise calls text, which
// writes the human-readable form.
func (f *outputFlag) print(w io.Writer, v any, text func(io.Writer) error) error {
	if f.json {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	return text(w)
}

// jsonError is what run prints on stderr for an error with --json: one JSON
// object, with the exit code and, for a flag error, the verb's flags.
type jsonError struct {
	// Error is the error's message (without the "riverbpmn VERB:" prefix of
	// the text form).
	Error string `json:"error"`
	// Verb is the verb that failed; empty for an unknown one.
	Verb string `json:"verb,omitempty"`
	// ExitCode is the process's exit code (see the package doc).
	ExitCode int `json:"exit_code"`
	// Usage is the verb's flags with their defaults, after a flag error.
	Usage string `json:"usage,omitempty"`
}

// writeJSONError writes e on w as one line of JSON, its strings redacted
// before they are encoded (an escaped password would slip past the
// redacting writer), with no HTML escaping.
func writeJSONError(w io.Writer, secrets []string, e jsonError) {
	e.Error, e.Usage = redactSecrets(e.Error, secrets), redactSecrets(e.Usage, secrets)
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(e); err != nil { // strings and an int: cannot fail
		fmt.Fprintf(w, "riverbpmn: %s\n", e.Error)
		return
	}
	_, _ = w.Write(b.Bytes())
}

// wantsJSON reports whether args ask for JSON output: --json (or -json,
// --json=true) before any "--".
func wantsJSON(args []string) bool {
	for _, arg := range args {
		if arg == "--" {
			return false
		}
		if !strings.HasPrefix(arg, "-") {
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(arg, "-"), "=")
		if name != "json" {
			continue
		}
		if !hasValue {
			return true
		}
		on, err := strconv.ParseBool(value)
		return err == nil && on
	}
	return false
}
