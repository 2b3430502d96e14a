package console_test

import (
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/console"
	"github.com/riverbpmn/riverbpmn/handlers"
	"github.com/riverbpmn/riverbpmn/workflow"
)

// eventRowRE reads an events table row: status, then the job's link.
var eventRowRE = regexp.MustCompile(`<td><span class="status status-([A-Z]+)">[A-Z]+</span>[^\n]*</td>\s*<td class="num"><a href="/jobs/(\d+)">`)

// eventRows returns the status and job id of every row of an events page,
// in page order.
func eventRows(body string) []string {
	var rows []string
	for _, m := range eventRowRE.FindAllStringSubmatch(body, -1) {
		rows = append(rows, m[1]+" "+m[2])
	}
	return rows
}

var olderRE = regexp.MustCompile(`<a href="([^"]+)" rel="next">Older »</a>`)

// olderLink returns the page's "Older" link ("" when none), unescaped.
func olderLink(body string) string {
	m := olderRE.FindStringSubmatch(body)
	if m == nil {
		return ""
	}
	return html.UnescapeString(m[1])
}

// indexesIn reads from the catalog (not through the engine) the names of
// the schema's indexes on river_job that match pattern (a LIKE pattern).
func (e *env) indexesIn(pattern string) []string {
	e.t.Helper()
	rows, err := e.pool.Query(e.ctx, `SELECT indexname FROM pg_indexes WHERE schemaname = $1 AND tablename = 'river_job' AND indexname LIKE $2 ORDER BY indexname`, e.schema, pattern)
	require.NoError(e.t, err)
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(e.t, err)
	return names
}

// eventsTrigger reads from the catalog whether the events trigger exists.
func (e *env) eventsTrigger() bool {
	e.t.Helper()
	var on bool
	require.NoError(e.t, e.pool.QueryRow(e.ctx, `SELECT EXISTS (SELECT 1 FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
		JOIN pg_namespace n ON n.oid = c.relnamespace WHERE t.tgname = 'river_bpmn_job_event' AND c.relname = 'river_job' AND n.nspname = $1)`, e.schema).Scan(&on))
	return on
}

// eventCount counts the events retained in the outbox.
func (e *env) eventCount() int {
	e.t.Helper()
	var n int
	require.NoError(e.t, e.pool.QueryRow(e.ctx, `SELECT coalesce(sum(event_count), 0) FROM `+pgx.Identifier{e.schema, "river_bpmn_event"}.Sanitize()).Scan(&n))
	return n
}

