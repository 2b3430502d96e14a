package console_test

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/console"
)

func TestJobsPageFiltersAndPages(t *testing.T) {
	e := newEnv(t)
	var discarded []int64
	for i := range 7 {
		id := e.insert(fmt.Sprintf("order-%d", i), nil)
		if i%2 == 0 {
			require.NoError(t, e.engine.SetJobRetries(e.ctx, id, 0))
			discarded = append(discarded, id)
		}
	}
	b := e.serve(&console.Options{PageSize: 2})
	status, body := b.get("/jobs?state=discarded")
	require.Equal(t, http.StatusOK, status, body)
	require.Equal(t, 2, countOf(body, `<tr id="job-`), "a page of two")
	require.Contains(t, body, fmt.Sprintf(`id="job-%d"`, discarded[3]), "newest first")
	require.Contains(t, body, fmt.Sprintf("cursor=%d", discarded[2]))
	status, body = b.get(fmt.Sprintf("/jobs?state=discarded&cursor=%d", discarded[2]))
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, fmt.Sprintf(`id="job-%d"`, discarded[1]))
	require.Contains(t, body, fmt.Sprintf(`id="job-%d"`, discarded[0]))

	status, body = b.get("/jobs?state=discarded&order=oldest&instance=order-4")
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, 1, countOf(body, `<tr id="job-`))
	require.Contains(t, body, fmt.Sprintf(`id="job-%d"`, discarded[2]))

	status, body = b.get("/jobs?state=stuck")
	require.Equal(t, http.StatusBadRequest, status)
	require.Contains(t, body, `state &#34;stuck&#34; is not a job state`)
	status, _ = b.get("/jobs?from=yesterday")
	require.Equal(t, http.StatusBadRequest, status)

	status, body = b.get("/instances?state=discarded")
	require.Equal(t, http.StatusOK, status, body)
	require.Contains(t, body, `href="/instances/order-6"`)
	require.NotContains(t, body, `href="/instances/order-5"`)
}

var bulkLocation = regexp.MustCompile(`^/bulk/[0-9]+$`)

// waitBulk follows a bulk action's page until it has finished, and returns
// the page.
func waitBulk(t *testing.T, b *browser, path string) string {
	t.Helper()
	var body string
	require.Eventually(t, func() bool {
		var status int
		status, body = b.get(path)
		require.Equal(t, http.StatusOK, status, body)
		return strings.Contains(body, "<strong>finished</strong>") || strings.Contains(body, "stopped:")
	}, 20*time.Second, 50*time.Millisecond)
	return body
}

// postNoRedirect posts form to path and returns the status and Location.
func (b *browser) postNoRedirect(path string, form url.Values) (int, string) {
	b.t.Helper()
	client := *b.http
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := client.PostForm(b.server.URL+b.prefix+path, form)
	require.NoError(b.t, err)
	defer resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("Location")
}

