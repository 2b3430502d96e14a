package console_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// TestBrowserInstanceHistory walks, in a real browser, an instance's
// history (its jobs run, one fails into an incident, with events on), its
// events page with their total, the lists' totals and the timers filtered
// by process definition. It saves screenshots of the history and the
// events of one instance.
func TestBrowserInstanceHistory(t *testing.T) {
	e := newEnv(t)
	c := newCockpit(t, e)
	require.NoError(t, e.engine.EnableEvents(e.ctx))
	var fail atomic.Bool
	done := e.startWorker(&fail)
	first := e.insert("order-5120", nil)
	select {
	case id := <-done:
		require.Equal(t, first, id)
	case <-time.After(30 * time.Second):
		t.Fatal("the first job did not run")
	}
	fail.Store(true)
	failing := e.insert("order-5120", nil)
	require.Eventually(t, func() bool {
		var state string
		err := e.pool.QueryRow(e.ctx, `SELECT state FROM `+pgxIdent(e.schema)+`.river_job WHERE id = $1 AND cardinality(errors) > 0`, failing).Scan(&state)
		return err == nil && state != "running"
	}, 30*time.Second, 100*time.Millisecond)
	// An incident: retries 0 once the job is not running (the worker may
	// be retrying it meanwhile).
	require.Eventually(t, func() bool {
		return e.engine.SetJobRetries(e.ctx, failing, 0) == nil
	}, 30*time.Second, 50*time.Millisecond)
	for range 3 {
		e.insert("other-5121", nil) // other instances' events, newer
	}

	c.open("/instances/order-5120", "#history")
	history := c.text("#history")
	for _, what := range []string{"CREATED", "RUNNING", "SUCCEEDED", "FAILED", "INCIDENT"} {
		require.Contains(t, history, what)
	}
	require.NotContains(t, history, "other-5121")
	_, err := chromedp.Run(c.ctx, chromedp.Evaluate[any](`document.getElementById("history-heading").scrollIntoView({block: "start"})`))
	require.NoError(t, err)
	c.screenshot("instance-history")

	c.open("/events?instance=order-5120", "#events")
	require.Regexp(t, `^\d+ events\.$`, c.text("#events-total"))
	c.screenshot("events-instance")

	c.open("/instances", "#instances-total")
	require.Contains(t, c.text("#instances-total"), "process instances.")
	c.open("/timers?process_definition=order", "#timers-total")
	require.Equal(t, "0 timers.", c.text("#timers-total"))
}