// TestEventsPage switches events on from the page, lists the events of a
// failing and a succeeding job newest first over two pages, filters them by
// process instance, prunes and switches them off again; bad input is named.
func TestEventsPage(t *testing.T) {
	e := newEnv(t)
	b := e.serve(&console.Options{PageSize: 3})

	status, body := b.get("/events")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, `<a href="/events" class="current">Events</a>`)
	require.Contains(t, body, `Job status events are <strong>off</strong>`)
	require.Contains(t, body, ">Enable events</button>")
	require.Contains(t, body, `<p class="empty">No event.</p>`)

	_, body = b.submit("/events", "/events/enable", nil)
	require.Contains(t, body, "Job status events switched on: trigger river_bpmn_job_event created on river_job.")
	require.Contains(t, body, `Job status events are <strong>on</strong>`)
	require.Contains(t, body, ">Disable events…</button>")
	require.True(t, e.eventsTrigger())
	_, body = b.submit("/events", "/events/enable", nil)
	require.Contains(t, body, "Job status events were already on: nothing changed.")

	// Job A fails three times, for good (no retry cycle: 3 executions,
	// retried at once): RUNNING, FAILED, RUNNING, FAILED, RUNNING, FAILED,
	// INCIDENT. Then job B succeeds: RUNNING, SUCCEEDED.
	var fail atomic.Bool
	fail.Store(true)
	done := e.startWorker(&fail)
	jobA := e.insert("pi-ev-1", nil)
	require.Eventually(t, func() bool { return e.jobState(jobA) == rivertype.JobStateDiscarded }, 10*time.Second, 20*time.Millisecond)
	fail.Store(false)
	jobB := e.insert("pi-ev-2", nil)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("job B did not complete")
	}
	require.Eventually(t, func() bool { return e.eventCount() == 9 }, 10*time.Second, 20*time.Millisecond)

	a, bb := id(jobA), id(jobB)
	_, body = b.get("/events")
	require.Equal(t, []string{"SUCCEEDED " + bb, "RUNNING " + bb, "INCIDENT " + a}, eventRows(body))
	require.Contains(t, body, `<a href="/instances/pi-ev-2">pi-ev-2</a>`)
	require.Contains(t, body, `<td class="msg">payment service answered 503 &lt;b&gt;unavailable&lt;/b&gt;</td>`, "the incident's error, escaped")
	require.NotContains(t, body, "« Newest")
	older := olderLink(body)
	require.NotEmpty(t, older)
	_, body = b.get(older)
	require.Equal(t, []string{"FAILED " + a, "RUNNING " + a, "FAILED " + a}, eventRows(body))
	require.Regexp(t, `status-FAILED">FAILED</span> <span class="muted">no retries left</span>.*\n.*\n.*\n.*\n.*\n.*\n<td class="msg">payment service answered 503 &lt;b&gt;unavailable&lt;/b&gt;</td>`, body)
	require.Contains(t, body, `<a href="/events">« Newest</a>`)
	_, body = b.get(olderLink(body))
	require.Equal(t, []string{"RUNNING " + a, "FAILED " + a, "RUNNING " + a}, eventRows(body))
	require.Contains(t, body, `status-FAILED">FAILED</span> <span class="muted">will retry</span>`)
	require.Empty(t, olderLink(body), "the last page, though full")

	// Filtered by process instance: only job A's events, over three pages.
	_, body = b.get("/events?instance=pi-ev-1")
	require.Contains(t, body, `value="pi-ev-1"`)
	var rows []string
	for {
		rows = append(rows, eventRows(body)...)
		next := olderLink(body)
		if next == "" {
			break
		}
		require.Contains(t, next, "instance=pi-ev-1")
		_, body = b.get(next)
	}
	require.Equal(t, []string{"INCIDENT " + a, "FAILED " + a, "RUNNING " + a, "FAILED " + a, "RUNNING " + a, "FAILED " + a, "RUNNING " + a}, rows)
	_, body = b.get("/events?instance=no-such-instance")
	require.Empty(t, eventRows(body))
	require.Contains(t, body, "No event of this process instance.")

	status, body = b.get("/events?before=yesterday")
	require.Equal(t, http.StatusBadRequest, status)
	require.Contains(t, body, `query parameter before &#34;yesterday&#34; is not an events cursor`)

	// Prune: bad durations are named and change nothing; 24h keeps these
	// events, 0s deletes them.
	for value, problem := range map[string]string{
		"-1h":  `older_than &#34;-1h&#34; must not be negative`,
		"soon": `older_than &#34;soon&#34; is not a duration`,
		"":     `older_than &#34;&#34; is not a duration`,
	} {
		_, body = b.submit("/events", "/events/prune", url.Values{"older_than": {value}})
		require.Contains(t, body, `class="flash error"`, value)
		require.Contains(t, body, problem, value)
	}
	_, _, body = b.confirm("/events", "/events/prune", url.Values{"older_than": {"24h"}}, false)
	require.Regexp(t, `Deleted 0 event\(s\) written before \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\.`, body)
	require.Equal(t, 9, e.eventCount())
	ask, _, body := b.confirm("/events", "/events/prune", url.Values{"older_than": {"0s"}}, false)
	require.Contains(t, ask, ">Delete 9 event(s)</button>")
	require.Contains(t, body, "Deleted 9 event(s) written before ")
	require.Zero(t, e.eventCount())
	require.Contains(t, body, `<p class="empty">No event.</p>`)

	ask, _, body = b.confirm("/events", "/events/disable", nil, false)
	require.Contains(t, ask, "no event is recorded from now on")
	require.Contains(t, body, "Job status events switched off: trigger river_bpmn_job_event dropped; the events recorded so far are kept.")
	require.Contains(t, body, `Job status events are <strong>off</strong>`)
	require.False(t, e.eventsTrigger())
	_, _, body = b.confirm("/events", "/events/disable", nil, false)
	require.Contains(t, body, "Job status events were already off: nothing changed.")
}

