package console_test

import (
	"fmt"
	"net/http"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/console"
	"github.com/riverbpmn/riverbpmn/exclusive"
)

func TestDefinitionsPage(t *testing.T) {
	e := newEnv(t)
	jobID := e.insert("pi-1", nil)
	b := e.serve(nil)

	status, body := b.get("/definitions")
	require.Equal(t, http.StatusOK, status)
	require.Regexp(t, `(?s)<td>charge-async</td>\s*<td>order</td>\s*<td>charge</td>\s*<td>console_task</td>\s*<td class="num">-</td>\s*<td class="num">1</td>\s*<td class="num">0</td>`, body)
	require.NotContains(t, body, ">Clear</button>", "nothing to clear")

	// Override without cascade: the existing job keeps its priority.
	_, body = b.submit("/definitions", "/definitions/priority", url.Values{"definition": {"charge-async"}, "priority": {"40"}})
	require.Contains(t, body, `Job definition &#34;charge-async&#34;: overriding priority set to 40 (for new jobs).`)
	require.Contains(t, body, `<td class="num">40</td>`)
	require.Contains(t, body, ">Clear</button>")
	require.Equal(t, "5", bpmnPriority(t, e, jobID))

	// With cascade it reaches the unfinished job.
	_, body = b.submit("/definitions", "/definitions/priority", url.Values{"definition": {"charge-async"}, "priority": {"41"}, "cascade": {"1"}})
	require.Contains(t, body, "applied to its unfinished jobs")
	require.Equal(t, "41", bpmnPriority(t, e, jobID))

	_, body = b.submit("/definitions", "/definitions/priority/clear", url.Values{"definition": {"charge-async"}})
	require.Contains(t, body, "overriding priority cleared")
	def, err := e.engine.JobDefinition(e.ctx, "charge-async")
	require.NoError(t, err)
	require.Nil(t, def.OverridingPriority)

	_, body = b.submit("/definitions", "/definitions/priority", url.Values{"definition": {"no-such-def"}, "priority": {"1"}})
	require.Contains(t, body, `class="flash error"`)
	require.Contains(t, body, "no-such-def")
}

func bpmnPriority(t *testing.T, e *env, jobID int64) string {
	t.Helper()
	details, err := e.engine.JobDetails(e.ctx, jobID)
	require.NoError(t, err)
	require.NotNil(t, details.Context.Priority)
	return fmt.Sprint(*details.Context.Priority)
}

func TestLocksPage(t *testing.T) {
	e := newEnv(t)
	b := e.serve(&console.Options{PageSize: 1})
	_, body := b.get("/exclusive/locks")
	require.Contains(t, body, "No exclusive key is held.")

	var held []int64
	for _, instance := range []string{"pi-a", "pi-b"} {
		e.insert(instance, nil)
		fetched, err := e.engine.Driver().PluginPilot().JobGetAvailable(e.ctx, e.engine.Driver().GetExecutor(), nil, &riverdriver.JobGetAvailableParams{
			ClientID: "client-x", MaxAttemptedBy: 100, MaxToLock: 1, Queue: river.QueueDefault, Schema: e.schema,
		})
		require.NoError(t, err)
		require.Len(t, fetched.Jobs, 1)
		held = append(held, fetched.Jobs[0].ID)
	}
	status, body := b.get("/exclusive/locks")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, `<a href="/instances/pi-a">pi-a</a>`)
	require.NotContains(t, body, "pi-b", "page size 1")
	require.NotContains(t, body, `class="stale">STALE`)
	_, body = b.get("/exclusive/locks?after=pi-a")
	require.Contains(t, body, `<a href="/instances/pi-b">pi-b</a>`)

	// River's rescuer makes pi-a's holder retryable: its lock is stale.
	_, err := e.engine.Driver().GetExecutor().JobRescueMany(e.ctx, &riverdriver.JobRescueManyParams{
		ID:           []int64{held[0]},
		Error:        [][]byte{[]byte(`{"at":"2026-01-01T00:00:00Z","attempt":1,"error":"stuck"}`)},
		FinalizedAt:  []*time.Time{nil},
		ScheduledAt:  []time.Time{time.Now().Add(time.Hour)},
		Schema:       e.schema,
		State:        []string{string(rivertype.JobStateRetryable)},
		StuckHorizon: time.Now(),
	})
	require.NoError(t, err)
	_, body = b.get("/exclusive/locks")
	require.Regexp(t, `(?s)pi-a</a>.*retryable.*class="stale">STALE`, body)

	_, body = b.submit("/exclusive/locks", "/exclusive/locks/delete-stale", nil)
	require.Contains(t, body, "Deleted 1 stale or free exclusive lock rows.")
	require.Contains(t, body, "pi-b", "the live lock stays")
	require.NotContains(t, body, ">pi-a<")
}

