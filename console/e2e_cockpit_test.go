package console_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/console"
	"github.com/riverbpmn/riverbpmn/internal/longtest"
)

// cockpit drives one headless Chromium against a console.
type cockpit struct {
	t      *testing.T
	ctx    context.Context
	server *httptest.Server
	shots  string
}

func newCockpit(t *testing.T, e *env) *cockpit {
	t.Helper()
	ctx := newBrowser(t)
	h, err := console.New(e.engine, nil)
	require.NoError(t, err)
	server := httptest.NewServer(h)
	t.Cleanup(server.Close)
	return &cockpit{t: t, ctx: ctx, server: server, shots: os.Getenv("RIVERBPMN_CONSOLE_SCREENSHOTS")}
}

// do runs actions with a timeout.
func (c *cockpit) do(actions ...chromedp.Action[chromedp.Void]) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(c.ctx, 20*time.Second)
	defer cancel()
	require.NoError(c.t, chromedp.Do(ctx, actions...))
}

func (c *cockpit) open(path, wait string) {
	c.t.Helper()
	c.do(chromedp.Navigate(c.server.URL+path), chromedp.WaitVisible(chromedp.CSS(wait)))
}

// waitLocation waits until the browser's location contains part: after a
// form's submit, the page that was visible stays so until the next one has
// loaded, so waiting for an element both pages have proves nothing.
func (c *cockpit) waitLocation(part string) {
	c.t.Helper()
	var loc string
	require.Eventually(c.t, func() bool {
		got, err := chromedp.Run(c.ctx, chromedp.Location())
		loc = got
		return err == nil && strings.Contains(loc, part)
	}, 20*time.Second, 20*time.Millisecond, "location %q never contained %q", loc, part)
}

func (c *cockpit) text(sel string) string {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(c.ctx, 20*time.Second)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
	require.NoError(c.t, err)
	return s
}

// screenshot saves the top of the page as name.png in the screenshots
// directory, when one is set.
func (c *cockpit) screenshot(name string) {
	c.t.Helper()
	if c.shots == "" {
		return
	}
	png, err := chromedp.Run(c.ctx, chromedp.CaptureScreenshot())
	require.NoError(c.t, err)
	require.Less(c.t, len(png), 250_000, "keep the guide's screenshots small")
	require.NoError(c.t, os.WriteFile(filepath.Join(c.shots, name+".png"), png, 0o644))
}

// waitBulk waits on a bulk action's page (it reloads itself) until the
// action has finished, and returns the progress line.
func (c *cockpit) waitBulk() string {
	c.t.Helper()
	c.do(chromedp.WaitVisible(chromedp.CSS("#bulk")))
	loc, err := chromedp.Run(c.ctx, chromedp.Location())
	require.NoError(c.t, err)
	// The page reloads itself every second while the action runs; load it
	// here too, so that a reload under way never hides the end.
	require.Eventually(c.t, func() bool {
		c.open(strings.TrimPrefix(loc, c.server.URL), "#bulk-status")
		return strings.Contains(c.text("#bulk-status"), "finished")
	}, time.Minute, 200*time.Millisecond)
	return c.text("#bulk-progress")
}

