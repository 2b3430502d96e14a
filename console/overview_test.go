package console_test

import (
	"net/http"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/stretchr/testify/require"
)

// TestOverviewPage: the overview counts a definition's jobs by state
// (running, available, waiting on a key, suspended, failed), its open
// incidents, the queues (one no client works, stated), and draws the jobs
// completed and failed and the incidents opened as SVG bars; the CSP lets
// its refresh script (from the console itself) run, and nothing else.
func TestOverviewPage(t *testing.T) {
	e := newEnv(t)
	// A job running (fetched), two waiting on its key, one suspended, one
	// failed with its incident, one on a queue nobody works, and one a
	// worker completes.
	holder := e.insert("order-1", nil)
	fetched, err := e.engine.Driver().PluginPilot().JobGetAvailable(e.ctx, e.engine.Driver().GetExecutor(), nil, &riverdriver.JobGetAvailableParams{
		ClientID: "worker-1", MaxAttemptedBy: 100, MaxToLock: 1, Queue: river.QueueDefault, Schema: e.schema,
	})
	require.NoError(t, err)
	require.Equal(t, holder, fetched.Jobs[0].ID)
	e.insert("order-1", nil)
	e.insert("order-1", nil)
	suspended := e.insert("order-2", nil)
	_, err = e.engine.SuspendJob(e.ctx, suspended)
	require.NoError(t, err)
	e.incident("order-3")
	e.insert("order-4", &river.InsertOpts{Queue: "nobody_works_this"})
	b := e.serve(nil)

	status, body := b.get("/")
	require.Equal(t, http.StatusOK, status, body)
	require.Contains(t, body, `<a href="/" class="current">Overview</a>`)
	tile := func(label string) string {
		m := regexp.MustCompile(`<span class="n">(\d+)</span> ` + label).FindStringSubmatch(body)
		require.NotNil(t, m, label)
		return m[1]
	}
	require.Equal(t, "1", tile("running"))
	require.Equal(t, "2", tile("waiting on a key"))
	require.Equal(t, "1", tile("suspended"))
	require.Equal(t, "1", tile("failed"))
	require.Equal(t, "1", tile("open incidents"))
	require.Equal(t, "2", tile(`queue\(s\) no client works`), "default and nobody_works_this: no client has started yet")
	row := regexp.MustCompile(`(?s)<td>order</td><td>charge-async</td>.*?</tr>`).FindString(body)
	require.NotEmpty(t, row, body)
	require.Regexp(t, `(?s)state=running.*>1</a></td>\s*<td class="num"><a[^>]*>3</a></td>\s*<td class="num">2</td>`, row, "1 running, 3 available of which 2 wait on the key")
	require.Contains(t, row, "<td>suspended 1</td>")
	require.Contains(t, body, "<td>nobody_works_this</td>\n<td><span class=\"stale\">no client works this queue</span> <span class=\"muted\">(never reported)</span>")
	require.Contains(t, body, `data-refresh="10"`)
	require.Contains(t, body, `<script src="/static/refresh.js" defer></script>`)
	require.Contains(t, body, "<title>Incidents opened: 1 opened from ")

	// A job completed by a worker shows as a green bar.
	fail := &atomic.Bool{}
	done := e.startWorker(fail)
	completed := e.insert("order-5", &river.InsertOpts{Queue: river.QueueDefault})
	require.Eventually(t, func() bool {
		select {
		case id := <-done:
			return id == completed
		default:
			return false
		}
	}, 20*time.Second, 20*time.Millisecond)
	require.Eventually(t, func() bool {
		_, body = b.get("/?window=1h")
		return strings.Contains(body, `class="bar-completed"`)
	}, 10*time.Second, 50*time.Millisecond)
	require.Contains(t, body, `<strong>1h</strong>`)

	resp, err := b.http.Get(b.server.URL + "/")
	require.NoError(t, err)
	resp.Body.Close()
	require.Contains(t, resp.Header.Get("Content-Security-Policy"), "script-src 'self';")
	require.NotContains(t, resp.Header.Get("Content-Security-Policy"), "unsafe-inline")
	status, _ = b.get("/?window=3y")
	require.Equal(t, http.StatusBadRequest, status)
	status, js := b.get("/static/refresh.js")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, js, `querySelector("[data-refresh]")`)
}
