package console_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/console"
	"github.com/riverbpmn/riverbpmn/handlers"
	"github.com/riverbpmn/riverbpmn/workflow"
)

// chromiumPath is Debian's Chromium, installed by scripts/chromium.sh;
// $RIVERBPMN_CHROMIUM names another binary.
func chromiumPath() string {
	if p := os.Getenv("RIVERBPMN_CHROMIUM"); p != "" {
		return p
	}
	return "/usr/bin/chromium"
}

// newBrowser starts a headless Chromium that downloads nothing (no
// component updates, sync or background networking), or skips the test
// when there is none.
func newBrowser(t *testing.T) context.Context {
	t.Helper()
	chromium := chromiumPath()
	if _, err := os.Stat(chromium); err != nil {
		t.Skipf("no Chromium at %s (%v): run scripts/chromium.sh (apt-get install chromium) to run the browser test", chromium, err)
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(chromium),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1200, 760),
	)
	ctx, cancel := chromedp.NewContext(allocCtx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	// The first Run starts the browser; it lives as long as ctx.
	if err := chromedp.Do(ctx); err != nil {
		t.Skipf("Chromium at %s does not start: %v", chromium, err)
	}
	return ctx
}

// TestBrowserRetryIncident drives a real headless Chromium through the
// console: open the incidents page, press Retry, see the incident resolved
// and the job run. With RIVERBPMN_CONSOLE_SCREENSHOTS=DIR it also saves PNG
// screenshots of the main pages in DIR (docs/operating/console holds the docs').
func TestBrowserRetryIncident(t *testing.T) {
	ctx := newBrowser(t)
	e := newEnv(t)

	// Process instance order-1042: job A was fetched by a client that went
	// away, so it holds the instance's exclusive key; B and C wait for it.
	// It also has a reminder timer.
	holder := e.insert("order-1042", nil)
	fetched, err := e.engine.Driver().PluginPilot().JobGetAvailable(e.ctx, e.engine.Driver().GetExecutor(), nil, &riverdriver.JobGetAvailableParams{
		ClientID: "worker-7f3a", MaxAttemptedBy: 100, MaxToLock: 1, Queue: river.QueueDefault, Schema: e.schema,
	})
	require.NoError(t, err)
	require.Len(t, fetched.Jobs, 1)
	require.Equal(t, holder, fetched.Jobs[0].ID)
	e.insert("order-1042", nil)
	e.insert("order-1042", nil)
	timers := handlers.NewTimers(e.pool, &handlers.TimersConfig{Schema: e.schema})
	tx, err := e.pool.Begin(e.ctx)
	require.NoError(t, err)
	jc := workflow.JobContext{ProcessInstanceID: "order-1042", ProcessDefinitionKey: "order", ActivityID: "payment_reminder"}
	_, err = timers.InsertTx(e.ctx, e.client, tx, reminderArgs{}, handlers.Timer{Cycle: "R3/PT1H"}, jc.InsertOpts())
	require.NoError(t, err)
	require.NoError(t, tx.Commit(e.ctx))
	require.NoError(t, e.engine.SetOverridingJobPriority(e.ctx, "charge-async", 20, false))

	// Two jobs of other instances fail until they are discarded: incidents.
	fail := &atomic.Bool{}
	fail.Store(true)
	done := e.startWorker(fail)
	failing := e.insert("order-1043", &river.InsertOpts{MaxAttempts: 1})
	e.insert("order-1044", &river.InsertOpts{MaxAttempts: 1})
	require.Eventually(t, func() bool {
		open, err := e.engine.OpenIncidents(e.ctx)
		return err == nil && len(open) == 2
	}, 20*time.Second, 20*time.Millisecond)

	h, err := console.New(e.engine, &console.Options{RiverUIURL: "http://127.0.0.1:8080"})
	require.NoError(t, err)
	server := httptest.NewServer(h)
	t.Cleanup(server.Close)

	shots := os.Getenv("RIVERBPMN_CONSOLE_SCREENSHOTS")
	// screenshot saves the whole page, or the top of a long one.
	screenshot := func(name string) {
		t.Helper()
		if shots == "" {
			return
		}
		shot := chromedp.FullScreenshot(100) // 100: PNG
		if name == "job" || name == "instance" {
			// Long pages (the instance's has its history): the top.
			shot = chromedp.CaptureScreenshot()
		}
		png, err := chromedp.Run(ctx, shot)
		require.NoError(t, err)
		require.Less(t, len(png), 150_000, "keep the README's screenshots small")
		require.NoError(t, os.WriteFile(filepath.Join(shots, name+".png"), png, 0o644))
	}
	text := func(sel string) string {
		t.Helper()
		tctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		s, err := chromedp.Run(tctx, chromedp.Text(chromedp.CSS(sel)))
		require.NoError(t, err)
		return s
	}

	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(server.URL+"/incidents"),
		chromedp.WaitVisible(chromedp.CSS("#incidents")),
	))
	row := text(fmt.Sprintf("#incidents tr:has(a[href='/jobs/%d'])", failing))
	require.Contains(t, row, "order-1043")
	require.Contains(t, row, "payment service answered 503 <b>unavailable</b>", "the message, shown as text")
	screenshot("incidents")

	// Press Retry on order-1043's incident; the job may now succeed.
	fail.Store(false)
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(fmt.Sprintf("#incidents tr:has(a[href='/jobs/%d']) button", failing))),
		chromedp.WaitVisible(chromedp.CSS(".flash")),
	))
	require.Equal(t, fmt.Sprintf("Job %d: retries set to 1.", failing), strings.TrimSpace(text(".flash")))
	require.NotContains(t, text("main"), "order-1043", "its incident is resolved")
	require.Contains(t, text("#incidents"), "order-1044", "the other incident stays open")

	select {
	case got := <-done:
		require.Equal(t, failing, got)
	case <-time.After(20 * time.Second):
		t.Fatal("the retried job did not run")
	}
	require.Eventually(t, func() bool {
		require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(fmt.Sprintf("%s/jobs/%d", server.URL, failing))))
		return strings.Contains(text("#job"), "completed")
	}, 10*time.Second, 100*time.Millisecond, "the job page shows the job completed")
	require.Contains(t, text("#job-incidents"), "failedJob")
	screenshot("job")

	for _, p := range []struct{ path, wait, name string }{
		{"/instances/order-1042", "#jobs", "instance"},
		{"/definitions", "#definitions", "definitions"},
		{"/exclusive/locks", "#locks", "locks"},
		{"/events", "#events-state", "events"},
		{"/indexes", "#tenant-indexes", "maintenance"},
	} {
		require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(server.URL+p.path), chromedp.WaitVisible(chromedp.CSS(p.wait))))
		screenshot(p.name)
		if p.name == "instance" {
			require.Contains(t, text("#jobs"), "holds the key")
			require.Contains(t, text("#jobs"), fmt.Sprintf("waits for job %d", holder))
		}
	}
}