// TestMaintenancePage prunes ended timers and creates and drops the tenant
// fairness and fetch-order indexes from the Maintenance page, checking the
// catalog after each button; unknown orders and bad durations are named.
func TestMaintenancePage(t *testing.T) {
	e := newEnv(t)
	b := e.serve(nil)

	status, body := b.get("/indexes")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, `<a href="/indexes" class="current">Indexes</a>`)
	require.Contains(t, body, `<p id="tenant-indexes">Present: <span class="empty">none</span></p>`)
	require.Contains(t, body, `<p id="fetch-indexes">Present: <span class="empty">none</span></p>`)

	// Timers: one cancelled (ended), one still cycling.
	timers := handlers.NewTimers(e.pool, &handlers.TimersConfig{Schema: e.schema})
	jc := workflow.JobContext{ProcessInstanceID: "pi-t", ProcessDefinitionKey: "order", ActivityID: "reminder"}
	insertTimer := func() int64 {
		tx, err := e.pool.Begin(e.ctx)
		require.NoError(t, err)
		timer, err := timers.InsertTx(e.ctx, e.client, tx, reminderArgs{}, handlers.Timer{Cycle: "R/PT1H"}, jc.InsertOpts())
		require.NoError(t, err)
		require.NoError(t, tx.Commit(e.ctx))
		return timer.TimerID
	}
	ended, cycling := insertTimer(), insertTimer()
	_, err := e.engine.CancelTimer(e.ctx, ended)
	require.NoError(t, err)
	_, body = b.submit("/indexes", "/timers/prune", url.Values{"older_than": {"-5m"}})
	require.Contains(t, body, `older_than &#34;-5m&#34; must not be negative`)
	_, _, body = b.confirm("/indexes", "/timers/prune", url.Values{"older_than": {"24h"}}, false)
	require.Regexp(t, `Deleted 0 timer\(s\) that ended before \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\.`, body)
	_, err = e.engine.Timer(e.ctx, ended)
	require.NoError(t, err, "ended less than 24h ago: kept")
	_, _, body = b.confirm("/indexes", "/timers/prune", url.Values{"older_than": {"0s"}}, false)
	require.Contains(t, body, "Deleted 1 timer(s) that ended before ")
	_, err = e.engine.Timer(e.ctx, ended)
	require.ErrorIs(t, err, workflow.ErrNotFound)
	_, err = e.engine.Timer(e.ctx, cycling)
	require.NoError(t, err, "not ended: kept")

	// Tenant fairness indexes.
	_, body = b.submit("/indexes", "/indexes/fairness/enable", url.Values{"order": {"by-priority"}})
	require.Contains(t, body, "Created index river_bpmn_fetch_tenant_p (tenant fairness index).")
	require.Contains(t, body, `<p id="tenant-indexes">Present: <code>river_bpmn_fetch_tenant_p</code></p>`)
	require.Equal(t, []string{"river_bpmn_fetch_tenant_p"}, e.indexesIn("river_bpmn_fetch_tenant%"))
	_, body = b.submit("/indexes", "/indexes/fairness/enable", url.Values{"order": {"by-priority"}})
	require.Contains(t, body, "The tenant fairness index river_bpmn_fetch_tenant_p was already present: nothing changed.")
	_, body = b.submit("/indexes", "/indexes/fairness/enable", nil)
	require.Contains(t, body, "Created index river_bpmn_fetch_tenant (tenant fairness index).")
	require.Contains(t, body, `Present: <code>river_bpmn_fetch_tenant</code>, <code>river_bpmn_fetch_tenant_p</code></p>`)
	_, body = b.submit("/indexes", "/indexes/fairness/enable", url.Values{"order": {"by-priority", "sideways"}})
	require.Contains(t, body, `order &#34;sideways&#34; is not one of by-priority, timers-first, by-due-date`)
	require.Equal(t, []string{"river_bpmn_fetch_tenant", "river_bpmn_fetch_tenant_p"}, e.indexesIn("river_bpmn_fetch_tenant%"))
	ask, _, body := b.confirm("/indexes", "/indexes/fairness/disable", nil, false)
	require.Contains(t, ask, "Dropped (concurrently): river_bpmn_fetch_tenant, river_bpmn_fetch_tenant_p.")
	require.Contains(t, body, "Dropped index(es) river_bpmn_fetch_tenant, river_bpmn_fetch_tenant_p (tenant fairness indexes).")
	require.Empty(t, e.indexesIn("river_bpmn_fetch_tenant%"))
	_, _, body = b.confirm("/indexes", "/indexes/fairness/disable", nil, false)
	require.Contains(t, body, "No tenant fairness index was present: nothing dropped.")

	// Fetch-order indexes.
	_, body = b.submit("/indexes", "/indexes/fetch-order/enable", nil)
	require.Contains(t, body, `class="flash error"`)
	require.Contains(t, body, "order: tick by-priority, timers-first and/or by-due-date")
	_, body = b.submit("/indexes", "/indexes/fetch-order/enable", url.Values{"order": {"by-due-date", "by-priority"}})
	require.Contains(t, body, "Created index river_bpmn_fetch_pd (fetch-order index).")
	// With exclusive jobs (the default scope) the order's head-of-key index
	// comes with it.
	require.Contains(t, body, `<p id="fetch-indexes">Present: <code>river_bpmn_fetch_pd</code>, <code>river_bpmn_job_exclusive_instance_pd</code></p>`)
	require.Equal(t, []string{"river_bpmn_fetch_pd"}, e.indexesIn("river_bpmn_fetch_%"))
	_, body = b.submit("/indexes", "/indexes/fetch-order/enable", url.Values{"order": {"timers-first", "bogus"}})
	require.Contains(t, body, `order &#34;bogus&#34; is not one of`)
	require.Equal(t, []string{"river_bpmn_fetch_pd"}, e.indexesIn("river_bpmn_fetch_%"))
	_, _, body = b.confirm("/indexes", "/indexes/fetch-order/disable", nil, false)
	require.Contains(t, body, "Dropped index(es) river_bpmn_fetch_pd, river_bpmn_job_exclusive_instance_pd (fetch-order indexes).")
	require.Empty(t, e.indexesIn("river_bpmn_fetch_%"))
}

