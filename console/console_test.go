package console_test

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/console"
	"github.com/riverbpmn/riverbpmn/handlers"
	"github.com/riverbpmn/riverbpmn/workflow"
)

type reminderArgs struct{}

func (reminderArgs) Kind() string { return "console_reminder" }

func id(n int64) string { return strconv.FormatInt(n, 10) }

func TestNewOptions(t *testing.T) {
	e := newEnv(t)
	_, err := console.New(nil, nil)
	require.ErrorContains(t, err, "engine is nil")
	_, err = console.New(e.engine, &console.Options{Prefix: "bpmn"})
	require.ErrorContains(t, err, `Prefix "bpmn" must start with a slash`)
	_, err = console.New(e.engine, &console.Options{CSRFSecret: []byte("short")})
	require.ErrorContains(t, err, "CSRFSecret has 5 bytes")
	_, err = console.New(e.engine, &console.Options{PageSize: workflow.MaxPageSize + 1})
	require.ErrorContains(t, err, "PageSize 1001 is out of range")
}

func TestIncidentsPageAndRetry(t *testing.T) {
	e := newEnv(t)
	jobID := e.incident("pi-1")
	other := e.insert("pi-2", nil) // no incident
	b := e.serve(nil)

	status, body := b.get("/incidents")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, "<h1>Open incidents</h1>")
	require.Contains(t, body, `href="/jobs/`+id(jobID)+`"`)
	require.Contains(t, body, `href="/instances/pi-1"`)
	require.Contains(t, body, "<td>charge</td>")
	require.Contains(t, body, "<td>charge-async</td>")
	require.NotContains(t, body, `href="/jobs/`+id(other)+`"`)
	require.Regexp(t, `<td title="[^"]+">\d+s</td>`, body, "age")

	status, body = b.submit("/incidents", "/jobs/"+id(jobID)+"/retries", url.Values{"retries": {"2"}})
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, fmt.Sprintf("Job %d: retries set to 2.", jobID))
	require.Contains(t, body, "No open incidents.")
	incidents, err := e.engine.JobIncidents(e.ctx, jobID)
	require.NoError(t, err)
	require.Len(t, incidents, 1)
	require.NotNil(t, incidents[0].ResolvedAt)
	details, err := e.engine.JobDetails(e.ctx, jobID)
	require.NoError(t, err)
	require.Equal(t, rivertype.JobStateAvailable, details.Job.State)
	require.Equal(t, 2, details.RetriesLeft)

	// The flash is shown once.
	_, body = b.get("/incidents")
	require.NotContains(t, body, "retries set")

	// A failing action says why, on the page it came from.
	status, body = b.submit("/exclusive/locks", "/jobs/999999999/retries", url.Values{"retries": {"1"}})
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, `class="flash error"`)
	require.Contains(t, body, "job 999999999: not found")
	_, body = b.submit("/exclusive/locks", "/jobs/"+id(jobID)+"/retries", url.Values{"retries": {"x"}})
	require.Contains(t, body, `retries &#34;x&#34; is not an integer`)
}

func TestCSRF(t *testing.T) {
	e := newEnv(t)
	jobID := e.incident("pi-1")
	b := e.serve(nil)
	_, page := b.get("/incidents")
	token := b.token(page)
	action := "/jobs/" + id(jobID) + "/retries"

	for name, form := range map[string]url.Values{
		"no token":    {"retries": {"1"}},
		"wrong token": {"retries": {"1"}, "csrf": {token[:len(token)-2] + "AA"}},
	} {
		status, body := b.post(action, form)
		require.Equal(t, http.StatusForbidden, status, name)
		require.Contains(t, body, "refused", name)
	}

	// A token is bound to its cookie: another browser's token fails here.
	other := e.serve(nil)
	_, otherPage := other.get("/incidents")
	status, _ := b.post(action, url.Values{"retries": {"1"}, "csrf": {other.token(otherPage)}})
	require.Equal(t, http.StatusForbidden, status)

	// No cookie at all (a cross-site form post without the SameSite cookie).
	resp, err := http.PostForm(b.server.URL+action, url.Values{"retries": {"1"}, "csrf": {token}})
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusForbidden, resp.StatusCode)

	// Another site's Origin is refused even with a good token and cookie.
	req, err := http.NewRequest(http.MethodPost, b.server.URL+action, strings.NewReader(url.Values{"retries": {"1"}, "csrf": {token}}.Encode()))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", "https://evil.example")
	resp, err = b.http.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusForbidden, resp.StatusCode)

	// Only GET, HEAD and POST; and every response forbids scripts and framing.
	req, err = http.NewRequest(http.MethodPut, b.server.URL+action, nil)
	require.NoError(t, err)
	resp, err = b.http.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
	resp, err = b.http.Get(b.server.URL + "/incidents")
	require.NoError(t, err)
	resp.Body.Close()
	require.Contains(t, resp.Header.Get("Content-Security-Policy"), "default-src 'none'")
	require.Equal(t, "DENY", resp.Header.Get("X-Frame-Options"))

	open, err := e.engine.OpenIncidents(e.ctx)
	require.NoError(t, err)
	require.Len(t, open, 1, "nothing changed")

	// With the right token the same POST passes.
	status, _ = b.post(action, url.Values{"retries": {"1"}, "csrf": {token}, "return": {"//evil.example/"}})
	require.Equal(t, http.StatusOK, status)
	open, err = e.engine.OpenIncidents(e.ctx)
	require.NoError(t, err)
	require.Empty(t, open)
}

