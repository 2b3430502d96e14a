package console

// Lists and search of jobs and process instances, and bulk actions on a
// selection or on every job a filter matches (package search, package
// bulk). A bulk action runs in the background, batch after batch; its page
// shows its progress and reloads itself until it ends.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/riverqueue/river/rivertype"

	"github.com/riverbpmn/riverbpmn/bulk"
	"github.com/riverbpmn/riverbpmn/search"
)

// filterForm is a search.Filter as the filter form holds it.
type filterForm struct {
	States                                    []string
	Kind, JobDefinition, ProcessDefinition    string
	Tenant, Instance, From, To, Order, Cursor string
	// Held is the hold reason the form keeps ("suspended").
	Held string
	// Query is the filter as a URL query (no cursor), for links and the
	// bulk form.
	Query string
}

// HasState says whether the form selects state s.
func (f *filterForm) HasState(s string) bool {
	for _, x := range f.States {
		if x == s {
			return true
		}
	}
	return false
}

// AllStates are River's job states, for the filter form.
func (f *filterForm) AllStates() []rivertype.JobState { return rivertype.JobStates() }

// parseFilter reads a filter from values (a GET query or a POSTed form).
func parseFilter(values url.Values) (*search.Filter, *filterForm, error) {
	form := &filterForm{
		States: values["state"], Kind: strings.TrimSpace(values.Get("kind")),
		JobDefinition: strings.TrimSpace(values.Get("job_definition")), ProcessDefinition: strings.TrimSpace(values.Get("process_definition")),
		Tenant: strings.TrimSpace(values.Get("tenant")), Instance: strings.TrimSpace(values.Get("instance")),
		From: strings.TrimSpace(values.Get("from")), To: strings.TrimSpace(values.Get("to")), Order: values.Get("order"),
		Held: strings.TrimSpace(values.Get("held")),
	}
	f := &search.Filter{
		Kind: form.Kind, JobDefinitionID: form.JobDefinition, ProcessDefinitionKey: form.ProcessDefinition,
		TenantID: form.Tenant, InstancePrefix: form.Instance, Held: form.Held,
	}
	for _, s := range form.States {
		if s != "" {
			f.States = append(f.States, rivertype.JobState(s))
		}
	}
	switch form.Order {
	case "", "newest":
	case "oldest":
		f.Oldest = true
	default:
		return nil, nil, fmt.Errorf("order %q is not newest or oldest", form.Order)
	}
	for _, t := range []struct {
		name, value string
		into        *time.Time
	}{{"from", form.From, &f.CreatedFrom}, {"to", form.To, &f.CreatedTo}} {
		if t.value == "" {
			continue
		}
		v, err := parseUTC(t.value)
		if err != nil {
			return nil, nil, fmt.Errorf("%s %q is not a date and time (YYYY-MM-DDTHH:MM, UTC)", t.name, t.value)
		}
		*t.into = v
	}
	if err := f.Validate(); err != nil {
		return nil, nil, err
	}
	q := url.Values{}
	for _, s := range form.States {
		if s != "" {
			q.Add("state", s)
		}
	}
	for k, v := range map[string]string{"kind": form.Kind, "job_definition": form.JobDefinition, "process_definition": form.ProcessDefinition,
		"tenant": form.Tenant, "instance": form.Instance, "from": form.From, "to": form.To, "order": form.Order, "held": form.Held} {
		if v != "" {
			q.Set(k, v)
		}
	}
	form.Query = q.Encode()
	return f, form, nil
}

// parseSearchRequest reads a listing's filter and its page cursor from the
// request's query.
func parseSearchRequest(r *http.Request) (*search.Filter, *filterForm, int64, error) {
	f, form, err := parseFilter(r.URL.Query())
	if err != nil {
		return nil, nil, 0, err
	}
	cursor, err := int64Param(r, "cursor")
	if err != nil {
		return nil, nil, 0, err
	}
	return f, form, cursor, nil
}

// ---- jobs ----

type jobsData struct {
	Filter *filterForm
	Jobs   []*search.Job
	Pager  pager
	// Total counts the jobs the filter matches (at most search.MaxCount:
	// AtLeast then).
	Total   int64
	AtLeast bool
}

