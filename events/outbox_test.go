package events_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river/riverdbtest"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/events"
	"github.com/riverbpmn/riverbpmn/internal/sqltemplate"
	"github.com/riverbpmn/riverbpmn/riverbpmntest"
	"github.com/riverbpmn/riverbpmn/workflow"
)

// eventsPackedMigrationVersion is the version of migration 017_events_packed
// (one outbox row per statement).
const eventsPackedMigrationVersion = 17

// packedSchema is a test schema with riverbpmn's line migrated up to version
// (0: all of it; another version gets a schema of its own, not reused), with
// events enabled (switched off again when the test ends) and n scheduled
// jobs with ids 1..n (far ahead, so no client takes them), the job context
// of job i naming instance "pi-<i%3>".
func packedSchema(ctx context.Context, t *testing.T, version, n int) (string, func(string) string) {
	t.Helper()
	pool := riverbpmntest.DBPool(t)
	opts := &riverdbtest.TestSchemaOpts{}
	if version != 0 {
		opts.DisableReuse = true
		opts.LineTargetVersions = map[string]int{workflow.MigrationLine: version}
	}
	schema := riverdbtest.TestSchema(ctx, t, riverbpmntest.Driver(t), opts)
	require.NoError(t, events.Enable(ctx, pool, schema))
	t.Cleanup(func() { require.NoError(t, events.Disable(context.Background(), pool, schema)) })
	sql := func(s string) string { return fmt.Sprintf(s, pgx.Identifier{schema}.Sanitize()) }
	_, err := pool.Exec(ctx, sql(`INSERT INTO %s.river_job (id, args, kind, max_attempts, metadata, priority, queue, state, scheduled_at)
		SELECT i, '{}', 'packed', 25, jsonb_build_object('bpmn', jsonb_build_object('process_instance_id', 'pi-' || (i %% 3),
			'process_definition_key', 'packed_process')), 1, 'default', 'scheduled', now() + interval '1 hour'
		FROM generate_series(1, $1::int) AS i`), n)
	require.NoError(t, err)
	return schema, sql
}

// readAll reads every event after from, limit at a time (so cursors fall in
// the middle of outbox rows), until none is pending.
func readAll(ctx context.Context, t *testing.T, schema string, from events.Cursor, limit int) []events.Event {
	t.Helper()
	var all []events.Event
	start := time.Now()
	for {
		batch, err := events.Read(ctx, riverbpmntest.DBPool(t), schema, from, limit)
		require.NoError(t, err)
		if len(batch) == 0 {
			// An open transaction of a test running in parallel holds
			// delivery back (TestEventsCursorNeverSkips): wait it out.
			pending, err := events.Pending(ctx, riverbpmntest.DBPool(t), schema, from)
			require.NoError(t, err)
			if !pending {
				return all
			}
			require.Less(t, time.Since(start), heldBackBound, "events pending after %v for %s", from, heldBackBound)
			time.Sleep(20 * time.Millisecond)
			continue
		}
		for _, ev := range batch {
			require.True(t, from.Less(ev.Cursor), "event %v after cursor %v", ev.Cursor, from)
			from = ev.Cursor
		}
		all = append(all, batch...)
	}
}

