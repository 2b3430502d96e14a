package console

// Job status events and schema maintenance: the Events page (newest events
// first, by process instance, with the switch and the prune button) and the
// Maintenance page (timer prune, tenant fairness indexes, fetch-order
// indexes, exclusive head-of-key indexes). Each button calls the engine
// method the CLI verb of the same name calls: events-enable,
// events-disable, events-prune, timer-prune, fairness-enable,
// fairness-disable, fetch-index-enable, fetch-index-disable,
// head-index-enable, head-index-disable.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/riverbpmn/riverbpmn/events"
	"github.com/riverbpmn/riverbpmn/exclusive"
	"github.com/riverbpmn/riverbpmn/workflow"
)

// ---- events ----

type eventsData struct {
	// Enabled says whether the events trigger is on in the schema.
	Enabled bool
	// Instance is the process instance the page is filtered by ("" none).
	Instance string
	Events   []events.Event
	Total    *total
	// Newest links the first page when not on it; Older the next page.
	Newest, Older string
	// Subscriptions are the named subscriptions, with how far behind each is.
	Subscriptions []events.Subscription
}

func (h *Handler) eventsPage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	var before *events.Cursor
	if s := q.Get("before"); s != "" {
		c, err := events.ParseCursor(s)
		if err != nil {
			h.renderError(w, r, http.StatusBadRequest, fmt.Errorf("query parameter before %q is not an events cursor (txid:id, two non-negative integers)", s))
			return
		}
		before = &c
	}
	ctx := r.Context()
	data := &eventsData{Instance: strings.TrimSpace(q.Get("instance"))}
	var err error
	if data.Enabled, err = h.engine.EventsEnabled(ctx); err != nil {
		h.renderError(w, r, errorStatus(err), err)
		return
	}
	page, err := h.engine.EventsPage(ctx, before, data.Instance, h.pageSize)
	if err != nil {
		h.renderError(w, r, errorStatus(err), err)
		return
	}
	data.Events = page.Events
	if data.Total, err = h.countEvents(ctx, data.Instance); err != nil {
		h.renderError(w, r, errorStatus(err), err)
		return
	}
	if data.Subscriptions, err = h.engine.EventSubscriptions(ctx); err != nil {
		h.renderError(w, r, errorStatus(err), err)
		return
	}
	if before != nil {
		data.Newest = h.pageURL(r, "before", "")
	}
	if page.More {
		data.Older = h.pageURL(r, "before", page.Older.String())
	}
	title := "Events"
	if data.Instance != "" {
		title = "Events of " + data.Instance
	}
	h.render(w, r, http.StatusOK, "events", title, data)
}

func (h *Handler) enableEvents(r *http.Request) (string, error) {
	return h.switchEvents(r.Context(), true)
}

func (h *Handler) disableEvents(r *http.Request) (string, error) {
	return h.switchEvents(r.Context(), false)
}

// switchEvents switches job status events on or off and says what changed.
func (h *Handler) switchEvents(ctx context.Context, on bool) (string, error) {
	was, err := h.engine.EventsEnabled(ctx)
	if err != nil {
		return "", err
	}
	change := h.engine.DisableEvents
	if on {
		change = h.engine.EnableEvents
	}
	if err := change(ctx); err != nil {
		return "", err
	}
	now, err := h.engine.EventsEnabled(ctx)
	if err != nil {
		return "", err
	}
	switch {
	case now != on:
		return "", fmt.Errorf("job status events are still %s", onOff(now))
	case was == on:
		return fmt.Sprintf("Job status events were already %s: nothing changed.", onOff(on)), nil
	case on:
		return "Job status events switched on: trigger river_bpmn_job_event created on river_job.", nil
	}
	return "Job status events switched off: trigger river_bpmn_job_event dropped; the events recorded so far are kept.", nil
}

func onOff(on bool) string {
	if on {
		return "on"
	}
	return "off"
}

