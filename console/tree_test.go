package console_test

import (
	"html"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/console"
)

// TestInstanceTree: a called instance's page links its root, and the root's
// page lists the instances under it with their open incidents, linked both
// ways, so a child's incident shows on its root.
func TestInstanceTree(t *testing.T) {
	e := newEnv(t)
	var ids []int64
	rows, err := e.pool.Query(e.ctx, `
INSERT INTO `+pgxIdent(e.schema)+`.river_job (args, kind, max_attempts, metadata, priority, queue, state, scheduled_at)
SELECT '{}', 'console_task', 3,
    jsonb_build_object('bpmn', jsonb_build_object('process_instance_id', inst, 'root_process_instance_id', 'root-1',
        'process_definition_key', 'order', 'activity_id', 'charge')),
    1, 'default', 'scheduled', now() + interval '1 day'
FROM unnest(ARRAY['root-1', 'child-1a', 'child-1b']) inst
RETURNING id`)
	require.NoError(t, err)
	for rows.Next() {
		var id int64
		require.NoError(t, rows.Scan(&id))
		ids = append(ids, id)
	}
	require.NoError(t, rows.Err())
	require.Len(t, ids, 3)
	require.NoError(t, e.engine.SetJobRetries(e.ctx, ids[1], 0)) // child-1a: an incident
	b := e.serve(nil)

	_, body := b.get("/instances/root-1")
	require.Contains(t, body, "A root process instance.")
	require.Regexp(t, `<a href="/instances/child-1a">child-1a</a></td>\s*<td></td>\s*<td class="num">0</td><td class="num">1</td>\s*<td class="num"><a class="stale" href="/incidents\?instance=child-1a">1</a></td>`, body)
	require.Contains(t, body, `<a href="/instances/child-1b">child-1b</a>`)

	_, body = b.get("/instances/child-1b")
	require.Contains(t, body, `Called under root process instance <a href="/instances/root-1">root-1</a>.`)
	require.Contains(t, body, "<strong>child-1b</strong> (this one)")
	require.Regexp(t, `href="/incidents\?instance=child-1a">1</a>`, body, "the sibling's incident shows too")
}

// TestInstanceHistory: an instance's page shows its timeline, newest first:
// its jobs' status events (found by the events' index by instance, so an
// instance whose events lie behind thousands of newer ones of other
// instances still has them), paged, and the creation of its jobs; with
// events off, the times the jobs' rows keep.
func TestInstanceHistory(t *testing.T) {
	e := newEnv(t)
	b := e.serve(nil)
	jobs := pgxIdent(e.schema) + ".river_job"

	// Events off: the jobs' own times.
	quiet := e.insert("quiet-1", nil)
	_, err := e.pool.Exec(e.ctx, `UPDATE `+jobs+` SET state = 'completed', attempt = 1, attempted_at = now() - interval '1 minute', finalized_at = now() WHERE id = $1`, quiet)
	require.NoError(t, err)
	status, body := b.get("/instances/quiet-1")
	require.Equal(t, 200, status)
	require.Contains(t, body, `id="history-events-off"`)
	for _, what := range []string{"CREATED", "ATTEMPTED", "FINALIZED"} {
		require.Contains(t, body, `status-`+what+`">`+what+`</span>`)
	}

	// Events on: the instance's jobs run and fail behind 3,000 events of
	// other instances.
	require.NoError(t, e.engine.EnableEvents(e.ctx))
	ids := []int64{e.insert("hist-1", nil), e.insert("hist-1", nil)}
	_, err = e.pool.Exec(e.ctx, `UPDATE `+jobs+` SET state = 'running', attempt = 1, attempted_at = now() WHERE id = ANY($1)`, ids)
	require.NoError(t, err)
	_, err = e.pool.Exec(e.ctx, `UPDATE `+jobs+` SET state = 'completed', finalized_at = now() WHERE id = $1`, ids[0])
	require.NoError(t, err)
	_, err = e.pool.Exec(e.ctx, `UPDATE `+jobs+` SET state = 'retryable', scheduled_at = now() + interval '1 hour',
		errors = ARRAY['{"at": "2026-01-01T00:00:00Z", "attempt": 1, "error": "card declined"}'::jsonb] WHERE id = $1`, ids[1])
	require.NoError(t, err)
	require.NoError(t, e.engine.SetJobRetries(e.ctx, ids[1], 0))
	_, err = e.pool.Exec(e.ctx, `
INSERT INTO `+jobs+` (args, kind, max_attempts, metadata, priority, queue, state, scheduled_at)
SELECT '{}', 'console_task', 3, jsonb_build_object('bpmn', jsonb_build_object('process_instance_id', 'other-' || i)),
    1, 'default', 'available', now()
FROM generate_series(1, 3000) i`)
	require.NoError(t, err)
	_, err = e.pool.Exec(e.ctx, `UPDATE `+jobs+` SET state = 'running', attempt = 1, attempted_at = now() WHERE metadata @> '{"bpmn": {}}' AND state = 'available' AND id > $1`, ids[1])
	require.NoError(t, err)

	status, body = b.get("/instances/hist-1")
	require.Equal(t, 200, status)
	require.NotContains(t, body, `id="history-events-off"`)
	history := body[strings.Index(body, `<table id="history">`):]
	history = history[:strings.Index(history, "</table>")]
	require.Equal(t, 2, strings.Count(history, "status-RUNNING\""), history)
	require.Equal(t, 1, strings.Count(history, "status-SUCCEEDED\""))
	require.Equal(t, 1, strings.Count(history, "status-INCIDENT\""))
	require.Equal(t, 2, strings.Count(history, "status-FAILED\""), "the failed attempt, then the discard")
	require.Contains(t, history, "card declined")
	require.Equal(t, 2, strings.Count(history, "status-CREATED\""))
	require.NotContains(t, history, "other-")

	// Paged: two events a page.
	b2 := e.serve(&console.Options{PageSize: 2})
	_, body = b2.get("/instances/hist-1")
	older := regexp.MustCompile(`href="(/instances/hist-1\?[^"]*hbefore=[^"]*)" rel="next"`).FindStringSubmatch(body)
	require.NotNil(t, older, "a link to the older history")
	status, body = b2.get(html.UnescapeString(older[1]))
	require.Equal(t, 200, status)
	require.Contains(t, body, "« Newest")
	require.Contains(t, body, `<table id="history">`)

	status, _ = b.get("/instances/hist-1?hbefore=nope")
	require.Equal(t, 400, status)
}

