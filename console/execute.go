package console

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/riverbpmn/riverbpmn/workflow"
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
	if err := h.queueWorked(r.Context(), id); err != nil {
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

// queueWorked refuses at once to execute a job of a queue no client works
// (River has no recent report of it) or that is paused: nothing would take
// the job, and the button would wait ExecuteTimeout for nothing.
func (h *Handler) queueWorked(ctx context.Context, jobID int64) error {
	d, err := h.engine.JobDetails(ctx, jobID)
	if err != nil {
		return err
	}
	q, err := h.engine.QueueState(ctx, d.Job.Queue)
	if err != nil {
		return err
	}
	switch {
	case !q.Recorded:
		return fmt.Errorf("job %d not executed: no client works its queue %q (River has no record of that queue: no client has worked it); start a client with that queue, or move the job", jobID, q.Name)
	case !q.Worked:
		return fmt.Errorf("job %d not executed: no client works its queue %q (its last report by a client was at %s; working clients report every %s)", jobID, q.Name, q.ReportedAt.Format(time.RFC3339), workflow.QueueReportInterval)
	case q.Paused:
		return fmt.Errorf("job %d not executed: its queue %q is paused: resume it first", jobID, q.Name)
	}
	return nil
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