func TestReadOnly(t *testing.T) {
	e := newEnv(t)
	jobID := e.incident("pi-1")
	rw := e.serve(nil)
	_, page := rw.get("/incidents")
	token := rw.token(page)
	ro := e.serve(&console.Options{ReadOnly: true})
	for _, path := range []string{"/incidents", "/instances/pi-1", "/definitions", "/exclusive/locks", "/jobs/" + id(jobID)} {
		status, body := ro.get(path)
		require.Equal(t, http.StatusOK, status, path)
		require.NotContains(t, body, `method="post"`, path)
		require.NotContains(t, body, `name="csrf"`, path)
		require.Contains(t, body, "read-only", path)
	}
	// Even a POST carrying a valid token and cookie is refused.
	ro.http.Jar = rw.http.Jar
	status, body := ro.post("/jobs/"+id(jobID)+"/retries", url.Values{"retries": {"1"}, "csrf": {token}})
	require.Equal(t, http.StatusForbidden, status)
	require.Contains(t, body, "read-only")
	open, err := e.engine.OpenIncidents(e.ctx)
	require.NoError(t, err)
	require.Len(t, open, 1)
}

func TestEscaping(t *testing.T) {
	e := newEnv(t)
	evil := `<script>alert("pi")</script>`
	jobID := e.incident(evil)
	b := e.serve(nil)
	for _, path := range []string{"/incidents", "/instances/" + url.QueryEscape(evil), "/jobs/" + id(jobID)} {
		status, body := b.get(path)
		require.Equal(t, http.StatusOK, status, path)
		require.NotContains(t, body, "<script>alert", path)
		require.Contains(t, body, "&lt;script&gt;", path)
	}
	// In a link's query the id is percent-encoded.
	_, body := b.get("/incidents")
	require.Contains(t, body, `href="/instances/%3Cscript%3Ealert%28%22pi%22%29%3C%2Fscript%3E"`)
	// And the error page of an unknown instance escapes it too.
	status, body := b.get("/instances/" + url.QueryEscape("<img src=x onerror=alert(1)>"))
	require.Equal(t, http.StatusNotFound, status)
	require.NotContains(t, body, "<img")
}

func TestInstancePage(t *testing.T) {
	e := newEnv(t)
	// Job A is fetched by a client that then stops working it: it holds
	// instance pi-1's key; B waits for it.
	jobA := e.insert("pi-1", nil)
	fetched, err := e.engine.Driver().PluginPilot().JobGetAvailable(e.ctx, e.engine.Driver().GetExecutor(), nil, &riverdriver.JobGetAvailableParams{
		ClientID: "dead-client", MaxAttemptedBy: 100, MaxToLock: 1, Queue: river.QueueDefault, Schema: e.schema,
	})
	require.NoError(t, err)
	require.Len(t, fetched.Jobs, 1)
	jobB := e.insert("pi-1", nil)
	jobC := e.insert("pi-2", nil)

	timers := handlers.NewTimers(e.pool, &handlers.TimersConfig{Schema: e.schema})
	tx, err := e.pool.Begin(e.ctx)
	require.NoError(t, err)
	jc := workflow.JobContext{ProcessInstanceID: "pi-1", ProcessDefinitionKey: "order", ActivityID: "reminder"}
	timer, err := timers.InsertTx(e.ctx, e.client, tx, reminderArgs{}, handlers.Timer{Cycle: "R3/PT1H"}, jc.InsertOpts())
	require.NoError(t, err)
	require.NoError(t, tx.Commit(e.ctx))

	b := e.serve(nil)
	status, body := b.get("/instances")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, `name="id"`)

	status, body = b.get("/instances/pi-1")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, fmt.Sprintf(`held by job <a href="/jobs/%d">%d</a> attempt 1 (client dead-client`, jobA, jobA))
	require.Regexp(t, `(?s)<tr id="job-`+id(jobA)+`">.*?running.*?<td class="num">5</td>.*?holds the key`, body)
	require.Regexp(t, `(?s)<tr id="job-`+id(jobB)+`">.*?available.*?waits for job `+id(jobA), body)
	require.NotContains(t, body, `id="job-`+id(jobC)+`"`)
	require.Regexp(t, `(?s)<tr id="timer-`+id(timer.TimerID)+`">.*?R3/PT1H.*?reminder`, body)

	// Move the timer's due date, then cancel it.
	due := time.Now().Add(48 * time.Hour).UTC().Truncate(time.Minute)
	status, body = b.submit("/instances/pi-1", "/timers/"+id(timer.TimerID)+"/due-date", url.Values{"due": {due.Format("2006-01-02T15:04")}})
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, fmt.Sprintf("Timer %d: due %s", timer.TimerID, due.Format(time.RFC3339)))
	info, err := e.engine.Timer(e.ctx, timer.TimerID)
	require.NoError(t, err)
	require.WithinDuration(t, due, *info.NextDueAt, time.Second)
	ask, _, body := b.confirm("/instances/pi-1", "/timers/"+id(timer.TimerID)+"/cancel", nil, false)
	require.Contains(t, ask, fmt.Sprintf("Timer %d, cycle R3/PT1H of process instance &#34;pi-1&#34;", timer.TimerID))
	require.Contains(t, ask, "2 repetition(s) left now dropped")
	require.Contains(t, body, fmt.Sprintf("Timer %d cancelled", timer.TimerID))
	info, err = e.engine.Timer(e.ctx, timer.TimerID)
	require.NoError(t, err)
	require.NotNil(t, info.EndedAt)

	status, body = b.get("/instances/no-such-instance")
	require.Equal(t, http.StatusNotFound, status)
	require.Contains(t, body, "No jobs")
	status, _ = b.get("/instances/pi-1?after=x")
	require.Equal(t, http.StatusBadRequest, status)
}

