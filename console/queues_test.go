package console_test

import (
	"fmt"
	"net/http"
	"net/url"
	"sync/atomic"
	"testing"

	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"
)

// TestQueuesPage: the queues page states which queue no client works (one
// a client works, one River has no record of), pauses a queue through the
// confirmation (River's QueuePause) and resumes it; the job page of a job
// on the unworked queue says so too.
func TestQueuesPage(t *testing.T) {
	e := newEnv(t)
	e.startWorker(&atomic.Bool{}) // works the default queue
	lonely := e.insert("pi-q", &river.InsertOpts{Queue: "nobody_works_this"})
	b := e.serve(nil)

	status, body := b.get("/queues")
	require.Equal(t, http.StatusOK, status, body)
	require.Contains(t, body, "1 that no client works")
	require.Regexp(t, `<td>default</td>\s*<td>yes <span class="muted">\(reported `, body)
	require.Contains(t, body, "<td>nobody_works_this</td>\n<td><span class=\"stale\">no client works this queue</span> <span class=\"muted\">(never reported)</span>")

	_, body = b.get(fmt.Sprintf("/jobs/%d", lonely))
	require.Contains(t, body, `<p class="stale" id="queue-note">No client works queue &#34;nobody_works_this&#34;: River has no record of it`)

	ask, _, body := b.confirm("/queues", "/queues/pause", url.Values{"queue": {"default"}}, false)
	require.Contains(t, ask, "are not fetched until it is resumed")
	require.Contains(t, body, `Queue &#34;default&#34; paused`)
	require.Regexp(t, `<td>default</td>\s*<td>yes[^\n]*\n<td><span class="waits">paused since `, body)
	_, body = b.submit("/queues", "/queues/resume", url.Values{"queue": {"default"}})
	require.Contains(t, body, `Queue &#34;default&#34; resumed.`)
	require.NotContains(t, body, "paused since")
}
