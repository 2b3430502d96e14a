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
	"strconv"
	"strings"
	"sync"
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
	}
	f := &search.Filter{
		Kind: form.Kind, JobDefinitionID: form.JobDefinition, ProcessDefinitionKey: form.ProcessDefinition,
		TenantID: form.Tenant, InstancePrefix: form.Instance,
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
		"tenant": form.Tenant, "instance": form.Instance, "from": form.From, "to": form.To, "order": form.Order} {
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
}

func (h *Handler) jobsPage(w http.ResponseWriter, r *http.Request) {
	f, form, cursor, err := parseSearchRequest(r)
	if err != nil {
		h.renderError(w, r, http.StatusBadRequest, err)
		return
	}
	jobs, err := h.engine.SearchJobs(r.Context(), f, cursor, h.pageSize+1)
	if err != nil {
		h.renderError(w, r, http.StatusBadRequest, err)
		return
	}
	data := &jobsData{Filter: form}
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

// ---- process instances ----

type instancesData struct {
	Filter    *filterForm
	Instances []*search.Instance
	Pager     pager
}

func (h *Handler) instancesPage(w http.ResponseWriter, r *http.Request) {
	f, form, cursor, err := parseSearchRequest(r)
	if err != nil {
		h.renderError(w, r, http.StatusBadRequest, err)
		return
	}
	list, err := h.engine.SearchProcessInstances(r.Context(), f, cursor, h.pageSize)
	if err != nil {
		h.renderError(w, r, http.StatusBadRequest, err)
		return
	}
	last := ""
	if len(list) > 0 {
		last = strconv.FormatInt(list[len(list)-1].JobID, 10)
	}
	// A page may hold fewer instances than asked while more follow (see
	// search.Instances): offer the next page until one comes back empty.
	data := &instancesData{Filter: form, Instances: list, Pager: h.newPager(r, "cursor", len(list) > 0, last)}
	h.render(w, r, http.StatusOK, "instances", "Process instances", data)
}

// ---- bulk actions ----

// bulkOp is a bulk action running in the background.
type bulkOp struct {
	ID, What string
	Started  time.Time

	mu       sync.Mutex
	progress bulk.Progress
	err      error
	done     bool
}

// bulkView is what the bulk page shows of an operation.
type bulkView struct {
	ID, What string
	Started  time.Time
	Progress bulk.Progress
	Err      string
	Done     bool
	Percent  int
}

func (op *bulkOp) view() *bulkView {
	op.mu.Lock()
	defer op.mu.Unlock()
	v := &bulkView{ID: op.ID, What: op.What, Started: op.Started, Progress: op.progress, Done: op.done}
	if op.err != nil {
		v.Err = op.err.Error()
	}
	switch {
	case op.done && op.err == nil:
		v.Percent = 100
	case op.progress.Total > 0:
		v.Percent = min(100, op.progress.Done*100/op.progress.Total)
	}
	return v
}

// maxBulkOps caps the operations a console remembers (finished ones are
// forgotten oldest first).
const maxBulkOps = 100

type bulkOps struct {
	mu    sync.Mutex
	ops   map[string]*bulkOp
	order []string
}

func (b *bulkOps) start(what string, run func(ctx context.Context, report func(bulk.Progress)) (*bulk.Progress, error)) *bulkOp {
	id := make([]byte, 8)
	_, _ = rand.Read(id)
	op := &bulkOp{ID: hex.EncodeToString(id), What: what, Started: time.Now().UTC()}
	b.mu.Lock()
	if b.ops == nil {
		b.ops = map[string]*bulkOp{}
	}
	b.ops[op.ID] = op
	b.order = append(b.order, op.ID)
	for len(b.order) > maxBulkOps {
		delete(b.ops, b.order[0])
		b.order = b.order[1:]
	}
	b.mu.Unlock()
	go func() {
		p, err := run(context.Background(), func(p bulk.Progress) {
			op.mu.Lock()
			op.progress = p
			op.mu.Unlock()
		})
		op.mu.Lock()
		defer op.mu.Unlock()
		if p != nil {
			op.progress = *p
		}
		op.err, op.done = err, true
	}()
	return op
}

func (b *bulkOps) get(id string) *bulkOp {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.ops[id]
}

// bulkAction wraps a form that starts a bulk operation: CSRF check, then
// the start, then a redirect to the operation's page.
func (h *Handler) bulkAction(start func(r *http.Request) (*bulkOp, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, 4<<20)
		if err := r.ParseForm(); err != nil {
			http.Error(w, "console: reading the form: "+err.Error(), http.StatusBadRequest)
			return
		}
		if problem := h.csrfProblem(r); problem != "" {
			http.Error(w, "console: refused: "+problem, http.StatusForbidden)
			return
		}
		op, err := start(r)
		if err != nil {
			h.setFlash(w, err.Error(), true)
			http.Redirect(w, r, h.returnTo(r), http.StatusSeeOther)
			return
		}
		http.Redirect(w, r, h.opts.Prefix+"/bulk/"+op.ID, http.StatusSeeOther)
	}
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

// startBulkJobs starts a bulk action on jobs: the checked ones (scope
// "selected") or every job the posted filter matches (scope "filter").
func (h *Handler) startBulkJobs(r *http.Request) (*bulkOp, error) {
	sel := &bulk.Jobs{}
	var what string
	switch scope := r.PostFormValue("scope"); scope {
	case "selected":
		ids, err := selectedIDs(r)
		if err != nil {
			return nil, err
		}
		if len(ids) == 0 {
			return nil, fmt.Errorf("no job selected: tick the jobs first, or apply to every job the filter matches")
		}
		sel.JobIDs = ids
		what = fmt.Sprintf("%d selected job(s)", len(ids))
	case "filter":
		f, form, err := parseFilter(r.PostForm)
		if err != nil {
			return nil, err
		}
		sel.Filter = *f
		what = "every job matching " + orAll(form.Query)
	default:
		return nil, fmt.Errorf("scope %q is not selected or filter", scope)
	}
	e := h.engine
	switch action := r.PostFormValue("action"); action {
	case "suspend":
		return h.bulk.start("Suspend "+what, func(ctx context.Context, report func(bulk.Progress)) (*bulk.Progress, error) {
			return e.BulkSuspendJobs(ctx, sel, &bulk.JobOpts{OnProgress: report})
		}), nil
	case "activate":
		return h.bulk.start("Activate "+what, func(ctx context.Context, report func(bulk.Progress)) (*bulk.Progress, error) {
			return e.BulkActivateJobs(ctx, sel, &bulk.JobOpts{OnProgress: report})
		}), nil
	case "stop":
		return h.bulk.start("Stop "+what, func(ctx context.Context, report func(bulk.Progress)) (*bulk.Progress, error) {
			return e.BulkStopJobs(ctx, sel, &bulk.JobOpts{OnProgress: report})
		}), nil
	case "priority":
		p, err := formInt(r, "priority")
		if err != nil {
			return nil, err
		}
		return h.bulk.start(fmt.Sprintf("Set priority %d on %s", p, what), func(ctx context.Context, report func(bulk.Progress)) (*bulk.Progress, error) {
			return e.BulkSetJobPriority(ctx, sel, p, &bulk.JobOpts{OnProgress: report})
		}), nil
	case "retry":
		n, err := retriesField(r)
		if err != nil {
			return nil, err
		}
		if sel.JobIDs == nil {
			return nil, fmt.Errorf("retry applies to selected jobs, or to incidents (Incidents page: retry every open incident)")
		}
		return h.bulk.start(fmt.Sprintf("Retry (%d retries) %s", n, what), func(ctx context.Context, report func(bulk.Progress)) (*bulk.Progress, error) {
			return e.BulkRetryIncidents(ctx, &bulk.Incidents{JobIDs: sel.JobIDs}, &bulk.RetryOpts{Retries: n, OnProgress: report})
		}), nil
	default:
		return nil, fmt.Errorf("action %q is not suspend, activate, stop, priority or retry", action)
	}
}

// startBulkRetry starts a bulk retry of incidents: the checked ones, or
// every open one of the posted job definition and instance prefix.
func (h *Handler) startBulkRetry(r *http.Request) (*bulkOp, error) {
	n, err := retriesField(r)
	if err != nil {
		return nil, err
	}
	sel := &bulk.Incidents{}
	var what string
	switch scope := r.PostFormValue("scope"); scope {
	case "selected":
		ids, err := selectedIDs(r)
		if err != nil {
			return nil, err
		}
		if len(ids) == 0 {
			return nil, fmt.Errorf("no incident selected: tick the incidents first, or retry every open incident")
		}
		sel.JobIDs = ids
		what = fmt.Sprintf("%d selected incident(s)", len(ids))
	case "all":
		sel.JobDefinitionID = strings.TrimSpace(r.PostFormValue("job_definition"))
		sel.InstancePrefix = strings.TrimSpace(r.PostFormValue("instance"))
		what = "every open incident"
		if sel.JobDefinitionID != "" {
			what += fmt.Sprintf(" of job definition %q", sel.JobDefinitionID)
		}
		if sel.InstancePrefix != "" {
			what += fmt.Sprintf(" of instances %q…", sel.InstancePrefix)
		}
	default:
		return nil, fmt.Errorf("scope %q is not selected or all", scope)
	}
	return h.bulk.start(fmt.Sprintf("Retry (%d retries) %s", n, what), func(ctx context.Context, report func(bulk.Progress)) (*bulk.Progress, error) {
		return h.engine.BulkRetryIncidents(ctx, sel, &bulk.RetryOpts{Retries: n, OnProgress: report})
	}), nil
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
	op := h.bulk.get(r.PathValue("id"))
	if op == nil {
		h.renderError(w, r, http.StatusNotFound, fmt.Errorf("bulk operation %q is not known to this console (finished long ago, or the console restarted: the action can be run again safely)", r.PathValue("id")))
		return
	}
	v := op.view()
	if !v.Done {
		w.Header().Set("Refresh", "1") // reload until it ends; no JavaScript
	}
	h.render(w, r, http.StatusOK, "bulk", "Bulk action", v)
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