func (h *Handler) jobsPage(w http.ResponseWriter, r *http.Request) {
	f, form, cursor, err := parseSearchRequest(r)
	if err != nil {
		h.renderError(w, r, http.StatusBadRequest, err)
		return
	}
	jobs, err := h.engine.SearchJobs(r.Context(), f, cursor, h.pageSize+1)
	if err != nil {
		h.renderError(w, r, errorStatus(err), err)
		return
	}
	data := &jobsData{Filter: form}
	// The total is worth at most countTimeout: a filter no index serves
	// (an instance prefix over a million jobs) is listed a page at a time
	// but would be counted over the whole table.
	countCtx, cancel := context.WithTimeout(r.Context(), countTimeout)
	data.Total, err = h.engine.CountJobs(countCtx, f)
	cancel()
	switch {
	case err != nil && countCtx.Err() != nil && r.Context().Err() == nil:
		data.Total = -1
	case err != nil:
		h.renderError(w, r, errorStatus(err), err)
		return
	}
	data.AtLeast = data.Total >= search.MaxCount
	more := len(jobs) > h.pageSize
	if more {
		jobs = jobs[:h.pageSize]
	}
	last := ""
	if len(jobs) > 0 {
		last = strconv.FormatInt(jobs[len(jobs)-1].ID, 10)
	}
	data.Jobs = jobs
	data.Pager = h.newPager(r, "cursor", more, last)
	h.render(w, r, http.StatusOK, "jobs", "Jobs", data)
}

// countTimeout bounds the count of the jobs a filter matches on the Jobs
// page.
const countTimeout = time.Second

// ---- process instances ----

type instancesData struct {
	Filter    *filterForm
	Instances []*search.Instance
	Pager     pager
	Total     *total
}

func (h *Handler) instancesPage(w http.ResponseWriter, r *http.Request) {
	if id := strings.TrimSpace(r.URL.Query().Get("id")); id != "" {
		// The form that opens one process instance by its exact id.
		http.Redirect(w, r, h.opts.Prefix+"/instances/"+url.PathEscape(id), http.StatusSeeOther)
		return
	}
	f, form, cursor, err := parseSearchRequest(r)
	if err != nil {
		h.renderError(w, r, http.StatusBadRequest, err)
		return
	}
	page, err := h.engine.SearchProcessInstances(r.Context(), f, cursor, h.pageSize)
	if err != nil {
		h.renderError(w, r, errorStatus(err), err)
		return
	}
	// A page may hold fewer instances than asked while more follow (see
	// search.Instances): its Next says whether and where.
	data := &instancesData{Filter: form, Instances: page.Instances, Pager: h.newPager(r, "cursor", page.Next != 0, strconv.FormatInt(page.Next, 10))}
	if data.Total, err = h.countInstances(r.Context(), f); err != nil {
		h.renderError(w, r, errorStatus(err), err)
		return
	}
	h.render(w, r, http.StatusOK, "instances", "Process instances", data)
}

// ---- bulk actions ----

// Bulk actions are rows (package bulk, Engine.CreateBulkOperation): the
// form records one and this console runs it in the background; its page
// reads the row. A console that stops gives its running operations up
// (Close), and one that dies stops proving it runs them: any console of
// the schema takes them over (takeOver) and resumes them where they were.

// bulkView is what the bulk page shows of an operation.
type bulkView struct {
	*bulk.Operation
	Percent int
}

func newBulkView(op *bulk.Operation) *bulkView {
	v := &bulkView{Operation: op}
	switch {
	case op.State == bulk.StateFinished:
		v.Percent = 100
	case op.Progress.Total > 0:
		v.Percent = min(100, op.Progress.Done*100/op.Progress.Total)
	}
	return v
}

// bulkRunner runs this console's bulk operations in the background.
type bulkRunner struct {
	owner string
	ctx   context.Context
	stop  context.CancelFunc
	wg    sync.WaitGroup
	// lastTakeOver is when the console last looked for operations to take
	// over (unix nanoseconds).
	lastTakeOver atomic.Int64
}

func newBulkRunner() *bulkRunner {
	host, _ := os.Hostname()
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	ctx, stop := context.WithCancel(context.Background())
	return &bulkRunner{owner: fmt.Sprintf("console@%s/%d/%s", host, os.Getpid(), hex.EncodeToString(b)), ctx: ctx, stop: stop}
}

// takeOverEvery is how often a console looks for bulk operations whose
// runner died, on the requests it serves.
const takeOverEvery = 10 * time.Second

