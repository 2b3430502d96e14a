package console

// Confirmation of destructive actions. A destructive form (stop, bulk
// actions, cancel timer, prune, drop indexes, disable events, record the
// exclusive scope) posts to its action as any other; without the field
// confirmed=yes the console does not run it but renders a confirmation
// page: what it will touch (how many jobs, which scope, which clients),
// counted now, and a form that posts the same fields again with
// confirmed=yes. It is plain HTML: no script, so the console's CSP holds.

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/riverqueue/river/rivertype"

	"github.com/riverbpmn/riverbpmn/bulk"
	"github.com/riverbpmn/riverbpmn/exclusive"
	"github.com/riverbpmn/riverbpmn/liveness"
	"github.com/riverbpmn/riverbpmn/search"
	"github.com/riverbpmn/riverbpmn/workflow"
)

// confirmation is what the confirmation page shows.
type confirmation struct {
	// Title names the action and its target.
	Title string
	// Touches says what it will touch, a line each.
	Touches []string
	// Alive are the clients of the schema alive now (record scope), and
	// Force whether to offer recording it anyway.
	Alive []*liveness.Session
	Force bool
	// Button is the confirm button's label.
	Button string
	// Action is where the form posts, Fields the fields it posts again,
	// Back the page Cancel goes back to.
	Action string
	Fields []formField
	Back   string
}

type formField struct{ Name, Value string }

// describeFunc says what a posted destructive action will touch.
type describeFunc func(r *http.Request) (*confirmation, error)

// confirmedField is the field the confirmation page's form adds.
const confirmedField = "confirmed"

// confirm wraps a destructive action: it runs (next) only when the form
// says confirmed=yes; otherwise the confirmation page is rendered.
func (h *Handler) confirm(describe describeFunc, next http.HandlerFunc) http.HandlerFunc {
	return h.post(4<<20, func(w http.ResponseWriter, r *http.Request) {
		if r.PostFormValue(confirmedField) == "yes" {
			next(w, r)
			return
		}
		c, err := describe(r)
		if err != nil {
			h.setFlash(w, err.Error(), true)
			http.Redirect(w, r, h.returnTo(r), http.StatusSeeOther)
			return
		}
		c.Action = h.opts.Prefix + r.URL.Path
		c.Back = h.returnTo(r)
		names := make([]string, 0, len(r.PostForm))
		for name := range r.PostForm {
			switch name {
			case csrfField, confirmedField, "force":
				continue
			}
			names = append(names, name)
		}
		slices.Sort(names)
		for _, name := range names {
			for _, v := range r.PostForm[name] {
				c.Fields = append(c.Fields, formField{Name: name, Value: v})
			}
		}
		if c.Button == "" {
			c.Button = "Confirm"
		}
		h.render(w, r, http.StatusOK, "confirm", "Confirm: "+c.Title, c)
	})
}

// post wraps a form's handler: the body read (at most limit bytes), the
// CSRF check (read-only mode is refused earlier, in ServeHTTP).
func (h *Handler) post(limit int64, next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, limit)
		if err := r.ParseForm(); err != nil {
			http.Error(w, "console: reading the form: "+err.Error(), http.StatusBadRequest)
			return
		}
		if problem := h.csrfProblem(r); problem != "" {
			http.Error(w, "console: refused: "+problem, http.StatusForbidden)
			return
		}
		if problem := inputProblem("form field", r.PostForm); problem != "" {
			http.Error(w, "console: "+problem, http.StatusBadRequest)
			return
		}
		next(w, r)
	}
}

// jobLine says in a few words which job id is.
func jobLine(j *rivertype.JobRow) string {
	s := fmt.Sprintf("job %d (%s, %s", j.ID, j.Kind, j.State)
	if jc, err := workflow.JobContextOf(j); err == nil && jc.ProcessInstanceID != "" {
		s += ", process instance " + jc.ProcessInstanceID
	}
	return s + ")"
}

func (h *Handler) describeStopJob(r *http.Request) (*confirmation, error) {
	id, err := pathID(r, "job")
	if err != nil {
		return nil, err
	}
	d, err := h.engine.JobDetails(r.Context(), id)
	if err != nil {
		return nil, err
	}
	c := &confirmation{Title: fmt.Sprintf("Stop job %d", id), Button: "Stop the job"}
	switch d.Job.State {
	case rivertype.JobStateRunning:
		c.Touches = []string{"Running " + jobLine(d.Job) + ": the client running it is asked to cancel its work; it ends cancelled (ABORTED)."}
	case rivertype.JobStateCompleted, rivertype.JobStateCancelled, rivertype.JobStateDiscarded:
		c.Touches = []string{"Finished " + jobLine(d.Job) + ": nothing to stop; it is left as it is."}
	default:
		c.Touches = []string{"Waiting " + jobLine(d.Job) + ": it is cancelled before it starts and never runs."}
	}
	return c, nil
}