func TestPagination(t *testing.T) {
	e := newEnv(t)
	var jobs, incidents []int64
	for range 5 {
		jobs = append(jobs, e.insert("pi-many", nil))
	}
	for i := range 3 {
		incidents = append(incidents, e.incident(fmt.Sprintf("pi-inc-%d", i)))
	}
	b := e.serve(&console.Options{PageSize: 2})

	// Follow "Next page" links through the instance's jobs.
	path := "/instances/pi-many"
	var seen []int64
	for pages := 0; ; pages++ {
		require.Less(t, pages, 5)
		status, body := b.get(path)
		require.Equal(t, http.StatusOK, status)
		for _, j := range jobs {
			if strings.Contains(body, `id="job-`+id(j)+`"`) {
				seen = append(seen, j)
			}
		}
		m := nextRE.FindStringSubmatch(body)
		if m == nil {
			break
		}
		path = strings.ReplaceAll(m[1], "&amp;", "&")
	}
	require.Equal(t, jobs, seen)

	status, body := b.get("/incidents")
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, 2, countOf(body, `<tr id="incident-`))
	m := nextRE.FindStringSubmatch(body)
	require.NotNil(t, m)
	_, body = b.get(strings.ReplaceAll(m[1], "&amp;", "&"))
	require.Equal(t, 1, countOf(body, `<tr id="incident-`))
	require.Contains(t, body, `href="/jobs/`+id(incidents[2])+`"`)
	require.Nil(t, nextRE.FindStringSubmatch(body))
	require.Contains(t, body, "« First page")
}

var nextRE = regexp.MustCompile(`<a href="/?[^"]*?(/(?:instances/[^"?]+|[a-z]+)\?[^"]+)" rel="next">`)

// TestInstanceWithTenThousandJobs pages through an instance with 10,000
// jobs: every page is one keyset range of the instance's index (see
// workflow.TestProcessInstanceJobsPage for the plan), so the last page
// renders like the first. The durations are logged, not asserted.
func TestInstanceWithTenThousandJobs(t *testing.T) {
	e := newEnv(t)
	_, err := e.pool.Exec(e.ctx, `
INSERT INTO `+pgxIdent(e.schema)+`.river_job (args, kind, max_attempts, metadata, priority, queue, state, scheduled_at)
SELECT '{"instance":"big"}', 'console_task', 25,
    '{"bpmn":{"process_instance_id":"big","process_definition_key":"order","activity_id":"charge","exclusive":true}}',
    1, 'default', 'scheduled', now() + interval '1 day'
FROM generate_series(1, 10000)`)
	require.NoError(t, err)
	var ids []int64
	rows, err := e.pool.Query(e.ctx, `SELECT id FROM `+pgxIdent(e.schema)+`.river_job ORDER BY id`)
	require.NoError(t, err)
	for rows.Next() {
		var id int64
		require.NoError(t, rows.Scan(&id))
		ids = append(ids, id)
	}
	require.NoError(t, rows.Err())
	require.Len(t, ids, 10_000)
	b := e.serve(nil)
	for _, after := range []int64{0, ids[5_000], ids[9_949]} {
		start := time.Now()
		status, body := b.get(fmt.Sprintf("/instances/big?after=%d", after))
		elapsed := time.Since(start)
		require.Equal(t, http.StatusOK, status)
		require.Equal(t, console.DefaultPageSize, countOf(body, `<tr id="job-`), "after %d", after)
		t.Logf("instance page after job %d: %s", after, elapsed)
	}
	_, body := b.get(fmt.Sprintf("/instances/big?after=%d", ids[9_949]))
	require.NotContains(t, body, `rel="next"`, "the last page")
}

func pgxIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
