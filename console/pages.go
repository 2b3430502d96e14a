package console

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/riverqueue/river/rivertype"

	"github.com/riverbpmn/riverbpmn/diagnose"
	"github.com/riverbpmn/riverbpmn/events"
	"github.com/riverbpmn/riverbpmn/exclusive"
	"github.com/riverbpmn/riverbpmn/hold"
	"github.com/riverbpmn/riverbpmn/jobcontrol"
	"github.com/riverbpmn/riverbpmn/lifecycle"
	"github.com/riverbpmn/riverbpmn/suspension"
	"github.com/riverbpmn/riverbpmn/workflow"
)

// errorStatus maps an engine error to the HTTP status of the page showing it.
func errorStatus(err error) int {
	var jcErr *workflow.JobContextError
	switch {
	case errors.Is(err, workflow.ErrNotFound):
		return http.StatusNotFound
	case errors.As(err, &jcErr):
		return http.StatusBadRequest
	default:
		return http.StatusInternalServerError
	}
}

// int64Param parses an optional non-negative integer query parameter.
func int64Param(r *http.Request, name string) (int64, error) {
	s := r.URL.Query().Get(name)
	if s == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("query parameter %s %q is not a non-negative integer", name, s)
	}
	return n, nil
}

// ---- incidents ----

// incidentForm is an incident search as the filter form holds it.
type incidentForm struct {
	JobDefinition, Activity, ProcessDefinition, Tenant string
	Error, Instance, OlderThan, Order                  string
	Resolved, Group                                    bool
	// Query is the filter as a URL query (no cursor), for links.
	Query string
}

// parseIncidentSearch reads an incident search from values (a GET query or
// a POSTed form).
func parseIncidentSearch(values url.Values) (*workflow.IncidentSearch, *incidentForm, error) {
	f := &incidentForm{
		JobDefinition: strings.TrimSpace(values.Get("job_definition")), Activity: strings.TrimSpace(values.Get("activity")),
		ProcessDefinition: strings.TrimSpace(values.Get("process_definition")), Tenant: strings.TrimSpace(values.Get("tenant")),
		Error: strings.TrimSpace(values.Get("error")), Instance: strings.TrimSpace(values.Get("instance")),
		OlderThan: strings.TrimSpace(values.Get("older_than")), Order: values.Get("order"),
		Resolved: values.Get("resolved") != "", Group: values.Get("group") != "",
	}
	s := &workflow.IncidentSearch{Resolved: f.Resolved}
	s.JobDefinitionID, s.ActivityID, s.ProcessDefinitionKey, s.TenantID = f.JobDefinition, f.Activity, f.ProcessDefinition, f.Tenant
	s.ErrorContains, s.InstancePrefix = f.Error, f.Instance
	switch f.Order {
	case "", "oldest":
		s.Oldest = true
	case "newest":
	default:
		return nil, nil, fmt.Errorf("order %q is not newest or oldest", f.Order)
	}
	if f.OlderThan != "" {
		d, err := time.ParseDuration(f.OlderThan)
		if err != nil || d < 0 {
			return nil, nil, fmt.Errorf("older_than %q is not a duration (for example 30m, 24h)", f.OlderThan)
		}
		s.OpenedBefore = time.Now().Add(-d).UTC()
	}
	q := url.Values{}
	for k, v := range map[string]string{"job_definition": f.JobDefinition, "activity": f.Activity, "process_definition": f.ProcessDefinition,
		"tenant": f.Tenant, "error": f.Error, "instance": f.Instance, "older_than": f.OlderThan, "order": f.Order} {
		if v != "" {
			q.Set(k, v)
		}
	}
	if f.Resolved {
		q.Set("resolved", "1")
	}
	f.Query = q.Encode()
	return s, f, nil
}

type incidentsData struct {
	Filter    *incidentForm
	Incidents []*workflow.Incident
	Groups    []*incidentGroup
	Pager     pager
	// Total counts the open incidents the filter keeps.
	Total int64
}