// TestListTotals: the lists state their totals: process instances (paged
// through their listing), deployments, events (every one, and one
// instance's through the index).
func TestListTotals(t *testing.T) {
	e := newEnv(t)
	require.NoError(t, e.engine.EnableEvents(e.ctx))
	for _, inst := range []string{"tot-1", "tot-2", "tot-2", "tot-3"} {
		e.incident(inst) // FAILED and INCIDENT events each
	}
	b := e.serve(&console.Options{PageSize: 1})
	_, body := b.get("/instances")
	require.Contains(t, body, `<p class="total" id="instances-total">3 process instances.</p>`)
	_, body = b.get("/instances?instance=tot-2")
	require.Contains(t, body, `<p class="total" id="instances-total">1 process instances.</p>`)
	_, body = b.get("/events")
	require.Contains(t, body, `<p class="total" id="events-total">8 events.</p>`)
	_, body = b.get("/events?instance=tot-2")
	require.Contains(t, body, `<p class="total" id="events-total">4 events.</p>`)
	_, body = b.get("/deployments")
	require.Contains(t, body, `<p class="total" id="deployments-total">0 deployments.</p>`)
	n, atLeast, err := e.engine.CountEvents(e.ctx, "tot-3")
	require.NoError(t, err)
	require.Equal(t, int64(2), n)
	require.False(t, atLeast)
}

// TestInstanceTreeByParent: with the callers recorded (the parent in the
// jobs' contexts), the tree nests each instance under the one that called
// it, a grandchild's incident counts on its parent and on the root, and a
// called instance's page links its caller.
func TestInstanceTreeByParent(t *testing.T) {
	e := newEnv(t)
	var ids []int64
	rows, err := e.pool.Query(e.ctx, `
INSERT INTO `+pgxIdent(e.schema)+`.river_job (args, kind, max_attempts, metadata, priority, queue, state, scheduled_at)
SELECT '{}', 'console_task', 3,
    jsonb_build_object('bpmn', jsonb_build_array(inst, 'order', 'charge', NULL, NULL, NULL, NULL, NULL, NULL, NULL,
        nullif('root-2', inst), parent)),
    1, 'default', 'scheduled', now() + interval '1 day'
FROM unnest(ARRAY['root-2', 'child-2b', 'grandchild-2a1', 'child-2a'], ARRAY[NULL, 'root-2', 'child-2a', 'root-2']) AS t (inst, parent)
RETURNING id`)
	require.NoError(t, err)
	for rows.Next() {
		var id int64
		require.NoError(t, rows.Scan(&id))
		ids = append(ids, id)
	}
	require.NoError(t, rows.Err())
	require.Len(t, ids, 4)
	require.NoError(t, e.engine.SetJobRetries(e.ctx, ids[2], 0)) // grandchild-2a1: an incident
	b := e.serve(nil)

	_, body := b.get("/instances/root-2")
	tree := body[strings.Index(body, `<table id="instance-tree">`):]
	tree = tree[:strings.Index(tree, "</table>")]
	order := regexp.MustCompile(`<td class="tree-depth-(\d)">(?:↳ )?(?:<strong>|<a href="/instances/[^"]+">)([a-z0-9-]+)<`).FindAllStringSubmatch(tree, -1)
	var got []string
	for _, m := range order {
		got = append(got, m[1]+":"+m[2])
	}
	require.Equal(t, []string{"0:root-2", "1:child-2a", "2:grandchild-2a1", "1:child-2b"}, got, "depth first, children by id")
	subtree := func(instance string) string {
		row := tree[strings.Index(tree, ">"+instance+"<"):]
		row = row[:strings.Index(row, "</tr>")]
		cells := regexp.MustCompile(`<td class="num">(?:<[^>]+>)?(\d+)`).FindAllStringSubmatch(row, -1)
		return cells[len(cells)-1][1]
	}
	require.Equal(t, "1", subtree("root-2"), "the grandchild's incident counts on the root")
	require.Equal(t, "1", subtree("child-2a"), "and on its parent")
	require.Equal(t, "0", subtree("child-2b"))

	_, body = b.get("/instances/grandchild-2a1")
	require.Contains(t, body, `Called by <a href="/instances/child-2a">child-2a</a>.`)
	require.Contains(t, body, `Called under root process instance <a href="/instances/root-2">root-2</a>.`)
}
