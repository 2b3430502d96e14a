package console

import (
	"context"
	"fmt"
	"net/http"
	"time"
)

// ExecuteTimeout is how long the job page's Execute button waits for the
// job's run (Engine.ExecuteJob) before it reports that no client started
// it, or that its run had not ended.
const ExecuteTimeout = 30 * time.Second

// executeJob runs a job now (Engine.ExecuteJob) and says its outcome.
func (h *Handler) executeJob(r *http.Request) (string, error) {
	id, err := pathID(r, "job")
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(r.Context(), ExecuteTimeout)
	defer cancel()
	res, err := h.engine.ExecuteJob(ctx, id)
	if err != nil {
		return "", err
	}
	msg := fmt.Sprintf("Job %d executed: %s (attempt %d, now %s)", id, res.Outcome, res.Job.Attempt, res.Job.State)
	if res.Error != "" {
		msg += ": " + res.Error
	}
	if res.Incident {
		msg += "; an incident is open"
	}
	return msg, nil
}

// applyScheduledSuspension applies a scheduled suspension or activation now
// (Engine.ApplyScheduledSuspension).
func (h *Handler) applyScheduledSuspension(r *http.Request) (string, error) {
	id, err := pathID(r, "schedule")
	if err != nil {
		return "", err
	}
	change, res, err := h.engine.ApplyScheduledSuspension(r.Context(), id)
	if err != nil {
		return "", err
	}
	what := "Job definition"
	if change.Change.Type == "process_definition" {
		what = "Process definition"
	}
	return fmt.Sprintf("Schedule %d applied now: ", id) + suspensionText(fmt.Sprintf("%s %q", what, change.Change.ID), change.Change.Suspend, res), nil
}