// incidentGroup is a group of the "group by error" view, with the link to
// its incidents.
type incidentGroup struct {
	*workflow.IncidentGroup
	Link string
}

func (h *Handler) incidents(w http.ResponseWriter, r *http.Request) {
	s, form, err := parseIncidentSearch(r.URL.Query())
	if err != nil {
		h.renderError(w, r, http.StatusBadRequest, err)
		return
	}
	after, err := int64Param(r, "after")
	if err != nil {
		h.renderError(w, r, http.StatusBadRequest, err)
		return
	}
	ctx := r.Context()
	data := &incidentsData{Filter: form}
	if data.Total, err = h.engine.CountIncidents(ctx, &s.Incidents); err != nil {
		h.renderError(w, r, errorStatus(err), err)
		return
	}
	title := "Open incidents"
	if form.Resolved {
		title = "Incidents"
	}
	if form.Group {
		groups, err := h.engine.IncidentGroups(ctx, s)
		if err != nil {
			h.renderError(w, r, errorStatus(err), err)
			return
		}
		for _, g := range groups {
			q, _ := url.ParseQuery(form.Query)
			q.Set("error", g.Error)
			data.Groups = append(data.Groups, &incidentGroup{IncidentGroup: g, Link: h.opts.Prefix + "/incidents?" + q.Encode()})
		}
		h.render(w, r, http.StatusOK, "incidents", title, data)
		return
	}
	list, err := h.engine.SearchIncidents(ctx, s, after, h.pageSize+1)
	if err != nil {
		h.renderError(w, r, errorStatus(err), err)
		return
	}
	data.Incidents, data.Pager = pageOf(h, r, "after", list, func(i *workflow.Incident) string { return strconv.FormatInt(i.ID, 10) })
	h.render(w, r, http.StatusOK, "incidents", title, data)
}

// ---- process instance ----

type instanceJob struct {
	Job      *rivertype.JobRow
	Context  *workflow.JobContext
	HoldsKey bool
	WaitsFor int64
}

type instanceData struct {
	ID          string
	Jobs        []*instanceJob
	JobsPager   pager
	Timers      []*workflow.TimerInfo
	TimersPager pager
	// Key and Holder are the instance's exclusive key and the lock on it
	// (nil when free), as seen from the first exclusive job on the page.
	Key    string
	Holder *workflow.ExclusiveLock
	// Root is the instance's root process instance (its own id when it is
	// a root), and Tree the instances under that root.
	Root string
	Tree []*workflow.TreeMember
	// Parent is the instance that called this one, as its jobs name it
	// (empty for a root, or when they name none).
	Parent string
	// History is the instance's timeline, newest first: its job status
	// events (a page of them, paged by HistoryOlder), and on the first page
	// the creation of the jobs listed, or, while no event of the instance
	// is recorded, the times the jobs' rows keep.
	History      []*historyEntry
	HistoryNewer string
	HistoryOlder string
	// EventsOff says that job status events are off in the schema.
	EventsOff bool
}

// historyEntry is one line of an instance's timeline.
type historyEntry struct {
	At       time.Time
	JobID    int64
	Activity string
	// What is the event's status (RUNNING, SUCCEEDED, FAILED, ABORTED,
	// INCIDENT), or CREATED, ATTEMPTED, FINALIZED from a job's row.
	What    string
	Attempt int
	Error   string
}