// olderThanField reads the form's older_than duration (Go syntax, as the
// CLI's --older-than) and returns the time it reaches back to.
func olderThanField(r *http.Request) (time.Time, error) {
	s := strings.TrimSpace(r.PostFormValue("older_than"))
	d, err := time.ParseDuration(s)
	switch {
	case err != nil:
		return time.Time{}, fmt.Errorf("older_than %q is not a duration (for example 24h, 90m or 168h for a week)", s)
	case d < 0:
		return time.Time{}, fmt.Errorf("older_than %q must not be negative", s)
	}
	return time.Now().Add(-d).UTC(), nil
}

func (h *Handler) pruneEvents(r *http.Request) (string, error) {
	return prune(r, h.engine.PruneEvents, "event(s) written")
}

// prune runs a prune call (PruneEvents, PruneTimers) with the form's
// older_than, and says how many of what it deleted.
func prune(r *http.Request, call func(context.Context, time.Time) (int64, error), what string) (string, error) {
	before, err := olderThanField(r)
	if err != nil {
		return "", err
	}
	n, err := call(r.Context(), before)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("Deleted %d %s before %s.", n, what, before.Format(time.RFC3339)), nil
}

// ---- maintenance ----

type maintenanceData struct {
	// TenantIndexes, FetchIndexes and HeadIndexes are the valid indexes
	// present, sorted.
	TenantIndexes, FetchIndexes, HeadIndexes []string
}

func (h *Handler) maintenance(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	data := &maintenanceData{}
	var err error
	if data.TenantIndexes, err = h.engine.TenantFairnessIndexes(ctx); err != nil {
		h.renderError(w, r, errorStatus(err), err)
		return
	}
	if data.FetchIndexes, err = h.engine.FetchOrderIndexes(ctx); err != nil {
		h.renderError(w, r, errorStatus(err), err)
		return
	}
	if data.HeadIndexes, err = h.engine.ExclusiveHeadIndexes(ctx); err != nil {
		h.renderError(w, r, errorStatus(err), err)
		return
	}
	h.render(w, r, http.StatusOK, "maintenance", "Indexes", data)
}

func (h *Handler) pruneTimers(r *http.Request) (string, error) {
	return prune(r, h.engine.PruneTimers, "timer(s) that ended")
}

// orderValues are the form's order checkboxes, as the CLI's order flags.
var orderValues = []string{"by-priority", "timers-first", "by-due-date"}

// orderField reads the form's order checkboxes into the acquisition whose
// index is meant (the CLI's --by-priority, --timers-first, --by-due-date).
func orderField(r *http.Request) (workflow.Acquisition, error) {
	var acq workflow.Acquisition
	for _, v := range r.PostForm["order"] {
		switch v {
		case "by-priority":
			acq.ByPriority = true
		case "timers-first":
			acq.TimersFirst = true
		case "by-due-date":
			acq.ByDueDate = true
		default:
			return acq, fmt.Errorf("order %q is not one of %s", v, strings.Join(orderValues, ", "))
		}
	}
	return acq, nil
}

// indexFamily is what the index buttons need of one family of on-demand
// indexes: what to call it, and the engine's methods.
type indexFamily struct {
	what    string
	present func(context.Context) ([]string, error)
	enable  func(context.Context, workflow.Acquisition) error
	disable func(context.Context) error
}

func (h *Handler) tenantIndexes() indexFamily {
	return indexFamily{
		what:    "tenant fairness index",
		present: h.engine.TenantFairnessIndexes,
		enable: func(ctx context.Context, acq workflow.Acquisition) error {
			return h.engine.EnableTenantFairness(ctx, acq)
		},
		disable: h.engine.DisableTenantFairness,
	}
}

func (h *Handler) fetchIndexes() indexFamily {
	return indexFamily{
		what:    "fetch-order index",
		present: h.engine.FetchOrderIndexes,
		enable: func(ctx context.Context, acq workflow.Acquisition) error {
			return h.engine.EnableFetchOrderIndexes(ctx, acq)
		},
		disable: h.engine.DisableFetchOrderIndexes,
	}
}

// indexBuildTimeout bounds an index build a button started: it goes on when
// the browser gives up waiting (a cancelled CREATE INDEX CONCURRENTLY leaves
// an invalid index behind), up to this long.
const indexBuildTimeout = time.Hour