func (h *Handler) describeStopInstance(r *http.Request) (*confirmation, error) {
	id, err := instanceField(r)
	if err != nil {
		return nil, err
	}
	jobs, err := h.engine.ProcessInstanceJobs(r.Context(), id)
	if err != nil {
		return nil, err
	}
	var running, waiting, finished int
	for _, j := range jobs {
		switch j.State {
		case rivertype.JobStateRunning:
			running++
		case rivertype.JobStateCompleted, rivertype.JobStateCancelled, rivertype.JobStateDiscarded:
			finished++
		default:
			waiting++
		}
	}
	return &confirmation{
		Title:  fmt.Sprintf("Stop every job of process instance %q", id),
		Button: fmt.Sprintf("Stop %d job(s)", running+waiting),
		Touches: []string{
			fmt.Sprintf("%d waiting job(s) are cancelled before they start.", waiting),
			fmt.Sprintf("%d running job(s) are asked to stop; they end cancelled.", running),
			fmt.Sprintf("%d finished job(s) are left as they are.", finished),
		},
	}, nil
}

func (h *Handler) describeCancelTimer(r *http.Request) (*confirmation, error) {
	id, err := pathID(r, "timer")
	if err != nil {
		return nil, err
	}
	t, err := h.engine.Timer(r.Context(), id)
	if err != nil {
		return nil, err
	}
	where := "a timer start event (no process instance)"
	if t.ProcessInstanceID != "" {
		where = fmt.Sprintf("process instance %q", t.ProcessInstanceID)
	}
	next := "no occurrence waits to fire"
	if t.NextDueAt != nil {
		next = "its next occurrence, due " + t.NextDueAt.UTC().Format(time.RFC3339) + " (job " + fmt.Sprint(t.JobID) + "), is cancelled"
	}
	reps := "unbounded repetitions"
	if t.RepetitionsLeft != nil {
		reps = fmt.Sprintf("%d repetition(s) left", *t.RepetitionsLeft)
	}
	return &confirmation{
		Title:  fmt.Sprintf("Cancel timer %d", id),
		Button: "Cancel the timer",
		Touches: []string{
			fmt.Sprintf("Timer %d, %s %s of %s, activity %s: %s.", id, t.Type, t.Definition, where, dashed(t.ActivityID), next),
			fmt.Sprintf("It ends for good (%s now dropped): it cannot be resumed.", reps),
		},
	}, nil
}