// instanceHistory builds the instance's timeline from its events before
// the cursor (nil: the newest) and the jobs of the page shown.
func (h *Handler) instanceHistory(ctx context.Context, r *http.Request, data *instanceData, jobs []*rivertype.JobRow, before *events.Cursor) error {
	on, err := h.engine.EventsEnabled(ctx)
	if err != nil {
		return err
	}
	data.EventsOff = !on
	page, err := h.engine.EventsPage(ctx, before, data.ID, h.pageSize)
	if err != nil {
		return err
	}
	for _, ev := range page.Events {
		e := &historyEntry{At: ev.At, JobID: ev.JobID, What: string(ev.Status), Attempt: ev.Attempt, Error: ev.Error}
		var jc workflow.JobContext
		if len(ev.JobContext) > 0 && json.Unmarshal(ev.JobContext, &jc) == nil {
			e.Activity = jc.ActivityID
		}
		data.History = append(data.History, e)
	}
	if before != nil {
		data.HistoryNewer = h.pageURL(r, "hbefore", "")
	}
	if page.More {
		data.HistoryOlder = h.pageURL(r, "hbefore", page.Older.String())
	}
	if before == nil {
		// The jobs' own times, not older than the page's oldest event
		// when older events follow on the next page.
		var cut time.Time
		if page.More && len(page.Events) > 0 {
			cut = page.Events[len(page.Events)-1].At
		}
		noEvents := len(page.Events) == 0
		add := func(at *time.Time, job *rivertype.JobRow, what string) {
			if at == nil || at.IsZero() || at.Before(cut) {
				return
			}
			e := &historyEntry{At: *at, JobID: job.ID, What: what, Attempt: job.Attempt}
			if jc, err := workflow.JobContextOf(job); err == nil {
				e.Activity = jc.ActivityID
			}
			if what == "FINALIZED" && len(job.Errors) > 0 {
				e.Error = job.Errors[len(job.Errors)-1].Error
			}
			data.History = append(data.History, e)
		}
		for _, job := range jobs {
			created := job.CreatedAt
			add(&created, job, "CREATED")
			if noEvents {
				add(job.AttemptedAt, job, "ATTEMPTED")
				add(job.FinalizedAt, job, "FINALIZED")
			}
		}
		sort.SliceStable(data.History, func(i, j int) bool { return data.History[i].At.After(data.History[j].At) })
	}
	return nil
}

func (h *Handler) instance(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	after, err := int64Param(r, "after")
	if err != nil {
		h.renderError(w, r, http.StatusBadRequest, err)
		return
	}
	tafter, err := int64Param(r, "tafter")
	if err != nil {
		h.renderError(w, r, http.StatusBadRequest, err)
		return
	}
	var hbefore *events.Cursor
	if s := r.URL.Query().Get("hbefore"); s != "" {
		c, err := events.ParseCursor(s)
		if err != nil {
			h.renderError(w, r, http.StatusBadRequest, fmt.Errorf("query parameter hbefore %q is not an events cursor (txid:id, two non-negative integers)", s))
			return
		}
		hbefore = &c
	}
	ctx := r.Context()
	jobs, err := h.engine.ProcessInstanceJobsPage(ctx, id, after, h.pageSize+1)
	if err != nil {
		h.renderError(w, r, errorStatus(err), err)
		return
	}
	timers, err := h.engine.ProcessInstanceTimersPage(ctx, id, tafter, h.pageSize+1)
	if err != nil {
		h.renderError(w, r, errorStatus(err), err)
		return
	}
	data := &instanceData{ID: id}
	more := len(jobs) > h.pageSize
	if more {
		jobs = jobs[:h.pageSize]
	}
	last := ""
	if len(jobs) > 0 {
		last = strconv.FormatInt(jobs[len(jobs)-1].ID, 10)
	}
	data.JobsPager = h.newPager(r, "after", more, last)
	more = len(timers) > h.pageSize
	if more {
		timers = timers[:h.pageSize]
	}
	last = ""
	if len(timers) > 0 {
		last = strconv.FormatInt(timers[len(timers)-1].ID, 10)
	}
	data.Timers = timers
	data.TimersPager = h.newPager(r, "tafter", more, last)

	// Every exclusive job of an instance has the same key (the instance, or
	// its root): one look at the lock through the first exclusive job that
	// could hold or wait for it tells the whole page.
	var probed bool
	for _, job := range jobs {
		ij := &instanceJob{Job: job}
		if jc, err := workflow.JobContextOf(job); err == nil {
			ij.Context = &jc
		}
		data.Jobs = append(data.Jobs, ij)
		exclusive := ij.Context != nil && ij.Context.Exclusive != nil && *ij.Context.Exclusive
		if !probed && exclusive && (job.State == rivertype.JobStateAvailable || job.State == rivertype.JobStateRunning) {
			probed = true
			wait, err := h.engine.ExclusiveWait(ctx, job.ID)
			if err != nil && !errors.Is(err, workflow.ErrNotFound) {
				h.renderError(w, r, errorStatus(err), err)
				return
			}
			if wait != nil {
				data.Key, data.Holder = wait.Key, wait.Holder
			}
		}
	}
	if data.Holder != nil && !data.Holder.Stale {
		for _, ij := range data.Jobs {
			exclusive := ij.Context != nil && ij.Context.Exclusive != nil && *ij.Context.Exclusive
			switch {
			case ij.Job.ID == data.Holder.JobID:
				ij.HoldsKey = true
			case exclusive && ij.Job.State == rivertype.JobStateAvailable:
				ij.WaitsFor = data.Holder.JobID
			}
		}
	}
	for _, ij := range data.Jobs {
		if ij.Context != nil && ij.Context.RootProcessInstanceID != "" {
			data.Root = ij.Context.RootProcessInstanceID
			data.Parent = ij.Context.ParentProcessInstanceID
			break
		}
	}
	if data.Root == "" && len(data.Jobs) > 0 {
		data.Root = id
	}
	if data.Root != "" {
		if data.Tree, err = h.engine.ProcessInstanceTree(ctx, data.Root, workflow.MaxPageSize); err != nil {
			h.renderError(w, r, errorStatus(err), err)
			return
		}
	}
	if err := h.instanceHistory(ctx, r, data, jobs, hbefore); err != nil {
		h.renderError(w, r, errorStatus(err), err)
		return
	}
	status := http.StatusOK
	if after == 0 && tafter == 0 && hbefore == nil && len(data.Jobs) == 0 && len(data.Timers) == 0 && len(data.History) == 0 {
		status = http.StatusNotFound
	}
	h.render(w, r, status, "instance", "Process instance "+id, data)
}