func TestBulkActionsFromTheConsole(t *testing.T) {
	e := newEnv(t)
	var ids []int64
	for i := range 5 {
		ids = append(ids, e.insert(fmt.Sprintf("order-%d", i), nil))
	}
	b := e.serve(nil)
	_, page := b.get("/jobs")
	token := b.token(page)

	// Suspend two selected jobs: first the count, nothing done; then,
	// confirmed, the action.
	form := url.Values{"csrf": {token}, "scope": {"selected"}, "action": {"suspend"}, "job": {fmt.Sprint(ids[0]), fmt.Sprint(ids[1])}}
	status, ask := b.post("/bulk/jobs", form)
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, ask, ">Suspend 2 job(s)</button>")
	require.Contains(t, ask, "2 job(s) are suspended")
	require.Equal(t, rivertype.JobStateAvailable, e.jobState(ids[0]), "nothing before the confirmation")
	form.Set("confirmed", "yes")
	status, loc := b.postNoRedirect("/bulk/jobs", form)
	require.Equal(t, http.StatusSeeOther, status)
	require.Regexp(t, bulkLocation, loc)
	body := waitBulk(t, b, loc)
	require.Contains(t, body, "2 of 2 done, 2 changed, 0 failed")
	_, body = b.get("/jobs?state=pending")
	require.Equal(t, 2, countOf(body, `<tr id="job-`))

	// Undone with the filter "held: suspended": River shows them pending.
	undo := url.Values{"csrf": {token}, "scope": {"filter"}, "action": {"activate"}, "held": {"suspended"}}
	_, ask = b.post("/bulk/jobs", undo)
	require.Contains(t, ask, ">Activate 2 job(s)</button>")
	undo.Set("confirmed", "yes")
	_, loc = b.postNoRedirect("/bulk/jobs", undo)
	require.Contains(t, waitBulk(t, b, loc), "2 of 2 done, 2 changed, 0 failed")
	_, body = b.get("/jobs?held=suspended")
	require.Equal(t, 0, countOf(body, `<tr id="job-`))
	require.Equal(t, rivertype.JobStateAvailable, e.jobState(ids[0]))

	// Suspend them again, for the rest of the test.
	form.Set("confirmed", "yes")
	_, loc = b.postNoRedirect("/bulk/jobs", form)
	require.Contains(t, waitBulk(t, b, loc), "2 of 2 done, 2 changed, 0 failed")
	_, body = b.get("/jobs?held=suspended")
	require.Equal(t, 2, countOf(body, `<tr id="job-`))

	// Set the priority of every available job (the filter's).
	form = url.Values{"csrf": {token}, "scope": {"filter"}, "action": {"priority"}, "priority": {"9"}, "state": {"available"}}
	_, ask = b.post("/bulk/jobs", form)
	require.Contains(t, ask, ">Set the priority of 3 job(s)</button>")
	require.Contains(t, ask, `<input type="hidden" name="state" value="available">`)
	form.Set("confirmed", "yes")
	status, loc = b.postNoRedirect("/bulk/jobs", form)
	require.Equal(t, http.StatusSeeOther, status)
	body = waitBulk(t, b, loc)
	require.Contains(t, body, "3 of 3 done, 3 changed")

	// Retry every open incident.
	for _, id := range ids[2:] {
		require.NoError(t, e.engine.SetJobRetries(e.ctx, id, 0))
	}
	_, page = b.get("/incidents")
	require.Contains(t, page, `id="bulk-retry-form"`)
	retry := url.Values{"csrf": {b.token(page)}, "scope": {"all"}, "retries": {"2"}}
	_, ask = b.post("/bulk/retry", retry)
	require.Contains(t, ask, "3 open incident(s): each job gets 2 retries")
	retry.Set("confirmed", "yes")
	status, loc = b.postNoRedirect("/bulk/retry", retry)
	require.Equal(t, http.StatusSeeOther, status)
	body = waitBulk(t, b, loc)
	require.Contains(t, body, "3 of 3 done, 3 changed")
	open, err := e.engine.OpenIncidents(e.ctx)
	require.NoError(t, err)
	require.Empty(t, open)

	// A bad form is refused with the field named, and nothing starts.
	status, body = b.post("/bulk/jobs", url.Values{"csrf": {token}, "scope": {"selected"}, "action": {"suspend"}, "return": {"/jobs"}})
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, "no job selected")

	// Without the CSRF token: refused.
	status, _ = b.postNoRedirect("/bulk/jobs", url.Values{"scope": {"filter"}, "action": {"stop"}})
	require.Equal(t, http.StatusForbidden, status)
	status, _ = b.postNoRedirect("/bulk/retry", url.Values{"scope": {"all"}, "retries": {"1"}})
	require.Equal(t, http.StatusForbidden, status)

	// Read-only: no bulk form, every POST refused.
	ro := e.serve(&console.Options{ReadOnly: true})
	_, body = ro.get("/jobs")
	require.NotContains(t, body, "bulk-form")
	require.NotContains(t, body, `type="checkbox"`)
	_, body = ro.get("/incidents")
	require.NotContains(t, body, "bulk-retry-form")
	status, _ = ro.postNoRedirect("/bulk/jobs", url.Values{"csrf": {token}, "scope": {"filter"}, "action": {"stop"}})
	require.Equal(t, http.StatusForbidden, status)

	status, _ = b.get("/bulk/0123456789abcdef")
	require.Equal(t, http.StatusBadRequest, status)
	status, _ = b.get("/bulk/987654321")
	require.Equal(t, http.StatusNotFound, status)

	// The history lists every action, newest first.
	_, body = b.get("/bulk")
	require.Equal(t, 5, countOf(body, `<a href="/bulk/`), body)
	require.Contains(t, body, "Retry (2 retries) every open incident")
}

func TestJobPageSaysWhyNotRunning(t *testing.T) {
	e := newEnv(t)
	holder := e.insert("order-4711", nil)
	fetched, err := e.engine.Driver().PluginPilot().JobGetAvailable(e.ctx, e.engine.Driver().GetExecutor(), nil, &riverdriver.JobGetAvailableParams{
		ClientID: "worker-7f3a", MaxAttemptedBy: 100, MaxToLock: 1, Queue: river.QueueDefault, Schema: e.schema,
	})
	require.NoError(t, err)
	require.Equal(t, holder, fetched.Jobs[0].ID)
	waiting := e.insert("order-4711", nil)
	b := e.serve(nil)
	status, body := b.get(fmt.Sprintf("/jobs/%d", waiting))
	require.Equal(t, http.StatusOK, status, body)
	require.Contains(t, body, `data-code="key_held"`)
	require.Contains(t, body, fmt.Sprintf("is held by job %d on client worker-7f3a", holder))
	require.Contains(t, body, fmt.Sprintf(`href="/jobs/%d">Open job %d`, holder, holder))
	require.Contains(t, body, `id="exclusive-scope">process instance<`)

	_, err = e.engine.SuspendProcessInstance(e.ctx, "order-4711")
	require.NoError(t, err)
	_, body = b.get(fmt.Sprintf("/jobs/%d", waiting))
	require.Contains(t, body, `data-code="suspended"`)
	require.Contains(t, body, "What to do: Activate")
	require.Contains(t, body, `data-code="key_held"`, "every reason: the key is still held while the job is suspended")
}
