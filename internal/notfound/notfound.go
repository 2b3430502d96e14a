// Package notfound holds riverbpmn's one not-found error. Every feature
// package's ErrNotFound, and workflow.ErrNotFound, is this same value, so
// errors.Is(err, job.ErrNotFound) and errors.Is(err, workflow.ErrNotFound)
// agree on every error of every package, whichever handle returned it.
package notfound

import "errors"

// Err is wrapped by the errors for an id that names nothing.
var Err = errors.New("not found")
