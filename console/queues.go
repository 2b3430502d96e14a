package console

// The queues page: River's queues and the queues with jobs River has no
// record of, their unfinished jobs, whether a client works each (stated
// from River's own record, river_queue), and River's Pause and Resume.

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/riverbpmn/riverbpmn/overview"
	"github.com/riverbpmn/riverbpmn/workflow"
)

type queuesData struct {
	Queues []*overview.Queue
	// Unworked counts the queues no client works.
	Unworked int
}

func (h *Handler) queuesPage(w http.ResponseWriter, r *http.Request) {
	queues, err := h.engine.QueueList(r.Context())
	if err != nil {
		h.renderError(w, r, errorStatus(err), err)
		return
	}
	data := &queuesData{Queues: queues}
	for _, q := range queues {
		if !q.Worked {
			data.Unworked++
		}
	}
	h.render(w, r, http.StatusOK, "queues", "Queues", data)
}

func queueField(r *http.Request) (string, error) {
	name := strings.TrimSpace(r.PostFormValue("queue"))
	if name == "" {
		return "", fmt.Errorf("queue %q is empty", r.PostFormValue("queue"))
	}
	return name, nil
}

func (h *Handler) describePauseQueue(r *http.Request) (*confirmation, error) {
	name, err := queueField(r)
	if err != nil {
		return nil, err
	}
	queues, err := h.engine.QueueList(r.Context())
	if err != nil {
		return nil, err
	}
	c := &confirmation{Title: fmt.Sprintf("Pause queue %q", name), Button: "Pause the queue"}
	for _, q := range queues {
		if q.Name == name {
			c.Touches = []string{fmt.Sprintf("Its %d available and %d waiting job(s) are not fetched until it is resumed; its %d running job(s) finish their runs.", q.Available, q.Waiting, q.Running)}
		}
	}
	if c.Touches == nil {
		c.Touches = []string{"The queue has no unfinished job."}
	}
	return c, nil
}

func (h *Handler) pauseQueue(r *http.Request) (string, error) {
	name, err := queueField(r)
	if err != nil {
		return "", err
	}
	if err := h.engine.PauseQueue(r.Context(), name); err != nil {
		return "", err
	}
	return fmt.Sprintf("Queue %q paused: clients stop fetching from it (at once when they listen, else at their next poll).", name), nil
}

func (h *Handler) resumeQueue(r *http.Request) (string, error) {
	name, err := queueField(r)
	if err != nil {
		return "", err
	}
	if err := h.engine.ResumeQueue(r.Context(), name); err != nil {
		return "", err
	}
	return fmt.Sprintf("Queue %q resumed.", name), nil
}

// queueNote says, for a job's page, whether a client works the job's queue
// ("" when one does and the queue is not paused).
func (h *Handler) queueNote(r *http.Request, queue string) (string, error) {
	q, err := h.engine.QueueState(r.Context(), queue)
	if err != nil {
		return "", err
	}
	switch {
	case !q.Recorded:
		return fmt.Sprintf("No client works queue %q: River has no record of it (no client has worked it).", queue), nil
	case !q.Worked:
		return fmt.Sprintf("No client works queue %q: its last report by a client was at %s (working clients report every %s).", queue, q.ReportedAt.Format("2006-01-02 15:04:05Z"), workflow.QueueReportInterval), nil
	case q.Paused:
		return fmt.Sprintf("Queue %q is paused.", queue), nil
	}
	return "", nil
}