// run runs op in the background until it ends or the console closes.
func (h *Handler) run(op *bulk.Operation) {
	h.bulk.wg.Add(1)
	go func() {
		defer h.bulk.wg.Done()
		_ = h.engine.RunBulkOperation(h.bulk.ctx, op, h.bulk.owner) // the outcome is in the row
	}()
}

// takeOver resumes the bulk operations of the schema whose runner died or
// stopped, at most once per takeOverEvery, in the background.
func (h *Handler) takeOver() {
	now := time.Now().UnixNano()
	last := h.bulk.lastTakeOver.Load()
	if now-last < int64(takeOverEvery) || !h.bulk.lastTakeOver.CompareAndSwap(last, now) || h.bulk.ctx.Err() != nil {
		return
	}
	h.bulk.wg.Add(1)
	go func() {
		defer h.bulk.wg.Done()
		ops, err := h.engine.ClaimStaleBulkOperations(h.bulk.ctx, h.bulk.owner, 10)
		if err != nil {
			return // the next request tries again
		}
		for _, op := range ops {
			h.run(op)
		}
	}()
}

// Close stops the bulk operations this console runs, saving their
// progress and giving them up to be resumed by the next console that
// serves a request (this one after a restart, or another), and waits for
// them. The handler serves pages after Close, but starts no bulk action.
func (h *Handler) Close() {
	h.bulk.stop()
	h.bulk.wg.Wait()
}

// startBulk records spec and runs it, then shows its page.
func (h *Handler) startBulk(w http.ResponseWriter, r *http.Request, spec *bulk.Spec, what string) {
	if h.bulk.ctx.Err() != nil {
		h.setFlash(w, "the console is stopping: start the bulk action again once it is back", true)
		http.Redirect(w, r, h.returnTo(r), http.StatusSeeOther)
		return
	}
	op, err := h.engine.CreateBulkOperation(r.Context(), spec, what, h.bulk.owner)
	if err != nil {
		h.setFlash(w, err.Error(), true)
		http.Redirect(w, r, h.returnTo(r), http.StatusSeeOther)
		return
	}
	h.run(op)
	http.Redirect(w, r, fmt.Sprintf("%s/bulk/%d", h.opts.Prefix, op.ID), http.StatusSeeOther)
}

// bulkForm wraps a form that starts a bulk operation: its spec is read
// from the form (read, on error, back to the form with the message).
func (h *Handler) bulkForm(spec func(r *http.Request) (*bulk.Spec, string, error)) http.HandlerFunc {
	return h.post(4<<20, func(w http.ResponseWriter, r *http.Request) {
		s, what, err := spec(r)
		if err != nil {
			h.setFlash(w, err.Error(), true)
			http.Redirect(w, r, h.returnTo(r), http.StatusSeeOther)
			return
		}
		h.startBulk(w, r, s, what)
	})
}

