package console_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/handlers"
	"github.com/riverbpmn/riverbpmn/workflow"
)

// TestBadInputIsRefusedBeforeTheDatabase: a NUL byte or invalid UTF-8 in a
// query parameter, a path segment (a process instance id) or a form field
// answers 400 naming it, never a database error or SQL text.
func TestBadInputIsRefusedBeforeTheDatabase(t *testing.T) {
	e := newEnv(t)
	b := e.serve(nil)
	for _, path := range []string{
		"/jobs?kind=a%00b", "/instances?instance=pi%00", "/instances/%00", "/events?instance=x%00",
		"/definitions?after=%00", "/exclusive/locks?after=%00", "/jobs?tenant=%ff%fe",
	} {
		status, body := b.get(path)
		require.Equal(t, http.StatusBadRequest, status, path)
		require.NotContains(t, body, "SELECT", path)
		require.NotContains(t, body, "SQLSTATE", path)
		require.Regexp(t, `(query parameter|path segment) \w* ?.*(holds a NUL byte|is not valid UTF-8)`, body, path)
	}
	_, page := b.get("/jobs")
	status, body := b.post("/instances/pi-1/suspend", url.Values{"csrf": {b.token(page)}, "instance": {"pi\x00"}})
	require.Equal(t, http.StatusBadRequest, status)
	require.Contains(t, body, "form field instance")
}

// TestDatabaseErrorIs500WithAShortMessage: a query the database fails (its
// table is gone) answers 500 with PostgreSQL's message and code, without
// the statement.
func TestDatabaseErrorIs500WithAShortMessage(t *testing.T) {
	e := newEnv(t)
	b := e.serve(nil)
	_, err := e.pool.Exec(e.ctx, "ALTER TABLE "+pgx.Identifier{e.schema, "river_job"}.Sanitize()+" RENAME TO river_job_gone")
	require.NoError(t, err)
	for _, path := range []string{"/jobs", "/instances", "/jobs?state=discarded&kind=x"} {
		status, body := b.get(path)
		require.Equal(t, http.StatusInternalServerError, status, path)
		require.Regexp(t, `The database failed: relation &#34;.*river_job&#34; does not exist \(SQLSTATE 42P01\)\.`, body, path)
		require.NotContains(t, body, "SELECT", path)
		require.NotContains(t, body, "river_bpmn_ctx", path)
	}
}

// TestRedirectStaysInside: after an action the console goes back only to a
// path inside it; tabs, newlines, backslashes, other hosts and schemes,
// encoded or not, go to the console's root instead.
func TestRedirectStaysInside(t *testing.T) {
	e := newEnv(t)
	b := e.serve(nil)
	_, page := b.get("/exclusive/locks")
	token := b.token(page)
	for back, want := range map[string]string{
		"/exclusive/locks?after=x": "/exclusive/locks?after=x",
		"/\t/evil.example":         "/", "/%09/evil.example": "/", "/\n/evil.example": "/", "/\\evil.example": "/",
		"//evil.example": "/", "https://evil.example/": "/", "/%2F/evil.example": "/", "javascript:alert(1)": "/",
	} {
		status, loc := b.postNoRedirect("/exclusive/locks/delete-stale", url.Values{"csrf": {token}, "return": {back}})
		require.Equal(t, http.StatusSeeOther, status, back)
		require.Equal(t, want, loc, "return %q", back)
	}
}

