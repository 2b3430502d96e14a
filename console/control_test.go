package console_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/console"
	"github.com/riverbpmn/riverbpmn/jobcontrol"
	"github.com/riverbpmn/riverbpmn/lifecycle"
	"github.com/riverbpmn/riverbpmn/workflow"
)

// jobState reads a job's River state.
func (e *env) jobState(jobID int64) rivertype.JobState {
	e.t.Helper()
	details, err := e.engine.JobDetails(e.ctx, jobID)
	require.NoError(e.t, err)
	return details.Job.State
}

// TestJobControlButtons drives one job through the job page's buttons:
// suspend, activate, queue (a pending job with a prerequisite), stop; the
// page shows status, hold reasons and prerequisites as they change.
func TestJobControlButtons(t *testing.T) {
	e := newEnv(t)
	b := e.serve(nil)
	prereq := e.insert("pi-ctl", nil)
	opts, err := lifecycle.Opts{Pending: true, DependsOn: []int64{prereq}}.Apply(nil)
	require.NoError(t, err)
	jobID := e.insert("pi-ctl", opts)
	page := "/jobs/" + id(jobID)

	status, body := b.get(page)
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, `<span class="status status-PENDING">PENDING</span>`)
	require.Regexp(t, `id="held-for">.*<code>`+string(lifecycle.Pending)+`</code>`, body)
	require.Regexp(t, `id="prerequisites">0 of 1 completed:\s*<a href="/jobs/`+id(prereq)+`">`, body)
	require.Contains(t, body, ">Queue</button>")
	require.Contains(t, body, ">Suspend</button>")
	require.NotContains(t, body, ">Activate</button>")

	_, body = b.submit(page, page+"/suspend", nil)
	require.Contains(t, body, "Job "+id(jobID)+" suspended.")
	require.Regexp(t, `id="held-for">.*<code>suspended</code>`, body)
	require.Contains(t, body, ">Activate</button>")
	_, body = b.submit(page, page+"/suspend", nil)
	require.Contains(t, body, "was already suspended")

	_, body = b.submit(page, page+"/activate", nil)
	require.Contains(t, body, "Job "+id(jobID)+" activated.")
	require.NotRegexp(t, `id="held-for">.*<code>suspended</code>`, body)

	// Queued, it still waits for its prerequisite.
	_, body = b.submit(page, page+"/queue", nil)
	require.Contains(t, body, "something else still holds it")
	require.Equal(t, rivertype.JobStatePending, e.jobState(jobID))

	// Stopped while it waits: ABORTED at once, no button left but the page.
	ask, _, body := b.confirm(page, page+"/stop", nil, false)
	require.Contains(t, ask, "Waiting job "+id(jobID)+" (console_task, pending, process instance pi-ctl): it is cancelled before it starts")
	require.Contains(t, body, "Job "+id(jobID)+": aborted before it started.")
	require.Contains(t, body, `<span class="status status-ABORTED">ABORTED</span>`)
	require.NotContains(t, body, ">Stop…</button>")
	require.Equal(t, rivertype.JobStateCancelled, e.jobState(jobID))
	_, form := b.get("/definitions")
	_, body = b.post(page+"/stop", url.Values{"csrf": {b.token(form)}, "return": {page}, "confirmed": {"yes"}})
	require.Contains(t, body, "already finished, left as it is")

	// Unknown job: a clear error, no change.
	_, body = b.submit("/definitions", "/jobs/999999999/suspend", nil)
	require.Contains(t, body, `class="flash error"`)
	require.Contains(t, body, "999999999")
}