// TestBrowserCustomerSaysOrderIsStuck is the operator's path, in a real
// browser: "order 4711 is stuck" -> search the instance -> its job -> the
// reason (suspended) -> Activate -> the next reason (its key is held by
// another job) -> that job.
func TestBrowserCustomerSaysOrderIsStuck(t *testing.T) {
	e := newEnv(t)
	holder := e.insert("order-4711", nil)
	fetched, err := e.engine.Driver().PluginPilot().JobGetAvailable(e.ctx, e.engine.Driver().GetExecutor(), nil, &riverdriver.JobGetAvailableParams{
		ClientID: "worker-7f3a", MaxAttemptedBy: 100, MaxToLock: 1, Queue: river.QueueDefault, Schema: e.schema,
	})
	require.NoError(t, err)
	require.Equal(t, holder, fetched.Jobs[0].ID)
	stuck := e.insert("order-4711", nil)
	e.insert("order-4712", nil)
	changed, err := e.engine.SuspendJob(e.ctx, stuck)
	require.NoError(t, err)
	require.True(t, changed)
	c := newCockpit(t, e)

	c.open("/instances", "#filters")
	c.do(
		chromedp.SendKeys(chromedp.CSS(`#filters input[name=instance]`), "order-4711"),
		chromedp.Click(chromedp.CSS(`#filters button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS("#instances-list")),
	)
	// The unfiltered list is visible until the filtered page has loaded:
	// wait for the filtered one (a filter that does not work never shows).
	var list string
	require.Eventually(t, func() bool {
		// The page may be between two documents: no text yet is not a
		// failure.
		text, err := chromedp.Run(c.ctx, chromedp.Text(chromedp.CSS("#instances-list")))
		list = text
		return err == nil && strings.Contains(list, "order-4711") && !strings.Contains(list, "order-4712")
	}, 10*time.Second, 50*time.Millisecond, "the list filtered to order-4711: %s", list)
	c.screenshot("instances")
	c.do(chromedp.Click(chromedp.CSS(`#instances-list a[href="/instances/order-4711"]`)), chromedp.WaitVisible(chromedp.CSS("#jobs")))
	c.do(chromedp.Click(chromedp.CSS(fmt.Sprintf(`#jobs a[href="/jobs/%d"]`, stuck))), chromedp.WaitVisible(chromedp.CSS("#why")))
	require.Contains(t, c.text("#why"), "The job itself is suspended.")
	require.Contains(t, c.text("#why"), "What to do: Activate the job")

	c.do(chromedp.Click(chromedp.CSS(`#job-actions form[action$="/activate"] button`)), chromedp.WaitVisible(chromedp.CSS(".flash")))
	require.Equal(t, fmt.Sprintf("Job %d activated.", stuck), strings.TrimSpace(c.text(".flash")))
	why := c.text("#why")
	require.Contains(t, why, fmt.Sprintf(`Its exclusive key "order-4711" (scope: process instance) is held by job %d on client worker-7f3a`, holder))
	require.Contains(t, c.text("#exclusive-scope"), "process instance")
	c.screenshot("job-why")
	c.do(chromedp.Click(chromedp.CSS(fmt.Sprintf(`#why a[href="/jobs/%d"]`, holder))), chromedp.WaitVisible(chromedp.CSS("#why")))
	require.Contains(t, c.text("#why"), "The job is running now.")
}

// TestBrowserBulkActions presses every bulk action in a real browser: on
// the Jobs page, filter, tick jobs and suspend them, activate them, set
// their priority, stop every job a filter matches; on the Incidents page,
// retry the selected incidents, then every open one. Each ends on its
// progress page, finished.
func TestBrowserBulkActions(t *testing.T) {
	longtest.Skip(t)
	e := newEnv(t)
	var ids []int64
	for i := range 6 {
		ids = append(ids, e.insert(fmt.Sprintf("order-%d", 4700+i), nil))
	}
	for _, i := range []int{4, 5} {
		require.NoError(t, e.engine.SetJobRetries(e.ctx, ids[i], 0))
	}
	c := newCockpit(t, e)

	tick := func(ids ...int64) {
		for _, id := range ids {
			c.do(chromedp.Click(chromedp.CSS(fmt.Sprintf(`input[type=checkbox][value="%d"]`, id))))
		}
	}
	// confirmIt presses the confirmation page's button (a bulk action asks
	// first, with the count it will touch).
	confirmIt := func() {
		c.do(chromedp.WaitVisible(chromedp.CSS("#confirm-button")), chromedp.Click(chromedp.CSS("#confirm-button")))
	}
	apply := func(action string) {
		c.do(chromedp.SetValue(chromedp.CSS("#bulk-action"), action), chromedp.Click(chromedp.CSS("#bulk-apply")))
		confirmIt()
	}

	// Filter: available jobs, oldest first.
	c.open("/jobs", "#filters")
	c.do(
		chromedp.SetValue(chromedp.CSS(`#filters select[name=order]`), "oldest"),
		chromedp.Click(chromedp.CSS(`#filters button[type=submit]`)),
	)
	c.waitLocation("order=oldest")
	c.do(chromedp.WaitVisible(chromedp.CSS("#jobs-list")))
	c.screenshot("jobs")
	tick(ids[0], ids[1])
	apply("suspend")
	require.Contains(t, c.waitBulk(), "2 of 2 done, 2 changed, 0 failed")
	c.screenshot("bulk")
	c.open("/jobs?state=pending", "#jobs-list")
	require.Equal(t, 2, strings.Count(c.text("#jobs-list tbody"), "pending"))

	tick(ids[0], ids[1])
	apply("activate")
	require.Contains(t, c.waitBulk(), "2 of 2 done, 2 changed")

	c.open("/jobs", "#jobs-list")
	tick(ids[2])
	c.do(chromedp.SetValue(chromedp.CSS(`#bulk-form input[name=priority]`), "77"))
	apply("priority")
	require.Contains(t, c.waitBulk(), "1 of 1 done, 1 changed")
	c.open(fmt.Sprintf("/jobs/%d", ids[2]), "#job")
	require.Contains(t, c.text("#job"), "77 (BPMN)")

	// Stop every available job of instances order-4703*: one.
	c.open("/jobs?state=available&instance=order-4703", "#jobs-list")
	c.do(chromedp.Click(chromedp.CSS(`#bulk-form input[name=scope][value=filter]`)))
	apply("stop")
	require.Contains(t, c.waitBulk(), "1 of 1 done, 1 changed")
	c.open(fmt.Sprintf("/jobs/%d", ids[3]), "#job")
	require.Contains(t, c.text("#job"), "cancelled")

	// Incidents: retry the selected one, then every open one.
	c.open("/incidents", "#incidents")
	c.screenshot("incidents-bulk")
	tick(ids[4])
	c.do(chromedp.Click(chromedp.CSS("#bulk-retry")))
	confirmIt()
	require.Contains(t, c.waitBulk(), "1 of 1 done, 1 changed")
	c.open("/incidents", "#bulk-retry-form")
	c.do(chromedp.Click(chromedp.CSS(`#bulk-retry-form input[name=scope][value=all]`)), chromedp.Click(chromedp.CSS("#bulk-retry")))
	confirmIt()
	require.Contains(t, c.waitBulk(), "1 of 1 done, 1 changed")
	open, err := e.engine.OpenIncidents(e.ctx)
	require.NoError(t, err)
	require.Empty(t, open)

	// The pages the other browser test does not show.
	_, err = e.engine.SuspendProcessInstance(e.ctx, "order-4700")
	require.NoError(t, err)
	for _, p := range []struct{ path, wait, name string }{{"/suspensions", "main", "suspended"}, {"/sessions", "main", "clients"}} {
		c.open(p.path, p.wait)
		c.screenshot(p.name)
	}
}