// readBackwardAll follows ReadBackward's pages from the newest event until
// the last, checking each page's order and size, and returns the events in
// the order read.
func readBackwardAll(ctx context.Context, t *testing.T, schema, instance string, limit int) (all []events.Event, pages int) {
	t.Helper()
	var before *events.Cursor
	for {
		page, err := events.ReadBackward(ctx, riverbpmntest.DBPool(t), schema, before, instance, limit)
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

// TestEventsOutbox tests the outbox's packed rows (one row per statement)
// and the reads over them, forward and backward, with their plans.
func TestEventsOutbox(t *testing.T) {
	t.Parallel()

	// PackedRows: one UPDATE statement's events are one outbox row (at
	// most 1,024 events a row, more make several rows); the reader unpacks them
	// with ids row id + position, in cursor order, and a cursor in the middle of
	// a row resumes inside it. Every event keeps its job id, kind, status, job
	// context and process instance.
	t.Run("PackedRows", func(t *testing.T) {
		t.Parallel()
		ctx := context.Background()
		pool := riverbpmntest.DBPool(t)
		schema, sql := packedSchema(ctx, t, 0, 2500)

		_, err := pool.Exec(ctx, sql("UPDATE %s.river_job SET state = 'running', attempt = 1, attempted_at = now() WHERE id <= 100"))
		require.NoError(t, err)
		_, err = pool.Exec(ctx, sql("UPDATE %s.river_job SET state = 'running', attempt = 1, attempted_at = now() WHERE id > 100"))
		require.NoError(t, err)
		// Progress-like updates that change no state record nothing.
		_, err = pool.Exec(ctx, sql(`UPDATE %s.river_job SET metadata = metadata || '{"bpmn_progress": 1}' WHERE id <= 10`))
		require.NoError(t, err)
		_, err = pool.Exec(ctx, sql("UPDATE %s.river_job SET state = 'completed', finalized_at = now() WHERE id <= 100"))
		require.NoError(t, err)

		var rows, packed int
		require.NoError(t, pool.QueryRow(ctx, sql("SELECT count(*), sum(cardinality(job_id)) FROM %s.river_bpmn_event")).Scan(&rows, &packed))
		require.Equal(t, 1+3+1, rows, "100 events, 2,400 events in rows of 1,024 at most, 100 events")
		require.Equal(t, 2600, packed)
		var longest int
		require.NoError(t, pool.QueryRow(ctx, sql("SELECT max(cardinality(job_id)) FROM %s.river_bpmn_event")).Scan(&longest))
		require.LessOrEqual(t, longest, 1024)

		for _, limit := range []int{1000, 333, 5000} {
			all := readAll(ctx, t, schema, events.Cursor{}, limit)
			require.Len(t, all, 2600, "limit %d", limit)
			seen := map[int64]bool{}
			running := map[int64]bool{}
			for i, ev := range all {
				require.False(t, seen[ev.ID], "event id %d once", ev.ID)
				seen[ev.ID] = true
				require.Equal(t, "packed", ev.Kind)
				require.Equal(t, "default", ev.Queue)
				require.Equal(t, fmt.Sprintf("pi-%d", ev.JobID%3), ev.ProcessInstanceID)
				require.JSONEq(t, fmt.Sprintf(`{"process_instance_id": "pi-%d", "process_definition_key": "packed_process", "exclusive": false}`, ev.JobID%3), string(ev.JobContext))
				require.NotZero(t, ev.At)
				switch {
				case i < 2500:
					require.Equal(t, events.Running, ev.Status, "event %d", i)
					require.False(t, running[ev.JobID])
					running[ev.JobID] = true
				default:
					require.Equal(t, events.Succeeded, ev.Status, "event %d", i)
					require.True(t, running[ev.JobID])
					require.LessOrEqual(t, ev.JobID, int64(100))
				}
			}
			require.Len(t, running, 2500)
		}

		// The last cursor is the last event's; nothing is pending after it.
		all := readAll(ctx, t, schema, events.Cursor{}, 1000)
		last, ok, err := events.Last(ctx, pool, schema)
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, all[len(all)-1].Cursor, last)
		pending, err := events.Pending(ctx, pool, schema, all[len(all)-2].Cursor)
		require.NoError(t, err)
		require.True(t, pending, "the last event is after the one before it")
		pending, err = events.Pending(ctx, pool, schema, last)
		require.NoError(t, err)
		require.False(t, pending)

		// --instance: a subscriber of one instance gets exactly its events.
		var mine []events.Event
		subCtx, stop := context.WithCancel(ctx)
		defer stop()
		done := make(chan error, 1)
		go func() {
			done <- events.Subscribe(subCtx, pool, &events.SubscribeConfig{Schema: schema, From: &events.Cursor{}, ProcessInstanceID: "pi-1", BatchSize: 700},
				func(_ context.Context, batch []events.Event) error {
					mine = append(mine, batch...)
					if len(mine) >= 834+34 {
						stop()
					}
					return nil
				})
		}()
		require.ErrorIs(t, <-done, context.Canceled)
		require.Len(t, mine, 834+34, "2,500 jobs: 834 of pi-1 ran, 34 of them completed")
		for _, ev := range mine {
			require.Equal(t, "pi-1", ev.ProcessInstanceID)
		}

		// Pruning deletes whole rows and counts their events.
		n, err := events.Prune(ctx, pool, schema, all[len(all)-1].CreatedAt.Add(time.Millisecond), 2)
		require.NoError(t, err)
		require.Equal(t, int64(2600), n)
	})

	// PackedMigration: migration 017 turns every existing event into a
	// row of its own with the same (txid, id), so a cursor saved before it (a
	// named subscription's) resumes where it was, missing and repeating
	// nothing, through the events written after it; down again, every event
	// gets a row with its id, and up again the same.
	t.Run("PackedMigration", func(t *testing.T) {
		t.Parallel()
		ctx := context.Background()
		pool := riverbpmntest.DBPool(t)
		schema, sql := packedSchema(ctx, t, eventsPackedMigrationVersion-1, 30)

		// Before: one row per event.
		_, err := pool.Exec(ctx, sql("UPDATE %s.river_job SET state = 'running', attempt = 1, attempted_at = now() WHERE id <= 10"))
		require.NoError(t, err)
		_, err = pool.Exec(ctx, sql("UPDATE %s.river_job SET state = 'completed', finalized_at = now() WHERE id <= 10"))
		require.NoError(t, err)
		type old struct {
			TxID string
			ID   int64
			Job  int64
		}
		rows, err := pool.Query(ctx, sql("SELECT txid::text, id, job_id FROM %s.river_bpmn_event ORDER BY txid, id"))
		require.NoError(t, err)
		before, err := pgx.CollectRows(rows, pgx.RowToStructByPos[old])
		require.NoError(t, err)
		require.Len(t, before, 20)
		// A named subscription stopped in the middle of the first statement.
		_, err = pool.Exec(ctx, sql("INSERT INTO %s.river_bpmn_event_subscription (name, txid, id) VALUES ('audit', $1::text::xid8, $2)"),
			before[4].TxID, before[4].ID)
		require.NoError(t, err)

		_, err = workflow.MigrateUp(ctx, pool, &workflow.MigrateOpts{Schema: schema})
		require.NoError(t, err)
		var rowCount int
		require.NoError(t, pool.QueryRow(ctx, sql("SELECT count(*) FROM %s.river_bpmn_event WHERE cardinality(job_id) = 1")).Scan(&rowCount))
		require.Equal(t, 20, rowCount, "every old event is a row of one event")

		// After: packed rows, in later transactions, with larger ids.
		_, err = pool.Exec(ctx, sql("UPDATE %s.river_job SET state = 'running', attempt = 1, attempted_at = now() WHERE id > 10"))
		require.NoError(t, err)
		_, err = pool.Exec(ctx, sql("UPDATE %s.river_job SET state = 'completed', finalized_at = now() WHERE id > 10"))
		require.NoError(t, err)

		all := readAll(ctx, t, schema, events.Cursor{}, 7)
		require.Len(t, all, 60)
		for i, o := range before {
			require.Equal(t, o.ID, all[i].ID, "old event %d keeps its id", i)
			require.Equal(t, o.TxID, fmt.Sprint(all[i].Cursor.TxID))
			require.Equal(t, o.Job, all[i].JobID)
			require.Equal(t, fmt.Sprintf("pi-%d", o.Job%3), all[i].ProcessInstanceID)
		}
		for _, ev := range all[20:] {
			require.Greater(t, ev.ID, before[19].ID)
			require.Greater(t, ev.JobID, int64(10))
		}

		// The subscription saved before the migration resumes after event 5.
		var got []events.Event
		subCtx, stop := context.WithCancel(ctx)
		defer stop()
		done := make(chan error, 1)
		go func() {
			done <- events.Subscribe(subCtx, pool, &events.SubscribeConfig{Schema: schema, Name: "audit", BatchSize: 4},
				func(_ context.Context, batch []events.Event) error {
					got = append(got, batch...)
					if len(got) >= 55 {
						stop()
					}
					return nil
				})
		}()
		require.ErrorIs(t, <-done, context.Canceled)
		require.Equal(t, all[5:], got)

		// Down: one row per event, each with its id.
		wantIDs := make([]int64, len(all))
		for i, ev := range all {
			wantIDs[i] = ev.ID
		}
		_, err = workflow.MigrateDown(ctx, pool, &workflow.MigrateOpts{Schema: schema, TargetVersion: eventsPackedMigrationVersion - 1})
		require.NoError(t, err)
		rows, err = pool.Query(ctx, sql("SELECT txid::text, id, job_id FROM %s.river_bpmn_event ORDER BY txid, id"))
		require.NoError(t, err)
		down, err := pgx.CollectRows(rows, pgx.RowToStructByPos[old])
		require.NoError(t, err)
		require.Len(t, down, 60)
		for i, o := range down {
			require.Equal(t, wantIDs[i], o.ID)
			require.Equal(t, all[i].JobID, o.Job)
		}
		var pi string
		require.NoError(t, pool.QueryRow(ctx, sql("SELECT process_instance_id FROM %s.river_bpmn_event WHERE job_id = 11 LIMIT 1")).Scan(&pi))
		require.Equal(t, "pi-2", pi)
		// The old trigger records again, above every id.
		_, err = pool.Exec(ctx, sql("UPDATE %s.river_job SET state = 'available', finalized_at = NULL WHERE id = 1"))
		require.NoError(t, err)
		_, err = pool.Exec(ctx, sql("UPDATE %s.river_job SET state = 'running' WHERE id = 1"))
		require.NoError(t, err)
		var newest int64
		require.NoError(t, pool.QueryRow(ctx, sql("SELECT max(id) FROM %s.river_bpmn_event")).Scan(&newest))
		require.Greater(t, newest, wantIDs[len(wantIDs)-1])

		// Up again.
		_, err = workflow.MigrateUp(ctx, pool, &workflow.MigrateOpts{Schema: schema})
		require.NoError(t, err)
		again := readAll(ctx, t, schema, events.Cursor{}, 1000)
		require.Len(t, again, 61)
		require.Equal(t, all, again[:60])
	})

	// ReadUnpacksOnlyWhatItNeeds: a read unpacks the outbox rows that
	// hold its events and no more, whatever plan sorts them: reading 10 events
	// from the middle of one statement of 20,000 events (20 rows in one
	// transaction) unpacks at most 10 + 2,047 events (the row holding the cursor
	// and the next), not the 10,000 after the cursor.
	t.Run("ReadUnpacksOnlyWhatItNeeds", func(t *testing.T) {
		t.Parallel()
		ctx := context.Background()
		pool := riverbpmntest.DBPool(t)
		schema, sql := packedSchema(ctx, t, 0, 20000)
		_, err := pool.Exec(ctx, sql("UPDATE %s.river_job SET state = 'running', attempt = 1, attempted_at = now()"))
		require.NoError(t, err)
		_, err = pool.Exec(ctx, sql("ANALYZE %s.river_bpmn_event"))
		require.NoError(t, err)

		all := readAll(ctx, t, schema, events.Cursor{}, 5000)
		require.Len(t, all, 20000)
		from := all[9999].Cursor
		batch, err := events.Read(ctx, pool, schema, from, 10)
		require.NoError(t, err)
		require.Equal(t, all[10000:10010], batch)

		readSQL, err := os.ReadFile("sql/read.sql")
		require.NoError(t, err)
		var plan []struct {
			Plan explainNode `json:"Plan"`
		}
		require.NoError(t, pool.QueryRow(ctx, "EXPLAIN (ANALYZE, FORMAT JSON) "+sqltemplate.Render(string(readSQL), schema),
			strconv.FormatUint(from.TxID, 10), from.ID, 10).Scan(&plan))
		unpacked := plan[0].Plan.rowsOf("Function Scan")
		require.Positive(t, unpacked)
		require.LessOrEqual(t, unpacked, float64(10+2047), "events unpacked to read 10")
		t.Logf("%.0f events unpacked to read 10", unpacked)
	})

	// ReadBackward: pages read newest first, whatever their size
	// (cursors falling inside outbox rows), hold every event once, in reverse
	// cursor order, the same events Read returns; filtered by process
	// instance, exactly the instance's events. An empty outbox is one empty
	// last page.
	t.Run("ReadBackward", func(t *testing.T) {
		t.Parallel()
		ctx := context.Background()
		pool := riverbpmntest.DBPool(t)
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
	})

	// ReadBackwardOfAnInstanceUsesItsIndex: a page of one process
	// instance finds its events through the outbox's index by instance, however
	// many events of other instances are newer (more than events.BackwardScan
	// here), without unpacking theirs. A page of the newest 10 events unpacks
	// the outbox rows that hold them and no more.
	t.Run("ReadBackwardOfAnInstanceUsesItsIndex", func(t *testing.T) {
		t.Parallel()
		ctx := context.Background()
		pool := riverbpmntest.DBPool(t)
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
		instanceSQL, err := os.ReadFile("sql/read_backward_instance.sql")
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
		backwardSQL, err := os.ReadFile("sql/read_backward.sql")
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
	})
}

// explainNode is a node of EXPLAIN (ANALYZE, FORMAT JSON).
type explainNode struct {
	NodeType   string        `json:"Node Type"`
	ActualRows float64       `json:"Actual Rows"`
	Loops      float64       `json:"Actual Loops"`
	Plans      []explainNode `json:"Plans"`
}

// rowsOf sums the rows produced by the nodes of a type, over their loops.
func (n explainNode) rowsOf(nodeType string) float64 {
	var rows float64
	if n.NodeType == nodeType {
		rows += n.ActualRows * n.Loops
	}
	for _, c := range n.Plans {
		rows += c.rowsOf(nodeType)
	}
	return rows
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

// heldBackBound is how long a test waits for events that an open
// transaction holds back. Delivery follows the oldest open transaction of
// the whole database (a subscriber never skips an event that a transaction
// still running may commit), and the long suites of other packages run
// beside this one on the same database with transactions of tens of
// seconds under load (a million-row insert); that is not a delay of the
// events mechanism, so the bound is minutes, not the poll interval.
const heldBackBound = 3 * time.Minute