// TestJobPageProgress shows a running job's progress as its worker reports it.
func TestJobPageProgress(t *testing.T) {
	e := newEnv(t)
	b := e.serve(nil)
	jobID := e.insert("pi-progress", nil)
	// What a Reporter writes (package jobcontrol) for a job at 250 of 1000.
	_, err := e.pool.Exec(e.ctx, `UPDATE `+pgx.Identifier{e.schema, "river_job"}.Sanitize()+` SET state = 'running', attempt = 1, attempted_at = now() WHERE id = $1`, jobID)
	require.NoError(t, err)
	r := jobcontrol.NewReporter(e.pool, e.schema, jobID, 1, time.Hour)
	r.SetTotal(1000)
	r.Advance(250)
	require.NoError(t, r.Close(e.ctx))

	_, body := b.get("/jobs/" + id(jobID))
	require.Contains(t, body, `<span class="status status-RUNNING">RUNNING</span>`)
	require.Regexp(t, `id="progress"><progress max="100" value="25"></progress> 25% \(250 of 1000\)`, body)
	require.Contains(t, body, `<table class="kv" id="status" data-refresh="5">`, "a running job's status reloads itself")

	ask, _, body := b.confirm("/jobs/"+id(jobID), "/jobs/"+id(jobID)+"/stop", nil, false)
	require.Contains(t, ask, "the client running it is asked to cancel its work")
	require.Contains(t, body, "stop requested")
	require.Contains(t, body, "stop requested</span>")
}

// TestInstanceControlButtons stops, suspends, activates and queues a whole
// process instance from its page.
func TestInstanceControlButtons(t *testing.T) {
	e := newEnv(t)
	b := e.serve(nil)
	waiting := e.insert("pi-inst", nil)
	opts, err := lifecycle.Opts{Pending: true}.Apply(nil)
	require.NoError(t, err)
	pending := e.insert("pi-inst", opts)
	other := e.insert("pi-other", nil)
	page := "/instances/pi-inst"
	form := func() url.Values { return url.Values{} }

	_, body := b.get(page)
	require.Contains(t, body, ">Stop all jobs…</button>")

	_, body = b.submit(page, "/instances/pi-inst/suspend", form())
	require.Contains(t, body, `Process instance &#34;pi-inst&#34; suspended; 2 existing job(s) suspended.`)
	require.Equal(t, rivertype.JobStatePending, e.jobState(waiting))
	_, body = b.get("/suspensions")
	require.Contains(t, body, `<a href="/instances/pi-inst">pi-inst</a>`)

	// Activated from the Suspended page.
	_, body = b.submit("/suspensions", "/instances/pi-inst/activate", form())
	require.Contains(t, body, `Process instance &#34;pi-inst&#34; activated`)
	require.Contains(t, body, "Nothing is suspended.")
	require.Equal(t, rivertype.JobStateAvailable, e.jobState(waiting))

	_, body = b.submit(page, "/instances/pi-inst/queue", form())
	require.Contains(t, body, `Process instance &#34;pi-inst&#34;: Job `+id(pending)+` queued`)
	require.Equal(t, rivertype.JobStateAvailable, e.jobState(pending))

	ask, _, body := b.confirm(page, "/instances/pi-inst/stop", form(), false)
	require.Contains(t, ask, "2 waiting job(s) are cancelled before they start.")
	require.Contains(t, ask, ">Stop 2 job(s)</button>")
	require.Contains(t, body, `Process instance &#34;pi-inst&#34;: 2 waiting job(s) aborted, stop requested for 0 running job(s), 0 already finished.`)
	require.Equal(t, rivertype.JobStateCancelled, e.jobState(waiting))
	require.Equal(t, rivertype.JobStateAvailable, e.jobState(other), "another instance is left alone")

	_, body = b.submit(page, "/instances/%20/stop", url.Values{})
	require.Contains(t, body, `instance &#34; &#34; is empty`)
}

