package console

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"

	"github.com/riverqueue/river/rivertype"

	"github.com/riverbpmn/riverbpmn/diagnose"
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

type incidentsData struct {
	Incidents []*workflow.Incident
	Pager     pager
	// Total counts the open incidents.
	Total int64
}

func (h *Handler) incidents(w http.ResponseWriter, r *http.Request) {
	after, err := int64Param(r, "after")
	if err != nil {
		h.renderError(w, r, http.StatusBadRequest, err)
		return
	}
	list, err := h.engine.OpenIncidentsPage(r.Context(), after, h.pageSize+1)
	if err != nil {
		h.renderError(w, r, errorStatus(err), err)
		return
	}
	data := &incidentsData{Incidents: list}
	if data.Total, err = h.engine.CountIncidents(r.Context(), nil); err != nil {
		h.renderError(w, r, errorStatus(err), err)
		return
	}
	more := len(list) > h.pageSize
	if more {
		data.Incidents = list[:h.pageSize]
	}
	last := ""
	if n := len(data.Incidents); n > 0 {
		last = strconv.FormatInt(data.Incidents[n-1].ID, 10)
	}
	data.Pager = h.newPager(r, "after", more, last)
	h.render(w, r, http.StatusOK, "incidents", "Open incidents", data)
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
}

func (h *Handler) instance(w http.ResponseWriter, r *http.Request) {
	id := r.URL.Query().Get("id")
	if id == "" {
		h.render(w, r, http.StatusOK, "instance", "Process instance", &instanceData{})
		return
	}
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
	status := http.StatusOK
	if after == 0 && tafter == 0 && len(data.Jobs) == 0 && len(data.Timers) == 0 {
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
	h.render(w, r, http.StatusOK, "suspended", "Suspended", &suspendedData{Targets: targets, Scheduled: scheduled})
}

// ---- clients (liveness sessions) ----

func (h *Handler) clients(w http.ResponseWriter, r *http.Request) {
	sessions, err := h.engine.ClientSessions(r.Context())
	if err != nil {
		h.renderError(w, r, errorStatus(err), err)
		return
	}
	h.render(w, r, http.StatusOK, "clients", "Clients", sessions)
}