// ---- job definitions ----

type definitionsData struct {
	Definitions []*workflow.JobDefinitionSummary
	Pager       pager
}

func (h *Handler) definitions(w http.ResponseWriter, r *http.Request) {
	after := r.URL.Query().Get("after")
	defs, err := h.engine.JobDefinitionsPage(r.Context(), after, h.pageSize+1)
	if err != nil {
		h.renderError(w, r, errorStatus(err), err)
		return
	}
	more := len(defs) > h.pageSize
	if more {
		defs = defs[:h.pageSize]
	}
	last := ""
	if len(defs) > 0 {
		last = defs[len(defs)-1].ID
	}
	h.render(w, r, http.StatusOK, "definitions", "Job definitions", &definitionsData{Definitions: defs, Pager: h.newPager(r, "after", more, last)})
}

// ---- exclusive locks ----

type locksData struct {
	Locks []*workflow.ExclusiveLock
	Pager pager
	// Scope is the exclusive scope in force in the schema, and Recorded
	// its record (nil when no client has started on the schema yet: the
	// console's engine's scope then applies).
	Scope    exclusive.Scope
	Recorded *exclusive.RecordedScope
	// Scopes are the scopes an operator may record.
	Scopes []exclusive.Scope
}

func (h *Handler) locks(w http.ResponseWriter, r *http.Request) {
	after := r.URL.Query().Get("after")
	locks, err := h.engine.ExclusiveLocksPage(r.Context(), after, h.pageSize+1)
	if err != nil {
		h.renderError(w, r, errorStatus(err), err)
		return
	}
	scope, err := h.engine.ExclusiveScopeInForce(r.Context())
	if err != nil {
		h.renderError(w, r, errorStatus(err), err)
		return
	}
	recorded, err := h.engine.RecordedExclusiveScope(r.Context())
	if err != nil {
		h.renderError(w, r, errorStatus(err), err)
		return
	}
	more := len(locks) > h.pageSize
	if more {
		locks = locks[:h.pageSize]
	}
	last := ""
	if len(locks) > 0 {
		last = locks[len(locks)-1].Key
	}
	h.render(w, r, http.StatusOK, "locks", "Exclusive locks", &locksData{
		Locks: locks, Pager: h.newPager(r, "after", more, last),
		Scope: scope, Recorded: recorded, Scopes: exclusive.Scopes,
	})
}

