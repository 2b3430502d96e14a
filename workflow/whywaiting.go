package workflow

import (
	"context"
	"errors"
	"fmt"

	"github.com/riverbpmn/riverbpmn/diagnose"
)

// WhyWaiting answers "why is this job not running?" for job jobID: every
// reason the database knows (its exclusive key held, by which job and
// client since when; suspended, by what; waiting for prerequisites, which;
// pending, not queued; expired; scheduled for later; its queue paused; no
// live client), with what an operator can do about each, and the exclusive
// scope in force (package diagnose). An unknown job is ErrNotFound.
func (e *Engine) WhyWaiting(ctx context.Context, jobID int64) (*diagnose.Diagnosis, error) {
	if e.dbPool == nil {
		return nil, errNoPool
	}
	// ExclusiveWait judges the key by the scope recorded in the schema
	// (ExclusiveScopeInForce), the one the diagnosis names.
	wait, err := e.ExclusiveWait(ctx, jobID)
	if err != nil {
		return nil, err
	}
	ex := diagnose.Exclusive{Scope: wait.Scope.String(), Key: wait.Key, JobsAhead: wait.KeyJobsAhead}
	// The holder of the key is a reason for every job that waits, not only
	// an available one: a held (suspended, pending) or scheduled job waits
	// for it once released.
	if wait.Holder != nil && !wait.Holder.Stale && wait.Holder.JobID != jobID {
		ex.HolderJobID, ex.HolderClientID, ex.LockedAt = wait.Holder.JobID, wait.Holder.ClientID, wait.Holder.LockedAt
	}
	d, err := diagnose.Diagnose(ctx, e.dbPool, e.config.Schema, jobID, ex)
	if errors.Is(err, diagnose.ErrJobNotFound) {
		return nil, fmt.Errorf("workflow: job %d: %w", jobID, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("workflow: %w", err)
	}
	return d, nil
}
