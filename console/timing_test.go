package console_test

import (
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/internal/longtest"
)

// TestConsolePageTimingsAtAMillion times every console page over a schema of
// 1,000,000 jobs ($RIVERBPMN_CONSOLE_TIMING_JOBS overrides) and as many job
// status events: jobs of 10,000 process instances of 4 process definitions,
// 96% completed over the last day (each completion a status event, written
// 100 per statement as a busy system writes them), 2% discarded with their
// incidents, 1% available, 1% scheduled, and 200 suspended. Each page is
// loaded 3 times; the best and the worst are logged with the load average.
// docs/operating/console.md quotes a run.
func TestConsolePageTimingsAtAMillion(t *testing.T) {
	longtest.Skip(t)
	n := 1_000_000
	if s := os.Getenv("RIVERBPMN_CONSOLE_TIMING_JOBS"); s != "" {
		var err error
		n, err = strconv.Atoi(s)
		require.NoError(t, err)
	}
	e := newEnv(t)
	require.NoError(t, e.engine.EnableEvents(e.ctx))
	jobs := pgxIdent(e.schema) + ".river_job"
	start := time.Now()
	_, err := e.pool.Exec(e.ctx, `
INSERT INTO `+jobs+` (args, kind, max_attempts, metadata, priority, queue, state, scheduled_at, created_at)
SELECT '{}', 'console_task', 3,
    jsonb_build_object('bpmn', jsonb_build_object(
        'process_instance_id', 'order-' || (i % 10000),
        'process_definition_key', 'order-' || (i % 4),
        'activity_id', 'charge',
        'job_definition_id', 'charge-async',
        'exclusive', true)),
    1, 'default', 'available', now(), now() - (i % 86400) * interval '1 second'
FROM generate_series(1, $1::integer) i`, n)
	require.NoError(t, err)
	t.Logf("inserted %d jobs in %s", n, time.Since(start))

	// Completions, 100 jobs per statement: one status event each.
	start = time.Now()
	completed := n * 96 / 100
	_, err = e.pool.Exec(e.ctx, `
DO $$
DECLARE
    lo bigint;
    hi bigint;
BEGIN
    SELECT min(id) INTO lo FROM `+jobs+`;
    hi := lo + `+strconv.Itoa(completed)+`;
    WHILE lo < hi LOOP
        UPDATE `+jobs+`
        SET state = 'completed', attempt = 1, attempted_at = now(),
            finalized_at = now() - (id % 86400) * interval '1 second'
        WHERE id >= lo AND id < least(lo + 100, hi);
        lo := lo + 100;
    END LOOP;
END $$`)
	require.NoError(t, err)
	t.Logf("completed %d jobs (as many events) in %s", completed, time.Since(start))

	// The rest: discarded (through the engine's retries: incidents),
	// scheduled, suspended; the remainder stays available.
	var ids []int64
	rows, err := e.pool.Query(e.ctx, `SELECT id FROM `+jobs+` WHERE state = 'available' ORDER BY id`)
	require.NoError(t, err)
	for rows.Next() {
		var id int64
		require.NoError(t, rows.Scan(&id))
		ids = append(ids, id)
	}
	require.NoError(t, rows.Err())
	discarded, scheduled := n*2/100, n/100
	start = time.Now()
	for _, id := range ids[:discarded] {
		require.NoError(t, e.engine.SetJobRetries(e.ctx, id, 0))
	}
	_, err = e.pool.Exec(e.ctx, `UPDATE `+jobs+` SET state = 'scheduled', scheduled_at = now() + interval '1 hour' WHERE id = ANY($1)`, ids[discarded:discarded+scheduled])
	require.NoError(t, err)
	for _, id := range ids[discarded+scheduled : discarded+scheduled+200] {
		_, err := e.engine.SuspendJob(e.ctx, id)
		require.NoError(t, err)
	}
	t.Logf("discarded %d (incidents), scheduled %d, suspended 200 in %s", discarded, scheduled, time.Since(start))
	_, err = e.pool.Exec(e.ctx, `VACUUM ANALYZE `+jobs)
	require.NoError(t, err)
	_, err = e.pool.Exec(e.ctx, `VACUUM ANALYZE `+pgxIdent(e.schema)+`.river_bpmn_event`)
	require.NoError(t, err)
	var events int64
	require.NoError(t, e.pool.QueryRow(e.ctx, `SELECT coalesce(sum(event_count), 0) FROM `+pgxIdent(e.schema)+`.river_bpmn_event`).Scan(&events))
	t.Logf("%d job status events recorded", events)

	b := e.serve(nil)
	_, page := b.get("/jobs")
	token := b.token(page)
	timed := func(name string, load func() int) {
		t.Helper()
		var best, worst time.Duration
		for i := range 3 {
			start := time.Now()
			status := load()
			d := time.Since(start)
			require.Equal(t, http.StatusOK, status, name)
			if i == 0 || d < best {
				best = d
			}
			worst = max(worst, d)
		}
		t.Logf("%-58s best %8s  worst %8s", name, best.Round(100*time.Microsecond), worst.Round(100*time.Microsecond))
	}
	get := func(path string) func() int {
		return func() int { status, _ := b.get(path); return status }
	}
	for _, path := range []string{
		"/", "/?window=7d", "/incidents", "/incidents?after=" + strconv.FormatInt(ids[discarded/2], 10),
		"/jobs", "/jobs?state=discarded", "/jobs?state=available", "/jobs?held=suspended",
		"/jobs?process_definition=order-1&state=scheduled", "/jobs?instance=order-42",
		"/instances", "/instances?state=discarded", "/instances/order-4242",
		"/jobs/" + strconv.FormatInt(ids[0], 10), "/definitions", "/exclusive/locks", "/sessions", "/bulk",
		"/events", "/events?instance=order-4242", "/timers", "/queues", "/deployments",
	} {
		timed("GET "+path, get(path))
	}
	confirm := func(form url.Values) func() int {
		return func() int {
			f := url.Values{"csrf": {token}}
			for k, v := range form {
				f[k] = v
			}
			status, body := b.post("/bulk/jobs", f)
			if !strings.Contains(body, `id="confirm"`) {
				return 0
			}
			return status
		}
	}
	timed("confirm bulk stop of state=available (count)", confirm(url.Values{"scope": {"filter"}, "action": {"stop"}, "state": {"available"}}))
	timed("confirm bulk stop of every job (count)", confirm(url.Values{"scope": {"filter"}, "action": {"stop"}}))
	timed("confirm prune events older than 12h (count)", func() int {
		status, _ := b.post("/events/prune", url.Values{"csrf": {token}, "older_than": {"12h"}})
		return status
	})
	if out, err := exec.Command("uptime").Output(); err == nil {
		t.Logf("load: %s", strings.TrimSpace(string(out)))
	}
	fmt.Fprintln(os.Stderr) // keep the table apart from the test's own lines
}