// ---- one job ----

type jobData struct {
	*workflow.JobDetails
	// Attempts are the job's attempt errors, newest first.
	Attempts []rivertype.AttemptError
	// CanSetRetries is false for a job whose retries cannot be set (running,
	// completed, cancelled).
	CanSetRetries bool
	RiverUIJob    string
	// Status is the job's status and progress (package jobcontrol).
	Status *jobcontrol.JobStatus
	// Dependencies are what holds the job, and its prerequisites (package
	// lifecycle).
	Dependencies *lifecycle.Progress
	// Finished is true for a completed, cancelled or discarded job;
	// Suspended for a job held for hold.Suspended.
	Finished, Suspended bool
	// Why says why the job is not running (package diagnose).
	Why *diagnose.Diagnosis
	// QueueNote says that no client works the job's queue, or that it is
	// paused ("" otherwise), from River's record of its queues.
	QueueNote string
}

func (h *Handler) job(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		h.renderError(w, r, http.StatusBadRequest, fmt.Errorf("job id %q is not a positive integer", r.PathValue("id")))
		return
	}
	ctx := r.Context()
	details, err := h.engine.JobDetails(ctx, id)
	if err != nil {
		h.renderError(w, r, errorStatus(err), err)
		return
	}
	data := &jobData{JobDetails: details}
	if data.Status, err = h.engine.JobStatus(ctx, id); err != nil {
		h.renderError(w, r, errorStatus(err), err)
		return
	}
	if data.Dependencies, err = h.engine.JobDependencies(ctx, id); err != nil {
		h.renderError(w, r, errorStatus(err), err)
		return
	}
	data.Suspended = slices.Contains(data.Dependencies.Reasons, hold.Suspended)
	if data.Why, err = h.engine.WhyWaiting(ctx, id); err != nil {
		h.renderError(w, r, errorStatus(err), err)
		return
	}
	for i := len(details.Job.Errors) - 1; i >= 0; i-- {
		data.Attempts = append(data.Attempts, details.Job.Errors[i])
	}
	switch details.Job.State {
	case rivertype.JobStateCompleted, rivertype.JobStateCancelled, rivertype.JobStateDiscarded:
		data.Finished = true
	}
	switch details.Job.State {
	case rivertype.JobStateRunning, rivertype.JobStateCompleted, rivertype.JobStateCancelled:
	default:
		data.CanSetRetries = true
	}
	if !data.Finished && details.Job.State != rivertype.JobStateRunning {
		if data.QueueNote, err = h.queueNote(r, details.Job.Queue); err != nil {
			h.renderError(w, r, errorStatus(err), err)
			return
		}
	}
	h.render(w, r, http.StatusOK, "job", fmt.Sprintf("Job %d", id), data)
}

// ---- suspended targets and scheduled suspensions ----

type suspendedData struct {
	Targets   []suspension.Suspended
	Scheduled []suspension.Scheduled
}

func (h *Handler) suspended(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	targets, err := h.engine.SuspendedTargets(ctx)
	if err != nil {
		h.renderError(w, r, errorStatus(err), err)
		return
	}
	scheduled, err := h.engine.ScheduledSuspensions(ctx)
	if err != nil {
		h.renderError(w, r, errorStatus(err), err)
		return
	}
	h.render(w, r, http.StatusOK, "suspended", "Suspensions", &suspendedData{Targets: targets, Scheduled: scheduled})
}

// ---- clients (liveness sessions) ----

func (h *Handler) clients(w http.ResponseWriter, r *http.Request) {
	sessions, err := h.engine.ClientSessions(r.Context())
	if err != nil {
		h.renderError(w, r, errorStatus(err), err)
		return
	}
	h.render(w, r, http.StatusOK, "clients", "Sessions", sessions)
}
