package console

// Running-job control from the console: stop, suspend and activate, queue
// (pending jobs), for one job, a process instance, or a job or process
// definition. Each button calls the engine's method of the same name, as the
// CLI verbs `stop`, `suspend`, `activate` and `queue` do.

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/riverbpmn/riverbpmn/jobcontrol"
	"github.com/riverbpmn/riverbpmn/lifecycle"
	"github.com/riverbpmn/riverbpmn/suspension"
	"github.com/riverbpmn/riverbpmn/workflow"
)

func (h *Handler) stopJob(r *http.Request) (string, error) {
	id, err := pathID(r, "job")
	if err != nil {
		return "", err
	}
	res, err := h.engine.StopJob(r.Context(), id)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("Job %d: %s.", id, stopOutcomeText(res.Outcome)), nil
}

func stopOutcomeText(o jobcontrol.StopOutcome) string {
	switch o {
	case jobcontrol.StopAborted:
		return "aborted before it started"
	case jobcontrol.StopRequested:
		return "stop requested; the client running it cancels its work, and it ends ABORTED"
	case jobcontrol.StopAlreadyFinished:
		return "already finished, left as it is"
	}
	return string(o)
}

func (h *Handler) suspendJob(r *http.Request) (string, error) {
	return h.changeJob(r, true)
}

func (h *Handler) activateJob(r *http.Request) (string, error) {
	return h.changeJob(r, false)
}

func (h *Handler) changeJob(r *http.Request, suspend bool) (string, error) {
	id, err := pathID(r, "job")
	if err != nil {
		return "", err
	}
	change := h.engine.ActivateJob
	if suspend {
		change = h.engine.SuspendJob
	}
	changed, err := change(r.Context(), id)
	if err != nil {
		return "", err
	}
	if !changed {
		return fmt.Sprintf("Job %d was already %s.", id, pastTense(suspend)), nil
	}
	return fmt.Sprintf("Job %d %s.", id, pastTense(suspend)), nil
}

func (h *Handler) queueJob(r *http.Request) (string, error) {
	id, err := pathID(r, "job")
	if err != nil {
		return "", err
	}
	res, err := h.engine.QueueJobs(r.Context(), id)
	if err != nil {
		return "", err
	}
	return queueText(res), nil
}

// queueText says what QueueJobs or QueueProcessInstance did.
func queueText(res []lifecycle.QueueResult) string {
	counts := map[lifecycle.Outcome]int{}
	for _, q := range res {
		counts[q.Outcome]++
	}
	if len(res) == 1 {
		switch res[0].Outcome {
		case lifecycle.Queued:
			return fmt.Sprintf("Job %d queued: it runs as soon as a client can take it.", res[0].JobID)
		case lifecycle.StillHeld:
			return fmt.Sprintf("Job %d is no longer pending, but something else still holds it (a suspension or prerequisites).", res[0].JobID)
		default:
			return fmt.Sprintf("Job %d was not pending: nothing to do.", res[0].JobID)
		}
	}
	return fmt.Sprintf("%d job(s) queued, %d still held by something else, %d not pending.",
		counts[lifecycle.Queued], counts[lifecycle.StillHeld], counts[lifecycle.NotPending])
}

// instanceField reads the process instance id of the path
// (/instances/{id}/...).
func instanceField(r *http.Request) (string, error) {
	id := r.PathValue("id")
	if strings.TrimSpace(id) == "" {
		return "", fmt.Errorf("instance %q is empty", id)
	}
	return id, nil
}

func (h *Handler) stopInstance(r *http.Request) (string, error) {
	id, err := instanceField(r)
	if err != nil {
		return "", err
	}
	res, err := h.engine.StopProcessInstance(r.Context(), id)
	if err != nil {
		return "", err
	}
	counts := map[jobcontrol.StopOutcome]int{}
	for _, s := range res {
		counts[s.Outcome]++
	}
	return fmt.Sprintf("Process instance %q: %d waiting job(s) aborted, stop requested for %d running job(s), %d already finished.",
		id, counts[jobcontrol.StopAborted], counts[jobcontrol.StopRequested], counts[jobcontrol.StopAlreadyFinished]), nil
}

func (h *Handler) suspendInstance(r *http.Request) (string, error) {
	return h.changeInstance(r, true)
}