// TestDefinitionSuspensionButtons suspends and activates a job definition
// (with its jobs) and schedules a process definition's suspension, which the
// Suspended page lists.
func TestDefinitionSuspensionButtons(t *testing.T) {
	e := newEnv(t)
	b := e.serve(nil)
	jobID := e.insert("pi-def", nil)

	_, body := b.get("/definitions")
	require.Contains(t, body, `name="type" value="job_definition"><input type="hidden" name="id" value="charge-async">`)

	_, body = b.submit("/definitions", "/definitions/suspend", url.Values{"type": {"job_definition"}, "id": {"charge-async"}, "include_jobs": {"1"}})
	require.Contains(t, body, `Job definition &#34;charge-async&#34; suspended; 1 existing job(s) suspended.`)
	require.Equal(t, rivertype.JobStatePending, e.jobState(jobID))
	_, body = b.get("/suspensions")
	require.Regexp(t, `<td>job_definition</td>\s*<td>charge-async</td>`, body)

	_, body = b.submit("/suspensions", "/definitions/activate", url.Values{"type": {"job_definition"}, "id": {"charge-async"}, "include_jobs": {"1"}})
	require.Contains(t, body, `Job definition &#34;charge-async&#34; activated; 1 existing job(s) activated.`)
	require.Equal(t, rivertype.JobStateAvailable, e.jobState(jobID))

	at := time.Now().UTC().Add(time.Hour).Truncate(time.Minute)
	_, body = b.submit("/definitions", "/definitions/suspend", url.Values{"type": {"process_definition"}, "id": {"order"}, "at": {at.Format("2006-01-02T15:04")}})
	require.Contains(t, body, `Process definition &#34;order&#34;: suspension scheduled for `+at.Format(time.RFC3339))
	_, body = b.get("/suspensions")
	require.Regexp(t, `<td>suspend</td>\s*<td>process_definition</td>\s*<td>order</td>\s*<td>no</td>\s*<td>`+at.Format("2006-01-02 15:04:05Z"), body)
	require.Equal(t, rivertype.JobStateAvailable, e.jobState(jobID), "scheduled, not applied")

	for _, bad := range []url.Values{
		{"type": {"job"}, "id": {"charge-async"}},
		{"type": {"job_definition"}, "id": {"charge-async"}, "at": {"tomorrow"}},
		{"type": {"job_definition"}, "id": {"no-such-definition"}},
	} {
		_, body = b.submit("/definitions", "/definitions/suspend", bad)
		require.Contains(t, body, `class="flash error"`, bad)
	}
	require.Contains(t, body, "no-such-definition")
}

// TestClientsPage lists the liveness session of a running client.
func TestClientsPage(t *testing.T) {
	e := newEnv(t)
	b := e.serve(nil)
	_, body := b.get("/sessions")
	require.Contains(t, body, "No liveness session")

	engine, err := workflow.NewEngine(e.pool, &workflow.Config{Schema: e.schema})
	require.NoError(t, err)
	workers := river.NewWorkers()
	river.AddWorker(workers, &taskWorker{})
	client, err := workflow.NewClient(engine, &river.Config{
		ID: "console-live-client", Schema: e.schema, Workers: workers,
		Queues: map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 1}},
	})
	require.NoError(t, err)
	require.NoError(t, client.Start(e.ctx))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = client.Stop(ctx)
	})
	require.Eventually(t, func() bool {
		_, body = b.get("/sessions")
		return strings.Contains(body, "<td>console-live-client</td>")
	}, 10*time.Second, 50*time.Millisecond)
	require.Regexp(t, `<td>console-live-client</td>\s*<td class="num">\d+</td>\s*<td>[^<]+</td>\s*<td>yes</td>`, body)
}

// TestReadOnlyHidesControls: no control button in read-only mode, and the
// actions are refused.
func TestReadOnlyHidesControls(t *testing.T) {
	e := newEnv(t)
	jobID := e.insert("pi-ro", nil)
	b := e.serve(nil)
	ro := e.serve(&console.Options{ReadOnly: true})
	for _, page := range []string{"/jobs/" + id(jobID), "/instances/pi-ro", "/definitions"} {
		_, body := ro.get(page)
		require.NotContains(t, body, ">Suspend</button>", page)
		require.NotContains(t, body, ">Stop", page)
	}
	_, body := b.get("/jobs/" + id(jobID))
	status, _ := ro.post("/jobs/"+id(jobID)+"/suspend", url.Values{"csrf": {b.token(body)}})
	require.Equal(t, http.StatusForbidden, status)
	require.Equal(t, rivertype.JobStateAvailable, e.jobState(jobID))
}