// enableIndex creates the index of family f named name (the order's), and
// says whether it created it or found it. The build outlives the request
// (up to indexBuildTimeout): closing the tab does not cancel it.
func enableIndex(ctx context.Context, f indexFamily, acq workflow.Acquisition, name string) (string, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), indexBuildTimeout)
	defer cancel()
	before, err := f.present(ctx)
	if err != nil {
		return "", err
	}
	if err := f.enable(ctx, acq); err != nil {
		return "", err
	}
	after, err := f.present(ctx)
	if err != nil {
		return "", err
	}
	switch {
	case !slices.Contains(after, name):
		return "", fmt.Errorf("%s %s is still not there", f.what, name)
	case slices.Contains(before, name):
		return fmt.Sprintf("The %s %s was already present: nothing changed.", f.what, name), nil
	}
	return fmt.Sprintf("Created index %s (%s).", name, f.what), nil
}

// disableIndexes drops every index of family f and names those dropped.
func disableIndexes(ctx context.Context, f indexFamily) (string, error) {
	before, err := f.present(ctx)
	if err != nil {
		return "", err
	}
	if err := f.disable(ctx); err != nil {
		return "", err
	}
	after, err := f.present(ctx)
	if err != nil {
		return "", err
	}
	if len(after) > 0 {
		return "", fmt.Errorf("%ses still present: %s", f.what, strings.Join(after, ", "))
	}
	if len(before) == 0 {
		return fmt.Sprintf("No %s was present: nothing dropped.", f.what), nil
	}
	return fmt.Sprintf("Dropped index(es) %s (%ses).", strings.Join(before, ", "), f.what), nil
}

func (h *Handler) enableFairness(r *http.Request) (string, error) {
	acq, err := orderField(r)
	if err != nil {
		return "", err
	}
	return enableIndex(r.Context(), h.tenantIndexes(), acq, workflow.TenantFairnessIndex(acq))
}

func (h *Handler) disableFairness(r *http.Request) (string, error) {
	return disableIndexes(r.Context(), h.tenantIndexes())
}

func (h *Handler) enableFetchIndex(r *http.Request) (string, error) {
	acq, err := orderField(r)
	if err != nil {
		return "", err
	}
	name := workflow.FetchOrderIndex(acq)
	if name == "" {
		return "", errors.New("order: tick by-priority, timers-first and/or by-due-date (River's order reads River's own index: there is none to create)")
	}
	return enableIndex(r.Context(), h.fetchIndexes(), acq, name)
}

func (h *Handler) disableFetchIndex(r *http.Request) (string, error) {
	return disableIndexes(r.Context(), h.fetchIndexes())
}

// headIndexes is the family of the exclusive head-of-key indexes, with the
// buttons of the CLI's head-index-enable (for the scope in force) and
// head-index-disable.
func (h *Handler) headIndexes() indexFamily {
	return indexFamily{
		what:    "exclusive head-of-key index",
		present: h.engine.ExclusiveHeadIndexes,
		enable: func(ctx context.Context, acq workflow.Acquisition) error {
			return h.engine.EnableExclusiveHeadIndexes(ctx, acq)
		},
		disable: h.engine.DisableExclusiveHeadIndexes,
	}
}

func (h *Handler) enableHeadIndex(r *http.Request) (string, error) {
	acq, err := orderField(r)
	if err != nil {
		return "", err
	}
	scope, err := h.engine.ExclusiveScopeInForce(r.Context())
	if err != nil {
		return "", err
	}
	if workflow.ExclusiveHeadIndex(exclusive.ProcessInstance, acq) == "" {
		return "", errors.New("order: tick timers-first and/or by-due-date (River's order and by priority alone have head-of-key indexes from migrations)")
	}
	name := workflow.ExclusiveHeadIndex(scope, acq)
	if name == "" {
		return "", fmt.Errorf("the exclusive scope in force is %s: it enforces nothing and has no head-of-key index", scope.Name())
	}
	return enableIndex(r.Context(), h.headIndexes(), acq, name)
}

func (h *Handler) disableHeadIndex(r *http.Request) (string, error) {
	return disableIndexes(r.Context(), h.headIndexes())
}