func (h *Handler) activateInstance(r *http.Request) (string, error) {
	return h.changeInstance(r, false)
}

func (h *Handler) changeInstance(r *http.Request, suspend bool) (string, error) {
	id, err := instanceField(r)
	if err != nil {
		return "", err
	}
	change := h.engine.ActivateProcessInstance
	if suspend {
		change = h.engine.SuspendProcessInstance
	}
	res, err := change(r.Context(), id)
	if err != nil {
		return "", err
	}
	return suspensionText(fmt.Sprintf("Process instance %q", id), suspend, res), nil
}

func (h *Handler) queueInstance(r *http.Request) (string, error) {
	id, err := instanceField(r)
	if err != nil {
		return "", err
	}
	res, err := h.engine.QueueProcessInstance(r.Context(), id)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("Process instance %q: %s", id, queueText(res)), nil
}

func (h *Handler) suspendDefinition(r *http.Request) (string, error) {
	return h.changeDefinition(r, true)
}

func (h *Handler) activateDefinition(r *http.Request) (string, error) {
	return h.changeDefinition(r, false)
}

// changeDefinition suspends or activates a job definition or a process
// definition (form fields type, id, include_jobs, at).
func (h *Handler) changeDefinition(r *http.Request, suspend bool) (string, error) {
	id := r.PostFormValue("id")
	if strings.TrimSpace(id) == "" {
		return "", fmt.Errorf("id %q is empty", id)
	}
	opts := &workflow.SuspendOpts{IncludeJobs: r.PostFormValue("include_jobs") != ""}
	if at := strings.TrimSpace(r.PostFormValue("at")); at != "" {
		t, err := parseUTC(at)
		if err != nil {
			return "", fmt.Errorf("at %q is not a date and time (YYYY-MM-DDTHH:MM, UTC)", at)
		}
		opts.At = t
	}
	var (
		change func(context.Context, string, *workflow.SuspendOpts) (*workflow.SuspensionResult, error)
		what   string
	)
	switch typ := suspension.TargetType(r.PostFormValue("type")); typ {
	case suspension.JobDefinition:
		what = fmt.Sprintf("Job definition %q", id)
		change = h.engine.ActivateJobDefinition
		if suspend {
			change = h.engine.SuspendJobDefinition
		}
	case suspension.ProcessDefinition:
		what = fmt.Sprintf("Process definition %q", id)
		change = h.engine.ActivateProcessDefinition
		if suspend {
			change = h.engine.SuspendProcessDefinition
		}
	default:
		return "", fmt.Errorf("type %q is not %q or %q", typ, suspension.JobDefinition, suspension.ProcessDefinition)
	}
	res, err := change(r.Context(), id, opts)
	if err != nil {
		return "", err
	}
	return suspensionText(what, suspend, res), nil
}

// suspensionText says what a suspension or activation did.
func suspensionText(what string, suspend bool, res *workflow.SuspensionResult) string {
	verb := "suspension"
	if !suspend {
		verb = "activation"
	}
	if res.ScheduledID != 0 {
		return fmt.Sprintf("%s: %s scheduled for %s (schedule %d).", what, verb, res.ScheduledAt.UTC().Format(time.RFC3339), res.ScheduledID)
	}
	var b strings.Builder
	if res.Changed {
		fmt.Fprintf(&b, "%s %s", what, pastTense(suspend))
	} else {
		fmt.Fprintf(&b, "%s was already %s", what, pastTense(suspend))
	}
	if len(res.JobDefinitions) > 0 && what != fmt.Sprintf("Job definition %q", res.JobDefinitions[0]) {
		fmt.Fprintf(&b, ", with job definition(s) %s", strings.Join(res.JobDefinitions, ", "))
	}
	if res.Jobs > 0 || res.Batches > 0 {
		fmt.Fprintf(&b, "; %d existing job(s) %s", res.Jobs, pastTense(suspend))
	}
	if res.StartTimerJobs > 0 {
		fmt.Fprintf(&b, "; %d timer start event job(s) %s", res.StartTimerJobs, pastTense(suspend))
	}
	b.WriteString(".")
	return b.String()
}

func pastTense(suspend bool) string {
	if suspend {
		return "suspended"
	}
	return "activated"
}