// TestTimerMoveSaysTheRealMove: moving a timer's due date says by how much
// it moved, from when, and what a cascade does to the later occurrences.
func TestTimerMoveSaysTheRealMove(t *testing.T) {
	e := newEnv(t)
	timers := handlers.NewTimers(e.pool, &handlers.TimersConfig{Schema: e.schema})
	tx, err := e.pool.Begin(e.ctx)
	require.NoError(t, err)
	jc := workflow.JobContext{ProcessInstanceID: "pi-move", ProcessDefinitionKey: "order", ActivityID: "reminder"}
	timer, err := timers.InsertTx(e.ctx, e.client, tx, reminderArgs{}, handlers.Timer{Cycle: "R3/PT2H"}, jc.InsertOpts())
	require.NoError(t, err)
	require.NoError(t, tx.Commit(e.ctx))
	info, err := e.engine.Timer(e.ctx, timer.TimerID)
	require.NoError(t, err)
	was := info.NextDueAt.UTC()
	b := e.serve(nil)
	page := "/instances/pi-move"

	due := was.Add(90 * time.Minute)
	_, body := b.submit(page, fmt.Sprintf("/timers/%d/due-date", timer.TimerID), url.Values{"due": {due.Format(time.RFC3339Nano)}})
	require.Contains(t, body, fmt.Sprintf("Timer %d: due %s (moved 1h30m0s later, from %s).", timer.TimerID, due.Format(time.RFC3339), was.Format(time.RFC3339)))

	earlier := due.Add(-30 * time.Minute)
	_, body = b.submit(page, fmt.Sprintf("/timers/%d/due-date", timer.TimerID), url.Values{"due": {earlier.Format(time.RFC3339Nano)}, "cascade": {"1"}})
	require.Contains(t, body, fmt.Sprintf("Timer %d: due %s (moved 30m0s earlier, from %s); its later occurrences move by ", timer.TimerID, earlier.Format(time.RFC3339), due.Format(time.RFC3339)))
}

// TestExecuteOnAnUnworkedQueueAnswersAtOnce: Execute now on a job whose
// queue no client works (River has no record of it) answers at once, saying
// so, instead of waiting ExecuteTimeout for a run that cannot come.
func TestExecuteOnAnUnworkedQueueAnswersAtOnce(t *testing.T) {
	e := newEnv(t)
	jobID := e.insert("pi-unworked", &river.InsertOpts{Queue: "nobody_works_this"})
	b := e.serve(nil)
	page := fmt.Sprintf("/jobs/%d", jobID)
	start := time.Now()
	_, body := b.submit(page, page+"/execute", nil)
	require.Less(t, time.Since(start), 10*time.Second, "at once, not after ExecuteTimeout")
	require.Contains(t, body, `class="flash error"`)
	require.Contains(t, body, fmt.Sprintf("job %d not executed: no client works its queue &#34;nobody_works_this&#34; (River has no record of that queue", jobID))
	require.Equal(t, "available", string(e.jobState(jobID)), "left as it was")

	// A queue a client reported long ago: stated with its last report.
	_, err := e.pool.Exec(e.ctx, "INSERT INTO "+pgx.Identifier{e.schema, "river_queue"}.Sanitize()+" (name, created_at, metadata, updated_at) VALUES ('nobody_works_this', now() - interval '2 hours', '{}', now() - interval '1 hour')")
	require.NoError(t, err)
	_, body = b.submit(page, page+"/execute", nil)
	require.Contains(t, body, "no client works its queue &#34;nobody_works_this&#34; (its last report by a client was at ")
}

// TestLongTextsFold: a 52 KB error is folded on the job page (its start,
// the rest behind a details element, capped), and a 246-character instance
// id is on the incidents page whole (TestBrowserCockpitPages checks that
// it wraps: the page is no wider than the window).
func TestLongTextsFold(t *testing.T) {
	e := newEnv(t)
	long := strings.Repeat("x", 246)
	jobID := e.incident(long)
	huge := "boom: " + strings.Repeat("stack frame line; ", 52*1024/18)
	_, err := e.pool.Exec(e.ctx, "UPDATE "+pgx.Identifier{e.schema, "river_job"}.Sanitize()+
		` SET errors = ARRAY[jsonb_build_object('at', now(), 'attempt', 1, 'error', $2::text, 'trace', '')] WHERE id = $1`, jobID, huge)
	require.NoError(t, err)
	b := e.serve(nil)
	_, body := b.get(fmt.Sprintf("/jobs/%d", jobID))
	require.Contains(t, body, fmt.Sprintf("<summary>all %d characters</summary>", len(huge)))
	require.Less(t, len(body), 2*20_000+15_000, "each place the error shows (attempts, why panel) holds at most 20,000 characters of it")
	require.Contains(t, body, "more characters: riverbpmn job ID --json shows them all")

	_, body = b.get("/incidents")
	require.Contains(t, body, ">"+long+"</a>")
}
