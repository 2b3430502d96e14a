package workflow

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/events"
	"github.com/riverbpmn/riverbpmn/internal/sqltemplate"
)

// eventsPackedMigrationVersion is the version of migration 017_events_packed
// (one outbox row per statement).
const eventsPackedMigrationVersion = 17

// packedSchema is a schema migrated up to version, with events enabled and n
// scheduled jobs with ids 1..n (far ahead, so no client takes them), the
// job context of job i naming instance "pi-<i%3>".
func packedSchema(ctx context.Context, t *testing.T, version, n int) (string, func(string) string) {
	t.Helper()
	pool := testPool(t)
	schema := emptySchema(t)
	_, err := MigrateUp(ctx, pool, &MigrateOpts{Schema: schema, TargetVersion: version})
	require.NoError(t, err)
	require.NoError(t, events.Enable(ctx, pool, schema))
	sql := func(s string) string { return fmt.Sprintf(s, pgx.Identifier{schema}.Sanitize()) }
	_, err = pool.Exec(ctx, sql(`INSERT INTO %s.river_job (id, args, kind, max_attempts, metadata, priority, queue, state, scheduled_at)
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
		batch, err := events.Read(ctx, testPool(t), schema, from, limit)
		require.NoError(t, err)
		if len(batch) == 0 {
			// An open transaction of a test running in parallel holds
			// delivery back (TestEventsCursorNeverSkips): wait it out.
			pending, err := events.Pending(ctx, testPool(t), schema, from)
			require.NoError(t, err)
			if !pending {
				return all
			}
			require.Less(t, time.Since(start), 30*time.Second, "events pending after %v for 30 s", from)
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

// TestEventsPackedRows: one UPDATE statement's events are one outbox row (at
// most 1,024 events a row, more make several rows); the reader unpacks them
// with ids row id + position, in cursor order, and a cursor in the middle of
// a row resumes inside it. Every event keeps its job id, kind, status, job
// context and process instance.
func TestEventsPackedRows(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testPool(t)
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
}

// TestEventsPackedMigration: migration 017 turns every existing event into a
// row of its own with the same (txid, id), so a cursor saved before it (a
// named subscription's) resumes where it was, missing and repeating
// nothing, through the events written after it; down again, every event
// gets a row with its id, and up again the same.
func TestEventsPackedMigration(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testPool(t)
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

	_, err = MigrateUp(ctx, pool, &MigrateOpts{Schema: schema})
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
	_, err = MigrateDown(ctx, pool, &MigrateOpts{Schema: schema, TargetVersion: eventsPackedMigrationVersion - 1})
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
	_, err = MigrateUp(ctx, pool, &MigrateOpts{Schema: schema})
	require.NoError(t, err)
	again := readAll(ctx, t, schema, events.Cursor{}, 1000)
	require.Len(t, again, 61)
	require.Equal(t, all, again[:60])
}

// TestEventsReadUnpacksOnlyWhatItNeeds: a read unpacks the outbox rows that
// hold its events and no more, whatever plan sorts them: reading 10 events
// from the middle of one statement of 20,000 events (20 rows in one
// transaction) unpacks at most 10 + 2,047 events (the row holding the cursor
// and the next), not the 10,000 after the cursor.
func TestEventsReadUnpacksOnlyWhatItNeeds(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testPool(t)
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

	readSQL, err := os.ReadFile("../events/sql/read.sql")
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
