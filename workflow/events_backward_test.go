package workflow

import (
	"context"
	"math"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/events"
	"github.com/riverbpmn/riverbpmn/internal/sqltemplate"
)

// readBackwardAll follows ReadBackward's pages from the newest event until
// the last, checking each page's order and size, and returns the events in
// the order read.
func readBackwardAll(ctx context.Context, t *testing.T, schema, instance string, limit int) (all []events.Event, pages int) {
	t.Helper()
	var before *events.Cursor
	for {
		page, err := events.ReadBackward(ctx, testPool(t), schema, before, instance, limit)
		require.NoError(t, err)
		pages++
		require.LessOrEqual(t, len(page.Events), limit)
		for _, ev := range page.Events {
			if before != nil {
				require.True(t, ev.Cursor.Less(*before), "event %v before cursor %v", ev.Cursor, *before)
			}
			c := ev.Cursor
			before = &c
		}
		all = append(all, page.Events...)
		if !page.More {
			require.Zero(t, page.Older)
			return all, pages
		}
		require.NotZero(t, page.Older)
		if len(page.Events) > 0 {
			require.False(t, page.Older.Less(page.Events[len(page.Events)-1].Cursor), "the next page starts at or after the page's last event")
		}
		older := page.Older
		before = &older
		require.Less(t, pages, 10_000, "paging does not end")
	}
}

// TestEventsReadBackward: pages read newest first, whatever their size
// (cursors falling inside outbox rows), hold every event once, in reverse
// cursor order, the same events Read returns; filtered by process
// instance, exactly the instance's events. An empty outbox is one empty
// last page.
func TestEventsReadBackward(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testPool(t)
	schema, sql := packedSchema(ctx, t, 0, 2500)

	page, err := events.ReadBackward(ctx, pool, schema, nil, "", 10)
	require.NoError(t, err)
	require.Equal(t, &events.Page{}, page)
	_, err = events.ReadBackward(ctx, pool, schema, nil, "", 0)
	require.ErrorContains(t, err, "limit 0 is out of range")

	_, err = pool.Exec(ctx, sql("UPDATE %s.river_job SET state = 'running', attempt = 1, attempted_at = now() WHERE id <= 100"))
	require.NoError(t, err)
	_, err = pool.Exec(ctx, sql("UPDATE %s.river_job SET state = 'running', attempt = 1, attempted_at = now() WHERE id > 100"))
	require.NoError(t, err)
	_, err = pool.Exec(ctx, sql("UPDATE %s.river_job SET state = 'completed', finalized_at = now() WHERE id <= 100"))
	require.NoError(t, err)

	forward := readAll(ctx, t, schema, events.Cursor{}, 5000)
	require.Len(t, forward, 2600)
	reversed := slices.Clone(forward)
	slices.Reverse(reversed)
	for _, limit := range []int{1, 7, 333, 1000} {
		if limit == 1 {
			// One page of one event is enough: the newest, and where to go on.
			page, err := events.ReadBackward(ctx, pool, schema, nil, "", 1)
			require.NoError(t, err)
			require.Equal(t, reversed[:1], page.Events)
			require.True(t, page.More)
			require.Equal(t, reversed[0].Cursor, page.Older)
			continue
		}
		all, pages := readBackwardAll(ctx, t, schema, "", limit)
		require.Equal(t, reversed, all, "limit %d", limit)
		require.Equal(t, (2600+limit-1)/limit, pages, "limit %d: full pages, no empty last one", limit)
	}

	var pi1 []events.Event
	for _, ev := range reversed {
		if ev.ProcessInstanceID == "pi-1" {
			pi1 = append(pi1, ev)
		}
	}
	require.Len(t, pi1, 834+34)
	all, _ := readBackwardAll(ctx, t, schema, "pi-1", 100)
	require.Equal(t, pi1, all)
	all, _ = readBackwardAll(ctx, t, schema, "no-such-instance", 100)
	require.Empty(t, all)
}

