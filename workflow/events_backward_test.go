package workflow

import (
	"context"
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

// TestEventsReadBackwardLooksNoFurtherThanItMay: a page of one process
// instance looks at events.BackwardScan events at most; its instance's
// events further back come on the pages that follow. A page of the newest
// 10 events unpacks the outbox rows that hold them and no more.
func TestEventsReadBackwardLooksNoFurtherThanItMay(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testPool(t)
	const n = events.BackwardScan + 2000
	schema, sql := packedSchema(ctx, t, 0, n)
	_, err := pool.Exec(ctx, sql(`UPDATE %s.river_job SET metadata = jsonb_set(metadata, '{bpmn,process_instance_id}', '"rare"') WHERE id <= 3`))
	require.NoError(t, err)
	_, err = pool.Exec(ctx, sql("UPDATE %s.river_job SET state = 'running', attempt = 1, attempted_at = now() WHERE id <= 3"))
	require.NoError(t, err)
	_, err = pool.Exec(ctx, sql("UPDATE %s.river_job SET state = 'running', attempt = 1, attempted_at = now() WHERE id > 3"))
	require.NoError(t, err)
	_, err = pool.Exec(ctx, sql("ANALYZE %s.river_bpmn_event"))
	require.NoError(t, err)

	start := time.Now()
	page, err := events.ReadBackward(ctx, pool, schema, nil, "rare", 10)
	t.Logf("a filtered page looking at %d events: %v", events.BackwardScan, time.Since(start))
	require.NoError(t, err)
	require.Empty(t, page.Events, "the rare events are more than BackwardScan events back")
	require.True(t, page.More)
	older := page.Older
	page, err = events.ReadBackward(ctx, pool, schema, &older, "rare", 10)
	require.NoError(t, err)
	require.Len(t, page.Events, 3)
	require.False(t, page.More)
	for i, ev := range page.Events {
		require.Equal(t, "rare", ev.ProcessInstanceID)
		require.Equal(t, int64(3-i), ev.JobID)
	}

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
		strconv.FormatUint(newest.Events[9].Cursor.TxID, 10), newest.Events[9].Cursor.ID, 11, nil, 11).Scan(&plan))
	unpacked := plan[0].Plan.rowsOf("Function Scan")
	require.Positive(t, unpacked)
	require.LessOrEqual(t, unpacked, float64(11+1023), "events unpacked to read 10 before a cursor")
	t.Logf("%.0f events unpacked to read 10", unpacked)
}