// TestLocksPageExclusiveScope: the locks page shows the exclusive scope in
// force and records another (Engine.SetExclusiveScope, as `riverbpmn
// exclusive-scope --set` does); a name that is no scope is refused.
func TestLocksPageExclusiveScope(t *testing.T) {
	e := newEnv(t)
	b := e.serve(&console.Options{})
	_, body := b.get("/exclusive/locks")
	require.Contains(t, body, "Exclusive scope in force: <strong>process instance</strong> (not recorded yet")

	require.Contains(t, body, ">Record scope…</button>")
	require.NotContains(t, body, "onclick", "no script: the CSP forbids it")
	ask, _, body := b.confirm("/exclusive/locks", "/exclusive/scope", url.Values{"scope": {"root-process-instance"}}, false)
	require.Contains(t, ask, "No scope is recorded yet; every client of the schema must agree with root process instance from now on")
	require.NotContains(t, ask, `id="confirm-alive"`, "no client is alive")
	require.Contains(t, body, "Recorded the exclusive scope root process instance (none recorded).")
	require.Contains(t, body, "Exclusive scope in force: <strong>root process instance</strong> (recorded ")
	recorded, err := e.engine.RecordedExclusiveScope(e.ctx)
	require.NoError(t, err)
	require.NotNil(t, recorded)
	require.Equal(t, exclusive.RootProcessInstance, recorded.Scope)

	_, body = b.submit("/exclusive/locks", "/exclusive/scope", url.Values{"scope": {"instance"}})
	require.Contains(t, body, `class="flash error"`)
	require.Contains(t, body, `scope &#34;instance&#34; is not one of process-instance, root-process-instance, none`)
	scope, err := e.engine.ExclusiveScopeInForce(e.ctx)
	require.NoError(t, err)
	require.Equal(t, exclusive.RootProcessInstance, scope, "a bad name changes nothing")

	ro := e.serve(&console.Options{ReadOnly: true})
	_, body = ro.get("/exclusive/locks")
	require.NotContains(t, body, `action="/exclusive/scope"`, "no form in read-only mode")
}

func TestJobPage(t *testing.T) {
	e := newEnv(t)
	fail := &atomic.Bool{}
	fail.Store(true)
	done := e.startWorker(fail)
	jobID := e.insert("pi-1", &river.InsertOpts{MaxAttempts: 1})
	require.Eventually(t, func() bool {
		open, err := e.engine.OpenIncidents(e.ctx)
		return err == nil && len(open) == 1
	}, 10*time.Second, 20*time.Millisecond)

	b := e.serve(&console.Options{RiverUIURL: "https://ops.example/riverui/"})
	status, body := b.get("/jobs/" + id(jobID))
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, `<a href="https://ops.example/riverui/jobs/`+id(jobID)+`" id="riverui-link">`)
	require.Contains(t, body, `class="state state-discarded">discarded`)
	require.Contains(t, body, `<td id="retries-left">0</td>`)
	require.Contains(t, body, "payment service answered 503 &lt;b&gt;unavailable&lt;/b&gt;", "the attempt's error, escaped")
	require.Regexp(t, `(?s)<table id="attempts">.*<td class="num">1</td>`, body)
	require.Contains(t, body, `<a href="/instances/pi-1">pi-1</a>`)
	require.Contains(t, body, "<strong>open</strong>", "its incident")
	require.Contains(t, body, `&#34;instance&#34;: &#34;pi-1&#34;`, "its args")

	fail.Store(false)
	_, body = b.submit("/jobs/"+id(jobID), "/jobs/"+id(jobID)+"/retries", url.Values{"retries": {"1"}})
	require.Contains(t, body, fmt.Sprintf("Job %d: retries set to 1.", jobID))
	select {
	case got := <-done:
		require.Equal(t, jobID, got)
	case <-time.After(10 * time.Second):
		t.Fatal("the revived job did not run")
	}

	// Without a River UI URL there is no link; unknown and bad ids.
	plain := e.serve(nil)
	_, body = plain.get("/jobs/" + id(jobID))
	require.NotContains(t, body, "riverui-link")
	status, _ = plain.get("/jobs/999999999")
	require.Equal(t, http.StatusNotFound, status)
	status, _ = plain.get("/jobs/abc")
	require.Equal(t, http.StatusBadRequest, status)

	// Set one job's priority.
	other := e.insert("pi-2", &river.InsertOpts{ScheduledAt: time.Now().Add(time.Hour)})
	_, body = plain.submit("/jobs/"+id(other), "/jobs/"+id(other)+"/priority", url.Values{"priority": {"77"}})
	require.Contains(t, body, fmt.Sprintf("Job %d: priority set to 77.", other))
	require.Equal(t, "77", bpmnPriority(t, e, other))
}

func TestPrefix(t *testing.T) {
	e := newEnv(t)
	jobID := e.incident("pi-1")
	b := e.serve(&console.Options{Prefix: "/ops/bpmn/"})
	resp, err := b.http.Get(b.server.URL + "/ops/bpmn")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "/ops/bpmn/", resp.Request.URL.Path, "the overview")

	status, body := b.get("/incidents")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, `href="/ops/bpmn/static/console.css"`)
	require.Contains(t, body, `href="/ops/bpmn/jobs/`+id(jobID)+`"`)
	require.Contains(t, body, `action="/ops/bpmn/jobs/`+id(jobID)+`/retries"`)
	status, css := b.get("/static/console.css")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, css, "font")

	_, body = b.submit("/incidents", "/jobs/"+id(jobID)+"/retries", url.Values{"retries": {"1"}})
	require.Contains(t, body, "No open incidents.")

	// Outside the prefix nothing is served.
	resp, err = http.Get(b.server.URL + "/incidents")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
}