// newActions are the POSTs of the Events and Maintenance pages, each with
// a form that would change something.
var newActions = map[string]url.Values{
	"/events/enable":              nil,
	"/events/prune":               {"older_than": {"0s"}},
	"/timers/prune":               {"older_than": {"0s"}},
	"/indexes/fairness/enable":    {"order": {"by-priority"}},
	"/indexes/fetch-order/enable": {"order": {"by-priority"}},
	"/exclusive/indexes/enable":   {"order": {"timers-first"}},
}

// TestMaintenanceReadOnlyAndCSRF: in read-only mode the Events and
// Maintenance pages show no button and their POSTs are refused; in
// read-write mode a POST without a valid CSRF token is refused. Either way
// nothing changes in the database.
func TestMaintenanceReadOnlyAndCSRF(t *testing.T) {
	e := newEnv(t)
	b := e.serve(nil)
	ro := e.serve(&console.Options{ReadOnly: true})
	for _, page := range []string{"/events", "/indexes"} {
		status, body := ro.get(page)
		require.Equal(t, http.StatusOK, status, page)
		require.NotContains(t, body, `method="post"`, page)
		require.NotContains(t, body, "<button type=\"submit\">Enable", page)
		_, body = b.get(page)
		require.Contains(t, body, `method="post"`, page)
	}
	_, page := b.get("/indexes")
	token := b.token(page)
	for action, form := range newActions {
		f := url.Values{"csrf": {token}}
		for k, v := range form {
			f[k] = v
		}
		status, _ := ro.post(action, f)
		require.Equal(t, http.StatusForbidden, status, "read-only %s", action)

		for name, csrf := range map[string][]string{"no token": nil, "wrong token": {token[:len(token)-2] + "AA"}} {
			f := url.Values{"csrf": csrf}
			for k, v := range form {
				f[k] = v
			}
			status, body := b.post(action, f)
			require.Equal(t, http.StatusForbidden, status, "%s %s", name, action)
			require.Contains(t, body, "refused", "%s %s", name, action)
		}
	}
	require.False(t, e.eventsTrigger())
	require.Empty(t, e.indexesIn("river_bpmn_fetch_%"))

	// The same POST with the token is accepted (the refusals above were the
	// token's doing).
	_, body := b.post("/events/enable", url.Values{"csrf": {token}, "return": {"/events"}})
	require.Contains(t, body, "Job status events switched on")
	require.True(t, e.eventsTrigger())
}

