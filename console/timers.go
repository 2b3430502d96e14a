package console

// The timers page: every timer, of every process instance and the timer
// start events, with its next due date and repetitions left, Set due and
// Cancel (asked first), filtered by job definition, activity and due
// window.

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/riverbpmn/riverbpmn/workflow"
)

type timerForm struct {
	ProcessDefinition, JobDefinition, Activity, DueFrom, DueBefore string
	StartEvents, Ended                                             bool
}

type timersData struct {
	Filter *timerForm
	Timers []*workflow.TimerInfo
	Pager  pager
	Total  *total
}

func parseTimerFilter(values url.Values) (*workflow.TimerFilter, *timerForm, error) {
	form := &timerForm{
		ProcessDefinition: strings.TrimSpace(values.Get("process_definition")),
		JobDefinition:     strings.TrimSpace(values.Get("job_definition")), Activity: strings.TrimSpace(values.Get("activity")),
		DueFrom: strings.TrimSpace(values.Get("due_from")), DueBefore: strings.TrimSpace(values.Get("due_before")),
		StartEvents: values.Get("start_events") != "", Ended: values.Get("ended") != "",
	}
	f := &workflow.TimerFilter{ProcessDefinitionKey: form.ProcessDefinition, JobDefinitionID: form.JobDefinition, ActivityID: form.Activity, StartEvents: form.StartEvents, Ended: form.Ended}
	for _, t := range []struct {
		name, value string
		from        bool
	}{{"due_from", form.DueFrom, true}, {"due_before", form.DueBefore, false}} {
		if t.value == "" {
			continue
		}
		v, err := parseUTC(t.value)
		if err != nil {
			return nil, nil, fmt.Errorf("%s %q is not a date and time (YYYY-MM-DDTHH:MM, UTC)", t.name, t.value)
		}
		if t.from {
			f.DueFrom = v
		} else {
			f.DueBefore = v
		}
	}
	return f, form, nil
}

func (h *Handler) timersPage(w http.ResponseWriter, r *http.Request) {
	f, form, err := parseTimerFilter(r.URL.Query())
	if err != nil {
		h.renderError(w, r, http.StatusBadRequest, err)
		return
	}
	after, err := int64Param(r, "after")
	if err != nil {
		h.renderError(w, r, http.StatusBadRequest, err)
		return
	}
	timers, err := h.engine.TimersPage(r.Context(), f, after, h.pageSize+1)
	if err != nil {
		h.renderError(w, r, errorStatus(err), err)
		return
	}
	data := &timersData{Filter: form}
	if data.Total, err = h.countTimers(r.Context(), f); err != nil {
		h.renderError(w, r, errorStatus(err), err)
		return
	}
	data.Timers, data.Pager = pageOf(h, r, "after", timers, func(t *workflow.TimerInfo) string { return strconv.FormatInt(t.ID, 10) })
	h.render(w, r, http.StatusOK, "timers", "Timers", data)
}
