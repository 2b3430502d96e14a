package main

import (
	"encoding/json"
	"errors"
	"flag"
	"io"

	"github.com/riverbpmn/riverbpmn/workflow"
)

// Exit codes every verb shares, so that scripts can tell a missing object
// from a failure.
const (
	exitOK       = 0 // found, or done
	exitError    = 1 // anything that went wrong
	exitUsage    = 2 // unknown command or bad flags
	exitNotFound = 3 // the id or key named on the command line does not exist
)

// exitCode maps a verb's error to the process exit code.
func exitCode(err error) int {
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return exitOK
	case errors.Is(err, workflow.ErrNotFound):
		return exitNotFound
	default:
		return exitError
	}
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