func dashed(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func (h *Handler) describePruneEvents(r *http.Request) (*confirmation, error) {
	before, err := olderThanField(r)
	if err != nil {
		return nil, err
	}
	ctx := r.Context()
	n, err := h.engine.PruneEventsCount(ctx, before)
	if err != nil {
		return nil, err
	}
	c := &confirmation{
		Title:   "Prune job status events",
		Button:  fmt.Sprintf("Delete %d event(s)", n),
		Touches: []string{fmt.Sprintf("%d event(s) written before %s are deleted.", n, before.Format(time.RFC3339))},
	}
	subs, err := h.engine.EventSubscriptions(ctx)
	if err != nil {
		return nil, err
	}
	for _, s := range subs {
		if s.Behind > 0 {
			c.Touches = append(c.Touches, fmt.Sprintf("Subscription %q is %d event(s) behind: it loses those it has not read among them.", s.Name, s.Behind))
		}
	}
	return c, nil
}

func (h *Handler) describePruneTimers(r *http.Request) (*confirmation, error) {
	before, err := olderThanField(r)
	if err != nil {
		return nil, err
	}
	return &confirmation{
		Title:   "Prune ended timers",
		Button:  "Delete them",
		Touches: []string{fmt.Sprintf("Every timer that ended before %s and whose occurrence jobs have all finished is deleted, with its history.", before.Format(time.RFC3339))},
	}, nil
}

func (h *Handler) describeDisableEvents(r *http.Request) (*confirmation, error) {
	return &confirmation{
		Title:   "Disable job status events",
		Button:  "Disable events",
		Touches: []string{"The trigger river_bpmn_job_event is dropped: no event is recorded from now on, and subscribers receive nothing new. The events recorded so far are kept."},
	}, nil
}

// describeDropIndexes names the indexes of family f a drop would remove.
func describeDropIndexes(f indexFamily) describeFunc {
	return func(r *http.Request) (*confirmation, error) {
		present, err := f.present(r.Context())
		if err != nil {
			return nil, err
		}
		c := &confirmation{Title: "Drop the " + f.what + "es", Button: fmt.Sprintf("Drop %d index(es)", len(present))}
		if len(present) == 0 {
			c.Touches = []string{"No " + f.what + " is present: nothing is dropped."}
			return c, nil
		}
		c.Touches = []string{"Dropped (concurrently): " + strings.Join(present, ", ") + ".",
			"Clients that read them fall back to River's indexes (slower fetches) until one starts again and creates its own."}
		return c, nil
	}
}

func (h *Handler) describeSetScope(r *http.Request) (*confirmation, error) {
	name := r.PostFormValue("scope")
	scope, err := exclusive.ParseScope(name)
	if err != nil {
		return nil, fmt.Errorf("scope %q is not one of process-instance, root-process-instance, none", name)
	}
	ctx := r.Context()
	recorded, err := h.engine.RecordedExclusiveScope(ctx)
	if err != nil {
		return nil, err
	}
	c := &confirmation{Title: "Record the exclusive scope " + scope.String(), Button: "Record " + scope.String()}
	was := "No scope is recorded yet"
	if recorded != nil {
		was = "The recorded scope is " + recorded.Scope.String()
	}
	c.Touches = []string{fmt.Sprintf("%s; every client of the schema must agree with %s from now on: a client whose engine has another scope refuses to start.", was, scope)}
	if recorded != nil && recorded.Scope == scope {
		c.Touches = append(c.Touches, "It is the scope already recorded: nothing changes.")
		return c, nil
	}
	if c.Alive, err = h.engine.AliveClients(ctx); err != nil {
		return nil, err
	}
	if len(c.Alive) > 0 {
		c.Force = true
		c.Touches = append(c.Touches, fmt.Sprintf("%d client(s) of the schema are alive (below): each keeps enforcing the scope it started with until it restarts, and then refuses to start. Stop them first; recording it now needs \"record it anyway\".", len(c.Alive)))
	}
	return c, nil
}

// describeBulkJobs counts the jobs a bulk action on jobs will walk.
func (h *Handler) describeBulkJobs(r *http.Request) (*confirmation, error) {
	spec, what, err := h.bulkJobsSpec(r)
	if err != nil {
		return nil, err
	}
	var n int64
	if spec.Jobs.JobIDs != nil {
		n = int64(len(spec.Jobs.JobIDs))
	} else if n, err = h.engine.CountJobs(r.Context(), &spec.Jobs.Filter); err != nil {
		return nil, err
	}
	count := fmt.Sprint(n)
	if n >= search.MaxCount {
		count = fmt.Sprintf("at least %d", n)
	}
	c := &confirmation{Title: what, Button: fmt.Sprintf("%s %s job(s)", actionVerb(spec), count)}
	c.Touches = []string{fmt.Sprintf("%s job(s) %s (counted now; jobs that match by the time a batch reaches them are taken too).", count, actionEffect(spec))}
	return c, nil
}

// describeBulkRetry counts the incidents a bulk retry will revive.
func (h *Handler) describeBulkRetry(r *http.Request) (*confirmation, error) {
	spec, what, err := bulkRetrySpec(r)
	if err != nil {
		return nil, err
	}
	n, err := h.engine.CountIncidents(r.Context(), spec.Incidents)
	if err != nil {
		return nil, err
	}
	return &confirmation{
		Title:   what,
		Button:  fmt.Sprintf("Retry %d incident(s)", n),
		Touches: []string{fmt.Sprintf("%d open incident(s): each job gets %d retries and runs again; its incident is resolved.", n, spec.Retries)},
	}, nil
}

func actionVerb(spec *bulk.Spec) string {
	switch spec.Action {
	case bulk.ActionPriority:
		return "Set the priority of"
	case bulk.ActionRetry:
		return "Retry"
	}
	return strings.ToUpper(spec.Action[:1]) + spec.Action[1:]
}

func actionEffect(spec *bulk.Spec) string {
	switch spec.Action {
	case bulk.ActionSuspend:
		return "are suspended: they do not run until activated (a running one finishes its run first)"
	case bulk.ActionActivate:
		return "are activated: a suspended one runs again"
	case bulk.ActionStop:
		return "are stopped: waiting ones are cancelled, running ones asked to stop"
	case bulk.ActionPriority:
		return fmt.Sprintf("get priority %d", spec.Priority)
	}
	return "are retried"
}