// TestEventsPagePrefixAndEscaping: under a prefix, the events page's links
// and forms carry it, paging included; a process instance id full of markup
// is shown as text and percent-encoded in links, in the rows and in the
// filter.
func TestEventsPagePrefixAndEscaping(t *testing.T) {
	e := newEnv(t)
	require.NoError(t, e.engine.EnableEvents(e.ctx))
	evil := `<script>alert("pi")</script>`
	jobID := e.incident(evil) // discarded: FAILED, INCIDENT
	b := e.serve(&console.Options{Prefix: "/ops", PageSize: 1})

	status, body := b.get("/events")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, `<a href="/ops/events" class="current">Events</a>`)
	require.Contains(t, body, `<a href="/ops/indexes">Indexes</a>`)
	require.Contains(t, body, `action="/ops/events/disable"`)
	require.Contains(t, body, `action="/ops/events/prune"`)
	require.Contains(t, body, `<a href="/ops/jobs/`+id(jobID)+`">`)
	require.NotContains(t, body, "<script>alert")
	require.Contains(t, body, `href="/ops/instances/%3Cscript%3Ealert%28%22pi%22%29%3C%2Fscript%3E"`)
	require.Contains(t, body, `href="/ops/events?instance=%3cscript%3ealert%28%22pi%22%29%3c%2fscript%3e"`)
	older := olderLink(body)
	require.True(t, strings.HasPrefix(older, "/ops/events?before="), older)
	_, body = b.get(strings.TrimPrefix(older, "/ops"))
	require.Contains(t, body, `<a href="/ops/events">« Newest</a>`)

	status, body = b.get("/events?instance=" + url.QueryEscape(evil))
	require.Equal(t, http.StatusOK, status)
	require.NotContains(t, body, "<script>alert")
	require.Contains(t, body, `value="&lt;script&gt;alert(&#34;pi&#34;)&lt;/script&gt;"`)
	require.Len(t, eventRows(strings.ReplaceAll(body, `href="/ops/jobs/`, `href="/jobs/`)), 1, "one event a page")

	_, body = b.get("/indexes")
	require.Contains(t, body, `action="/ops/timers/prune"`)
	require.Contains(t, body, `action="/ops/indexes/fairness/enable"`)
	require.Contains(t, body, `action="/ops/indexes/fetch-order/disable"`)
	_, body = b.submit("/indexes", "/indexes/fetch-order/enable", url.Values{"order": {"timers-first"}})
	require.Contains(t, body, "Created index river_bpmn_fetch_t (fetch-order index).")
}

// TestHeadIndexButtons: the Maintenance page lists the exclusive head-of-key
// indexes and creates one for the scope in force (as head-index-enable does),
// refuses orders whose index a migration made, and drops them all after a
// confirmation naming them, keeping the fetch-order indexes (as
// head-index-disable does).
func TestHeadIndexButtons(t *testing.T) {
	e := newEnv(t)
	b := e.serve(nil)
	_, body := b.get("/indexes")
	require.Contains(t, body, `<p id="head-indexes">Present: <span class="empty">none</span></p>`)

	_, body = b.submit("/indexes", "/exclusive/indexes/enable", url.Values{"order": {"by-priority"}})
	require.Contains(t, body, `class="flash error"`)
	require.Contains(t, body, "order: tick timers-first and/or by-due-date")
	_, body = b.submit("/indexes", "/exclusive/indexes/enable", url.Values{"order": {"by-priority", "timers-first"}})
	require.Contains(t, body, "Created index river_bpmn_job_exclusive_instance_pt (exclusive head-of-key index).")
	require.Contains(t, body, `<p id="head-indexes">Present: <code>river_bpmn_job_exclusive_instance_pt</code></p>`)
	require.Equal(t, []string{"river_bpmn_job_exclusive_instance_pt"}, e.indexesIn("river_bpmn_job_exclusive_instance_%t"))
	_, body = b.submit("/indexes", "/indexes/fetch-order/enable", url.Values{"order": {"by-priority"}})
	require.Contains(t, body, "Created index river_bpmn_fetch_p (fetch-order index).")

	ask, _, body := b.confirm("/indexes", "/exclusive/indexes/disable", nil, false)
	require.Contains(t, ask, "Dropped (concurrently): river_bpmn_job_exclusive_instance_pt.")
	require.Contains(t, body, "Dropped index(es) river_bpmn_job_exclusive_instance_pt (exclusive head-of-key indexes).")
	require.Empty(t, e.indexesIn("river_bpmn_job_exclusive_instance_%t"))
	require.Equal(t, []string{"river_bpmn_fetch_p"}, e.indexesIn("river_bpmn_fetch_%"), "the fetch-order index stays")
}
