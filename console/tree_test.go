package console_test

import (
	"testing"

	"github.com/stretchr/testify/require"
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

	_, body := b.get("/instance?id=root-1")
	require.Contains(t, body, "A root process instance.")
	require.Regexp(t, `<a href="/instance\?id=child-1a">child-1a</a></td>\s*<td class="num">0</td><td class="num">1</td>\s*<td class="num"><a class="stale" href="/incidents\?instance=child-1a">1</a></td>`, body)
	require.Contains(t, body, `<a href="/instance?id=child-1b">child-1b</a>`)

	_, body = b.get("/instance?id=child-1b")
	require.Contains(t, body, `Called under root process instance <a href="/instance?id=root-1">root-1</a>.`)
	require.Contains(t, body, "<strong>child-1b</strong> (this one)")
	require.Regexp(t, `href="/incidents\?instance=child-1a">1</a>`, body, "the sibling's incident shows too")
}