// selectedIDs reads the checked rows (form field "job"), at most
// bulk.MaxJobIDs.
func selectedIDs(r *http.Request) ([]int64, error) {
	values := r.PostForm["job"]
	if len(values) > bulk.MaxJobIDs {
		return nil, fmt.Errorf("%d jobs selected, more than %d", len(values), bulk.MaxJobIDs)
	}
	ids := make([]int64, 0, len(values))
	for _, s := range values {
		id, err := strconv.ParseInt(s, 10, 64)
		if err != nil || id <= 0 {
			return nil, fmt.Errorf("job id %q is not a positive integer", s)
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// bulkJobsSpec reads a bulk action on jobs: the checked ones (scope
// "selected") or every job the posted filter matches (scope "filter").
func (h *Handler) bulkJobsSpec(r *http.Request) (*bulk.Spec, string, error) {
	sel := &bulk.Jobs{}
	var what string
	switch scope := r.PostFormValue("scope"); scope {
	case "selected":
		ids, err := selectedIDs(r)
		if err != nil {
			return nil, "", err
		}
		if len(ids) == 0 {
			return nil, "", fmt.Errorf("no job selected: tick the jobs first, or apply to every job the filter matches")
		}
		sel.JobIDs = ids
		what = fmt.Sprintf("%d selected job(s)", len(ids))
	case "filter":
		f, form, err := parseFilter(r.PostForm)
		if err != nil {
			return nil, "", err
		}
		sel.Filter = *f
		what = "every job matching " + orAll(form.Query)
	default:
		return nil, "", fmt.Errorf("scope %q is not selected or filter", scope)
	}
	switch action := r.PostFormValue("action"); action {
	case bulk.ActionSuspend, bulk.ActionActivate, bulk.ActionStop:
		spec := &bulk.Spec{Action: action, Jobs: sel}
		return spec, actionVerb(spec) + " " + what, nil
	case bulk.ActionPriority:
		p, err := formInt(r, "priority")
		if err != nil {
			return nil, "", err
		}
		return &bulk.Spec{Action: action, Jobs: sel, Priority: p}, fmt.Sprintf("Set priority %d on %s", p, what), nil
	case bulk.ActionRetry:
		n, err := retriesField(r)
		if err != nil {
			return nil, "", err
		}
		if sel.JobIDs == nil {
			return nil, "", fmt.Errorf("retry applies to selected jobs, or to incidents (Incidents page: retry every open incident)")
		}
		return &bulk.Spec{Action: action, Incidents: &bulk.Incidents{JobIDs: sel.JobIDs}, Retries: n}, fmt.Sprintf("Retry (%d retries) %s", n, what), nil
	default:
		return nil, "", fmt.Errorf("action %q is not suspend, activate, stop, priority or retry", action)
	}
}

// bulkRetrySpec reads a bulk retry of incidents: the checked ones, or
// every open one of the posted job definition and instance prefix.
func bulkRetrySpec(r *http.Request) (*bulk.Spec, string, error) {
	n, err := retriesField(r)
	if err != nil {
		return nil, "", err
	}
	sel := &bulk.Incidents{}
	var what string
	switch scope := r.PostFormValue("scope"); scope {
	case "selected":
		ids, err := selectedIDs(r)
		if err != nil {
			return nil, "", err
		}
		if len(ids) == 0 {
			return nil, "", fmt.Errorf("no incident selected: tick the incidents first, or retry every open incident")
		}
		sel.JobIDs = ids
		what = fmt.Sprintf("%d selected incident(s)", len(ids))
	case "all":
		s, form, err := parseIncidentSearch(r.PostForm)
		if err != nil {
			return nil, "", err
		}
		sel = &s.Incidents
		what = "every open incident"
		if q := form.Query; q != "" && q != "order=oldest" && q != "order=newest" {
			what += " matching " + orAll(q)
		}
	default:
		return nil, "", fmt.Errorf("scope %q is not selected or all", scope)
	}
	return &bulk.Spec{Action: bulk.ActionRetry, Incidents: sel, Retries: n}, fmt.Sprintf("Retry (%d retries) %s", n, what), nil
}

func retriesField(r *http.Request) (int, error) {
	n, err := formInt(r, "retries")
	if err != nil {
		return 0, err
	}
	if n < 1 || n > 32767 {
		return 0, fmt.Errorf("retries %d is out of range: 1 to 32767", n)
	}
	return int(n), nil
}

func (h *Handler) bulkPage(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		h.renderError(w, r, http.StatusBadRequest, fmt.Errorf("bulk operation id %q is not a positive integer", r.PathValue("id")))
		return
	}
	op, err := h.engine.BulkOperation(r.Context(), id)
	if err != nil {
		h.renderError(w, r, errorStatus(err), err)
		return
	}
	if op.State == bulk.StateRunning {
		w.Header().Set("Refresh", "1") // reload until it ends; no JavaScript
	}
	h.render(w, r, http.StatusOK, "bulk", "Bulk action", newBulkView(op))
}

type bulkListData struct {
	Operations []*bulkView
	Pager      pager
}

// bulkList lists the bulk operations, newest first: the running ones and
// the history.
func (h *Handler) bulkList(w http.ResponseWriter, r *http.Request) {
	before, err := int64Param(r, "before")
	if err != nil {
		h.renderError(w, r, http.StatusBadRequest, err)
		return
	}
	ops, err := h.engine.BulkOperations(r.Context(), before, h.pageSize+1)
	if err != nil {
		h.renderError(w, r, errorStatus(err), err)
		return
	}
	data := &bulkListData{}
	ops, data.Pager = pageOf(h, r, "before", ops, func(op *bulk.Operation) string { return strconv.FormatInt(op.ID, 10) })
	for _, op := range ops {
		data.Operations = append(data.Operations, newBulkView(op))
	}
	h.render(w, r, http.StatusOK, "bulklist", "Bulk actions", data)
}

func orAll(query string) string {
	if query == "" {
		return "(no filter: all jobs)"
	}
	q, err := url.QueryUnescape(query)
	if err != nil {
		return query
	}
	return q
}