// TestEventsReadBackwardOfAnInstanceUsesItsIndex: a page of one process
// instance finds its events through the outbox's index by instance, however
// many events of other instances are newer (more than events.BackwardScan
// here), without unpacking theirs. A page of the newest 10 events unpacks
// the outbox rows that hold them and no more.
func TestEventsReadBackwardOfAnInstanceUsesItsIndex(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testPool(t)
	const n = events.BackwardScan + 2000
	schema, sql := packedSchema(ctx, t, 0, n)
	_, err := pool.Exec(ctx, sql(`UPDATE %s.river_job SET metadata = jsonb_set(metadata, '{bpmn,process_instance_id}', '"rare"') WHERE id <= 3`))
	require.NoError(t, err)
	// The rare instance's jobs: the first in a statement of their own, the
	// other two among 98 jobs of other instances.
	_, err = pool.Exec(ctx, sql("UPDATE %s.river_job SET state = 'running', attempt = 1, attempted_at = now() WHERE id = 1"))
	require.NoError(t, err)
	_, err = pool.Exec(ctx, sql("UPDATE %s.river_job SET state = 'running', attempt = 1, attempted_at = now() WHERE id > 1 AND id <= 100"))
	require.NoError(t, err)
	_, err = pool.Exec(ctx, sql("UPDATE %s.river_job SET state = 'running', attempt = 1, attempted_at = now() WHERE id > 100"))
	require.NoError(t, err)
	_, err = pool.Exec(ctx, sql("ANALYZE %s.river_bpmn_event"))
	require.NoError(t, err)

	start := time.Now()
	page, err := events.ReadBackward(ctx, pool, schema, nil, "rare", 2)
	t.Logf("a page of one instance behind %d newer events: %v", n-3, time.Since(start))
	require.NoError(t, err)
	require.Len(t, page.Events, 2)
	require.True(t, page.More)
	older := page.Older
	rest, err := events.ReadBackward(ctx, pool, schema, &older, "rare", 10)
	require.NoError(t, err)
	require.Len(t, rest.Events, 1)
	require.False(t, rest.More)
	for i, ev := range append(page.Events, rest.Events...) {
		require.Equal(t, "rare", ev.ProcessInstanceID)
		require.Equal(t, int64(3-i), ev.JobID)
		require.Equal(t, events.Running, ev.Status)
	}

	// The plan: the index, and only the rare instance's rows unpacked.
	instanceSQL, err := os.ReadFile("../events/sql/read_backward_instance.sql")
	require.NoError(t, err)
	var iplan []struct {
		Plan explainNode `json:"Plan"`
	}
	// A table this small is read whole (the planner's choice); a sequential
	// scan is ruled out to see that the index serves the statement.
	tx, err := pool.Begin(ctx)
	require.NoError(t, err)
	defer func() { _ = tx.Rollback(ctx) }()
	_, err = tx.Exec(ctx, "SET LOCAL enable_seqscan = off")
	require.NoError(t, err)
	require.NoError(t, tx.QueryRow(ctx, "EXPLAIN (ANALYZE, FORMAT JSON) "+sqltemplate.Render(string(instanceSQL), schema),
		"18446744073709551615", int64(math.MaxInt64), 11, "rare").Scan(&iplan))
	require.Positive(t, iplan[0].Plan.count("Bitmap Index Scan"), "the rows of an instance are found through its index")
	require.LessOrEqual(t, iplan[0].Plan.rowsOf("Function Scan"), float64(1+99), "events unpacked: the two rows holding the instance's")

	start = time.Now()
	newest, err := events.ReadBackward(ctx, pool, schema, nil, "", 10)
	t.Logf("the newest 10 events: %v", time.Since(start))
	require.NoError(t, err)
	require.Len(t, newest.Events, 10)
	require.True(t, newest.More)
	backwardSQL, err := os.ReadFile("../events/sql/read_backward.sql")
	require.NoError(t, err)
	var plan []struct {
		Plan explainNode `json:"Plan"`
	}
	require.NoError(t, pool.QueryRow(ctx, "EXPLAIN (ANALYZE, FORMAT JSON) "+sqltemplate.Render(string(backwardSQL), schema),
		strconv.FormatUint(newest.Events[9].Cursor.TxID, 10), newest.Events[9].Cursor.ID, 11, 11).Scan(&plan))
	unpacked := plan[0].Plan.rowsOf("Function Scan")
	require.Positive(t, unpacked)
	require.LessOrEqual(t, unpacked, float64(11+1023), "events unpacked to read 10 before a cursor")
	t.Logf("%.0f events unpacked to read 10", unpacked)
}

// count is the number of nodes of a type in the plan.
func (n explainNode) count(nodeType string) int {
	c := 0
	if n.NodeType == nodeType {
		c++
	}
	for _, p := range n.Plans {
		c += p.count(nodeType)
	}
	return c
}
