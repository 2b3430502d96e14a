package console_test

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/handlers"
	"github.com/riverbpmn/riverbpmn/workflow"
)

// TestBrowserCockpitPages walks the overview and the safe actions in a real
// browser: the overview's counts, charts and its refresh script (which must
// run under the console's CSP); an incident of a 246-character instance id
// that leaves the page no wider than the window; a bulk suspend over a
// filter that asks first with the count, runs, and is undone with the
// "held: suspended" filter; the bulk history; incidents grouped by error;
// every timer; the queues; Stop that asks first; Record
// scope that asks first. It saves screenshots of each.
func TestBrowserCockpitPages(t *testing.T) {
	e := newEnv(t)
	fail := &atomic.Bool{}
	fail.Store(true)
	done := e.startWorker(fail)
	long := "order-" + strings.Repeat("7f3a9c", 40) // 246 characters
	e.insert(long, &river.InsertOpts{MaxAttempts: 1})
	e.insert("order-4801", &river.InsertOpts{MaxAttempts: 1})
	require.Eventually(t, func() bool {
		open, err := e.engine.OpenIncidents(e.ctx)
		return err == nil && len(open) == 2
	}, 20*time.Second, 20*time.Millisecond)
	fail.Store(false)
	for i := range 3 {
		e.insert(fmt.Sprintf("order-48%02d", 10+i), nil)
	}
	for range 3 {
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Fatal("the jobs did not run")
		}
	}
	// Jobs no client takes: a queue nobody works.
	var waiting []int64
	for i := range 4 {
		waiting = append(waiting, e.insert(fmt.Sprintf("order-49%02d", i), &river.InsertOpts{Queue: "nobody_works_this"}))
	}
	c := newCockpit(t, e)

	// The overview: counts, charts, and the refresh script at work.
	c.open("/", "#overview")
	require.Contains(t, c.text("#tiles"), "2\nopen incidents")
	require.Contains(t, c.text("#queues-overview"), "no client works this queue")
	require.Contains(t, c.text("#definitions-overview tfoot"), "TOTAL\t0\t4")
	rects, err := chromedp.Run(c.ctx, chromedp.Evaluate[int](`document.querySelectorAll("#charts rect.bar-completed").length`))
	require.NoError(t, err)
	require.Positive(t, rects, "completed jobs drawn")
	c.screenshot("overview")
	require.Eventually(t, func() bool {
		return strings.Contains(c.text("#refresh-status"), "refreshed at")
	}, 3*refreshSeconds*time.Second, 100*time.Millisecond, "the refresh script runs under the CSP and reloads the figures in place")
	require.Contains(t, c.text("#tiles"), "2\nopen incidents")

	// A 246-character instance id wraps: the page is no wider than the
	// window, and its Retry button is on screen.
	c.open("/incidents", "#incidents")
	require.Contains(t, c.text("#incidents-total"), "2 open incident(s).")
	fits, err := chromedp.Run(c.ctx, chromedp.Evaluate[bool](`document.documentElement.scrollWidth <= window.innerWidth`))
	require.NoError(t, err)
	require.True(t, fits, "the page is no wider than the window")
	c.screenshot("incidents-long-id")

	// Bulk suspend over a filter: the count first, then the action.
	c.open("/jobs?state=available&instance=order-49", "#jobs-list")
	require.Contains(t, c.text("#jobs-total"), "4 job(s) match.")
	c.do(chromedp.Click(chromedp.CSS(`#bulk-form input[name=scope][value=filter]`)),
		chromedp.SetValue(chromedp.CSS("#bulk-action"), "suspend"), chromedp.Click(chromedp.CSS("#bulk-apply")))
	c.do(chromedp.WaitVisible(chromedp.CSS("#confirm")))
	require.Equal(t, "Suspend 4 job(s)", strings.TrimSpace(c.text("#confirm-button")))
	require.Contains(t, c.text("#confirm-touches"), "4 job(s) are suspended")
	c.screenshot("confirm-bulk")
	require.Equal(t, "available", string(e.jobState(waiting[0])), "nothing before the confirmation")
	c.do(chromedp.Click(chromedp.CSS("#confirm-button")))
	require.Contains(t, c.waitBulk(), "4 of 4 done, 4 changed, 0 failed")

	// Undone with the same filter, state replaced by "held: suspended".
	c.open("/jobs?held=suspended&instance=order-49", "#jobs-list")
	require.Contains(t, c.text("#jobs-total"), "4 job(s) match.")
	c.do(chromedp.Click(chromedp.CSS(`#bulk-form input[name=scope][value=filter]`)),
		chromedp.SetValue(chromedp.CSS("#bulk-action"), "activate"), chromedp.Click(chromedp.CSS("#bulk-apply")))
	c.do(chromedp.WaitVisible(chromedp.CSS("#confirm")))
	require.Equal(t, "Activate 4 job(s)", strings.TrimSpace(c.text("#confirm-button")))
	c.do(chromedp.Click(chromedp.CSS("#confirm-button")))
	require.Contains(t, c.waitBulk(), "4 of 4 done, 4 changed, 0 failed")
	require.Equal(t, "available", string(e.jobState(waiting[0])))
	c.open("/bulk", "#bulk-list")
	require.Contains(t, c.text("#bulk-list"), "Activate every job matching held=suspended")
	c.screenshot("bulk-list")

	// Incidents grouped by error.
	c.open("/incidents?group=1", "#incident-groups")
	require.Contains(t, c.text("#incident-groups"), "payment service answered 503")
	c.screenshot("incidents-grouped")

	// Every timer, a start event among them.
	timers := handlers.NewTimers(e.pool, &handlers.TimersConfig{Schema: e.schema})
	tx, err := e.pool.Begin(e.ctx)
	require.NoError(t, err)
	for _, jc := range []workflow.JobContext{
		{ProcessInstanceID: "order-4901", ProcessDefinitionKey: "order", ActivityID: "payment_reminder"},
		{ProcessDefinitionKey: "order", ActivityID: "nightly_report"},
	} {
		_, err = timers.InsertTx(e.ctx, e.client, tx, reminderArgs{}, handlers.Timer{Cycle: "R3/PT1H"}, jc.InsertOpts())
		require.NoError(t, err)
	}
	require.NoError(t, tx.Commit(e.ctx))
	c.open("/timers", "#timers")
	require.Contains(t, c.text("#timers"), "start event")
	c.screenshot("timers")

	// The queues: the one nobody works is stated.
	c.open("/queues", "#queues")
	require.Contains(t, c.text("#queues-total"), "1 that no client works")
	c.screenshot("queues")

	// Stop asks first; Cancel goes back, Confirm stops.
	c.open(fmt.Sprintf("/jobs/%d", waiting[0]), "#job-actions")
	c.do(chromedp.Click(chromedp.CSS(`#job-actions form[action$="/stop"] button`)), chromedp.WaitVisible(chromedp.CSS("#confirm")))
	require.Contains(t, c.text("#confirm-touches"), fmt.Sprintf("Waiting job %d", waiting[0]))
	c.screenshot("confirm-stop")
	c.do(chromedp.Click(chromedp.CSS("#confirm-cancel")), chromedp.WaitVisible(chromedp.CSS("#job-actions")))
	require.Equal(t, "available", string(e.jobState(waiting[0])))
	c.do(chromedp.Click(chromedp.CSS(`#job-actions form[action$="/stop"] button`)), chromedp.WaitVisible(chromedp.CSS("#confirm")))
	c.do(chromedp.Click(chromedp.CSS("#confirm-button")), chromedp.WaitVisible(chromedp.CSS(".flash")))
	require.Contains(t, c.text(".flash"), "aborted before it started")

	// Record scope asks first (the button's confirm() was blocked by the
	// CSP); the worker has no liveness session here (the env's engine has
	// liveness off), so nothing is alive to name.
	c.open("/exclusive/locks", "#set-exclusive-scope")
	c.do(chromedp.SetValue(chromedp.CSS(`#set-exclusive-scope select`), "root-process-instance"),
		chromedp.Click(chromedp.CSS(`#set-exclusive-scope button`)), chromedp.WaitVisible(chromedp.CSS("#confirm")))
	require.Contains(t, c.text("#confirm-touches"), "every client of the schema must agree with root process instance")
	c.screenshot("confirm-scope")
	c.do(chromedp.Click(chromedp.CSS("#confirm-button")), chromedp.WaitVisible(chromedp.CSS(".flash")))
	require.Contains(t, c.text(".flash"), "Recorded the exclusive scope root process instance")
}

// refreshSeconds is the overview's data-refresh (TestOverviewPage checks it).
const refreshSeconds = 10
