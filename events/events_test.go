package events_test

import (
	"context"
	"errors"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdbtest"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/events"
	"github.com/riverbpmn/riverbpmn/internal/controltest"
	"github.com/riverbpmn/riverbpmn/internal/sqltemplate"
	"github.com/riverbpmn/riverbpmn/riverbpmntest"
	"github.com/riverbpmn/riverbpmn/workflow"
)

// testBundle is what setup gives a test of the events handle: an engine
// and a client of control jobs (package controltest) on a test schema.
type testBundle struct {
	*riverbpmntest.Bundle

	// sql renders a statement's schema template for the test schema.
	sql func(string) string
}

// setup returns an engine configured by config (nil: the zero
// configuration) and a client of control jobs, not started, on a fresh test
// schema, and switches events off in the schema when the test ends
// (riverdbtest reuses schemas: it leaves none with events on).
func setup(t *testing.T, config *workflow.Config) *testBundle {
	t.Helper()
	ctx := context.Background()
	schema := riverdbtest.TestSchema(ctx, t, riverbpmntest.Driver(t), nil)
	b := riverbpmntest.New(ctx, t, schema, &riverbpmntest.Opts{Config: config, ClientConfig: controltest.ClientConfig(controltest.NewWorker())})
	t.Cleanup(func() { require.NoError(t, b.Engine.Events().Disable(context.Background())) })
	return &testBundle{Bundle: b, sql: func(s string) string { return sqltemplate.Render(s, schema) }}
}

// setNotifiedSlot sets the trigger's last notification slot (migration
// riverbpmn/013): 0 lets the next statement notify, a far-future slot keeps
// every statement from notifying.
func setNotifiedSlot(ctx context.Context, t *testing.T, b *testBundle, slot int64) {
	t.Helper()
	_, err := b.DBPool.Exec(ctx, b.sql("SELECT setval('/* TEMPLATE: schema */river_bpmn_event_notified', $1)"), slot)
	require.NoError(t, err)
}

const farFutureSlot = int64(1) << 50

// scheduledControlJobs inserts n control jobs scheduled an hour ahead, so no
// client takes them; the tests move them with plain updates.
func scheduledControlJobs(ctx context.Context, t *testing.T, b *testBundle, n int) []int64 {
	t.Helper()
	ids := make([]int64, n)
	for i := range ids {
		res, err := b.Client.Insert(ctx, controltest.Args{}, &river.InsertOpts{ScheduledAt: time.Now().Add(time.Hour)})
		require.NoError(t, err)
		ids[i] = res.Job.ID
	}
	return ids
}

// dbSlot is the 50 ms slot the trigger would compute now (migration
// riverbpmn/013), from the database's clock.
func dbSlot(ctx context.Context, t *testing.T, b *testBundle) int64 {
	t.Helper()
	var slot int64
	require.NoError(t, b.DBPool.QueryRow(ctx, "SELECT (extract(epoch FROM clock_timestamp()) * 20)::bigint").Scan(&slot))
	return slot
}

// TestEvents tests the events handle (workflow.Engine.Events) and what
// clients with events on record and deliver.
func TestEvents(t *testing.T) {
	t.Parallel()

	// StatusEvents: runs jobs to every outcome with events enabled and
	// checks the events a subscriber of the engine receives, per job, in order.
	t.Run("StatusEvents", func(t *testing.T) {
		ctx := context.Background()
		bundle := setup(t, &workflow.Config{Events: &events.Config{}})
		engine := bundle.Engine
		// riverdbtest reuses schemas: leave none with events on.
		on, err := engine.Events().Enabled(ctx)
		require.NoError(t, err)
		require.False(t, on, "off until a client starts or EnableEvents")

		client := bundle.Client

		var (
			mu       sync.Mutex
			received []events.Event
		)
		subCtx, stopSub := context.WithCancel(ctx)
		subDone := make(chan error, 1)
		go func() {
			subDone <- engine.Events().Subscribe(subCtx, &events.SubscribeConfig{From: &events.Cursor{}, PollInterval: 50 * time.Millisecond},
				func(_ context.Context, batch []events.Event) error {
					mu.Lock()
					defer mu.Unlock()
					received = append(received, batch...)
					return nil
				})
		}()

		require.NoError(t, client.Start(ctx))
		on, err = engine.Events().Enabled(ctx)
		require.NoError(t, err)
		require.True(t, on, "a client of an engine with Config.Events enables them")

		succeed, err := client.Insert(ctx, controltest.Args{Instance: "pi-ev"}, nil)
		require.NoError(t, err)
		retried, err := client.Insert(ctx, controltest.Args{FailOnce: true}, nil)
		require.NoError(t, err)
		discarded, err := client.Insert(ctx, controltest.Args{Instance: "pi-ev", Fail: true, Once: true}, nil)
		require.NoError(t, err)
		cancelled, err := client.Insert(ctx, controltest.Args{CancelItself: true}, nil)
		require.NoError(t, err)
		aborted, err := client.Insert(ctx, controltest.Args{Block: true}, nil)
		require.NoError(t, err)
		controltest.WaitJobState(ctx, t, engine.Jobs().Status, aborted.Job.ID, rivertype.JobStateRunning)
		_, err = engine.Jobs().Stop(ctx, aborted.Job.ID)
		require.NoError(t, err)
		for _, id := range []int64{succeed.Job.ID, retried.Job.ID} {
			controltest.WaitJobState(ctx, t, engine.Jobs().Status, id, rivertype.JobStateCompleted)
		}
		controltest.WaitJobState(ctx, t, engine.Jobs().Status, discarded.Job.ID, rivertype.JobStateDiscarded)
		controltest.WaitJobState(ctx, t, engine.Jobs().Status, cancelled.Job.ID, rivertype.JobStateCancelled)
		controltest.WaitJobState(ctx, t, engine.Jobs().Status, aborted.Job.ID, rivertype.JobStateCancelled)

		type step struct {
			Status      events.Status
			RetriesLeft *bool
			Error       string
		}
		yes, no := true, false
		want := map[int64][]step{
			succeed.Job.ID:   {{Status: events.Running}, {Status: events.Succeeded}},
			retried.Job.ID:   {{Status: events.Running}, {Status: events.Failed, RetriesLeft: &yes, Error: "control failure"}, {Status: events.Running}, {Status: events.Succeeded}},
			discarded.Job.ID: {{Status: events.Running}, {Status: events.Failed, RetriesLeft: &no, Error: "control failure"}, {Status: events.Incident, Error: "control failure"}},
			cancelled.Job.ID: {{Status: events.Running}, {Status: events.Failed, RetriesLeft: &no, Error: "JobCancelError: giving up"}},
			aborted.Job.ID:   {{Status: events.Running}, {Status: events.Aborted}},
		}
		var got map[int64][]step
		require.Eventually(t, func() bool {
			mu.Lock()
			defer mu.Unlock()
			got = map[int64][]step{}
			for _, ev := range received {
				got[ev.JobID] = append(got[ev.JobID], step{Status: ev.Status, RetriesLeft: ev.RetriesLeft, Error: ev.Error})
			}
			return len(received) >= 13
		}, heldBackBound, 10*time.Millisecond)
		require.Equal(t, want, got)

		mu.Lock()
		for i, ev := range received {
			require.NotZero(t, ev.At)
			require.Equal(t, "control_test", ev.Kind)
			if ev.JobID == succeed.Job.ID || ev.JobID == discarded.Job.ID {
				require.Equal(t, "pi-ev", ev.ProcessInstanceID)
				require.Contains(t, string(ev.JobContext), `"process_instance_id": "pi-ev"`)
			}
			if i > 0 {
				prev := received[i-1].Cursor
				require.True(t, prev.TxID < ev.Cursor.TxID || (prev.TxID == ev.Cursor.TxID && prev.ID < ev.Cursor.ID), "cursor order")
			}
		}
		mu.Unlock()
		stopSub()
		require.ErrorIs(t, <-subDone, context.Canceled)

		// Off: the trigger is gone, so nothing is recorded (and nothing paid).
		require.NoError(t, engine.Events().Disable(ctx))
		var before, after int
		require.NoError(t, bundle.DBPool.QueryRow(ctx, bundle.sql("SELECT coalesce(sum(cardinality(job_id)), 0) FROM /* TEMPLATE: schema */river_bpmn_event")).Scan(&before))
		quiet, err := client.Insert(ctx, controltest.Args{}, nil)
		require.NoError(t, err)
		controltest.WaitJobState(ctx, t, engine.Jobs().Status, quiet.Job.ID, rivertype.JobStateCompleted)
		require.NoError(t, bundle.DBPool.QueryRow(ctx, bundle.sql("SELECT coalesce(sum(cardinality(job_id)), 0) FROM /* TEMPLATE: schema */river_bpmn_event")).Scan(&after))
		require.Equal(t, before, after)

		// Pruning by age deletes in cursor order.
		n, err := engine.Events().Prune(ctx, time.Now().Add(time.Hour))
		require.NoError(t, err)
		require.Equal(t, int64(after), n)
	})

	// CursorNeverSkips: a transaction that wrote an event with a lower
	// id but commits after a later one is still delivered: the reader holds back
	// until every older transaction has ended.
	t.Run("CursorNeverSkips", func(t *testing.T) {
		ctx := context.Background()
		bundle := setup(t, nil)
		engine, schema := bundle.Engine, bundle.Schema
		require.NoError(t, engine.Events().Enable(ctx))
		client := bundle.Client
		a, err := client.Insert(ctx, controltest.Args{}, nil)
		require.NoError(t, err)
		b, err := client.Insert(ctx, controltest.Args{}, nil)
		require.NoError(t, err)

		start, err := engine.Events().Now(ctx)
		require.NoError(t, err)
		setRunning := bundle.sql("UPDATE /* TEMPLATE: schema */river_job SET state = 'running', attempt = 1, attempted_at = now() WHERE id = $1")
		slow, err := bundle.DBPool.Begin(ctx)
		require.NoError(t, err)
		defer slow.Rollback(ctx)                      //nolint:errcheck
		_, err = slow.Exec(ctx, setRunning, a.Job.ID) // writes its event first
		require.NoError(t, err)
		_, err = bundle.DBPool.Exec(ctx, setRunning, b.Job.ID) // commits first
		require.NoError(t, err)

		batch, err := engine.Events().Read(ctx, start, 100)
		require.NoError(t, err)
		require.Empty(t, batch, "b's event waits for the older transaction")
		pending, err := events.Pending(ctx, bundle.DBPool, schema, start)
		require.NoError(t, err)
		require.True(t, pending)

		require.NoError(t, slow.Commit(ctx))
		// Both arrive once no older transaction is open. Other tests of this
		// package run in parallel in the same database, and an older
		// transaction of theirs holds delivery back too (by design: the reader
		// cannot tell whose it is), so the read is repeated for a while.
		ids := []int64{}
		require.Eventually(t, func() bool {
			batch, err = engine.Events().Read(ctx, start, 100)
			require.NoError(t, err)
			ids = ids[:0]
			for _, ev := range batch {
				ids = append(ids, ev.JobID)
			}
			return len(ids) >= 2
		}, time.Minute, 50*time.Millisecond, "both events are delivered (other tests' open transactions may hold them back for a while)")
		sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
		require.Equal(t, []int64{a.Job.ID, b.Job.ID}, ids)
	})

	// PrunedByLeader: with Config.Events, the elected leader deletes
	// events older than the retention, so the outbox stays bounded.
	t.Run("PrunedByLeader", func(t *testing.T) {
		ctx := context.Background()
		bundle := setup(t, &workflow.Config{Events: &events.Config{Retention: time.Millisecond, PruneInterval: 20 * time.Millisecond}})
		engine, schema := bundle.Engine, bundle.Schema
		client := bundle.Client
		require.NoError(t, client.Start(ctx))

		res, err := client.Insert(ctx, controltest.Args{}, nil)
		require.NoError(t, err)
		controltest.WaitJobState(ctx, t, engine.Jobs().Status, res.Job.ID, rivertype.JobStateCompleted)

		var written int64
		require.NoError(t, bundle.DBPool.QueryRow(ctx, "SELECT last_value FROM "+
			pgx.Identifier{schema, "river_bpmn_event_id_seq"}.Sanitize()).Scan(&written))
		require.GreaterOrEqual(t, written, int64(2), "RUNNING and SUCCEEDED were recorded")
		require.Eventually(t, func() bool {
			var left int
			require.NoError(t, bundle.DBPool.QueryRow(ctx, bundle.sql("SELECT coalesce(sum(cardinality(job_id)), 0) FROM /* TEMPLATE: schema */river_bpmn_event")).Scan(&left))
			return left == 0
		}, 30*time.Second, 20*time.Millisecond, "the leader prunes them")
	})

	// NotHeldBackByOtherDatabases: a transaction running in another
	// database of the server cannot write events here, so it does not hold
	// delivery back (one in this database does: TestEventsCursorNeverSkips).
	t.Run("NotHeldBackByOtherDatabases", func(t *testing.T) {
		ctx := context.Background()
		bundle := setup(t, nil)
		engine := bundle.Engine
		require.NoError(t, engine.Events().Enable(ctx))

		config := bundle.DBPool.Config().ConnConfig.Copy()
		config.Database = "postgres"
		other, err := pgx.ConnectConfig(ctx, config)
		require.NoError(t, err)
		defer other.Close(ctx)
		otherTx, err := other.Begin(ctx)
		require.NoError(t, err)
		defer otherTx.Rollback(ctx)                               //nolint:errcheck
		_, err = otherTx.Exec(ctx, "SELECT pg_current_xact_id()") // takes an xid, stays open
		require.NoError(t, err)

		start, err := engine.Events().Now(ctx)
		require.NoError(t, err)
		client := bundle.Client
		res, err := client.Insert(ctx, controltest.Args{}, &river.InsertOpts{ScheduledAt: time.Now().Add(time.Hour)})
		require.NoError(t, err)
		_, err = engine.Jobs().Stop(ctx, res.Job.ID)
		require.NoError(t, err)

		// Transactions of other tests in this database (other schemas) hold
		// delivery back while they run, so the event may need a few reads; the
		// other database's transaction stays open until the end, so if it held
		// delivery back the event would never come.
		var batch []events.Event
		require.Eventually(t, func() bool {
			batch, err = engine.Events().Read(ctx, start, 10)
			require.NoError(t, err)
			return len(batch) > 0
		}, time.Minute, 10*time.Millisecond, "the other database's open transaction does not hold the event back")
		require.Len(t, batch, 1)
		require.Equal(t, events.Aborted, batch[0].Status)
	})

	// NotifyOncePerSlot: a statement that records events notifies only
	// when no statement of the schema has notified in the current 50 ms slot, so
	// River's commits do not queue behind NOTIFY's database-wide lock. The
	// events are recorded either way.
	t.Run("NotifyOncePerSlot", func(t *testing.T) {
		ctx := context.Background()
		bundle := setup(t, nil)
		engine, schema := bundle.Engine, bundle.Schema
		require.NoError(t, engine.Events().Enable(ctx))
		ids := scheduledControlJobs(ctx, t, bundle, 2)

		// A fresh listening connection per phase (a wait that times out may
		// leave its connection unusable).
		listen := func() *pgx.Conn {
			conn, err := bundle.DBPool.Acquire(ctx)
			require.NoError(t, err)
			listener := conn.Hijack()
			t.Cleanup(func() { listener.Close(context.Background()) })
			_, err = listener.Exec(ctx, "LISTEN "+pgx.Identifier{schema + ".river_bpmn_event"}.Sanitize())
			require.NoError(t, err)
			return listener
		}
		setRunning := bundle.sql("UPDATE /* TEMPLATE: schema */river_job SET state = 'running', attempt = 1, attempted_at = now() WHERE id = $1")

		// Slot already taken: the event is written, no notification is sent.
		setNotifiedSlot(ctx, t, bundle, farFutureSlot)
		listener := listen()
		_, err := bundle.DBPool.Exec(ctx, setRunning, ids[0])
		require.NoError(t, err)
		waitCtx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
		_, err = listener.WaitForNotification(waitCtx)
		cancel()
		require.Error(t, err, "no notification within the taken slot")
		require.ErrorIs(t, waitCtx.Err(), context.DeadlineExceeded, "the wait timed out: %v", err)

		// A new slot: the statement notifies, and takes the slot.
		setNotifiedSlot(ctx, t, bundle, 0)
		listener = listen()
		slotBefore := dbSlot(ctx, t, bundle)
		_, err = bundle.DBPool.Exec(ctx, setRunning, ids[1])
		require.NoError(t, err)
		slotAfter := dbSlot(ctx, t, bundle)
		waitCtx, cancel = context.WithTimeout(ctx, 10*time.Second)
		n, err := listener.WaitForNotification(waitCtx)
		cancel()
		require.NoError(t, err)
		require.Equal(t, schema+".river_bpmn_event", n.Channel)
		var slot int64
		require.NoError(t, bundle.DBPool.QueryRow(ctx, bundle.sql("SELECT last_value FROM /* TEMPLATE: schema */river_bpmn_event_notified")).Scan(&slot))
		// Both ends are read from the database's clock, which the trigger reads
		// too: the slot is the one the statement ran in, however long it took.
		require.GreaterOrEqual(t, slot, slotBefore, "the slot is the statement's 50 ms")
		require.LessOrEqual(t, slot, slotAfter, "the slot is the statement's 50 ms")

		// Both events are in the outbox. Not read with ReadEvents: a read stops
		// below the oldest transaction still running in the database
		// (events.Read), and in the full suite other tests' transactions run in
		// this database, so a read right after the statements may return fewer.
		var recorded []int64
		require.NoError(t, bundle.DBPool.QueryRow(ctx, bundle.sql(`SELECT coalesce(array_agg(u.job_id ORDER BY e.txid, e.id, u.ord), '{}')
			FROM /* TEMPLATE: schema */river_bpmn_event e
			CROSS JOIN LATERAL unnest(e.job_id) WITH ORDINALITY AS u (job_id, ord)`)).Scan(&recorded))
		require.Equal(t, ids, recorded, "both statements recorded their event")
	})

	// ArriveWithoutNotification: the events of a statement that sent no
	// notification (another took the slot) reach a subscriber without waiting
	// for its poll interval (here an hour): a subscriber reads again shortly
	// after every batch it got.
	t.Run("ArriveWithoutNotification", func(t *testing.T) {
		ctx := context.Background()
		bundle := setup(t, nil)
		engine := bundle.Engine
		require.NoError(t, engine.Events().Enable(ctx))
		ids := scheduledControlJobs(ctx, t, bundle, 2)
		setRunning := bundle.sql("UPDATE /* TEMPLATE: schema */river_job SET state = 'running', attempt = 1, attempted_at = now() WHERE id = $1")

		start, err := engine.Events().Now(ctx)
		require.NoError(t, err)
		var (
			mu       sync.Mutex
			received []int64
			quietErr error
			once     sync.Once
		)
		subCtx, stopSub := context.WithCancel(ctx)
		subDone := make(chan error, 1)
		go func() {
			subDone <- engine.Events().Subscribe(subCtx, &events.SubscribeConfig{From: &start, PollInterval: time.Hour},
				func(ctx context.Context, batch []events.Event) error {
					mu.Lock()
					for _, ev := range batch {
						received = append(received, ev.JobID)
					}
					mu.Unlock()
					// While the first batch is handled, a statement commits that
					// sends no notification.
					once.Do(func() {
						if _, err := bundle.DBPool.Exec(ctx, bundle.sql("SELECT setval('/* TEMPLATE: schema */river_bpmn_event_notified', $1)"), farFutureSlot); err != nil {
							quietErr = err
							return
						}
						_, quietErr = bundle.DBPool.Exec(ctx, setRunning, ids[1])
					})
					return nil
				})
		}()

		// Let the subscriber settle (LISTEN, its first read finding nothing), so
		// that the one notification below is the only wake-up it has.
		time.Sleep(500 * time.Millisecond)
		mu.Lock()
		require.Empty(t, received)
		mu.Unlock()

		// The first statement notifies (the slot is free) and wakes the
		// subscriber, whatever its poll interval.
		setNotifiedSlot(ctx, t, bundle, 0)
		_, err = bundle.DBPool.Exec(ctx, setRunning, ids[0])
		require.NoError(t, err)
		// A minute, not the hour: other tests' open transactions may hold the
		// event back from a read for seconds on a loaded machine.
		require.Eventually(t, func() bool {
			mu.Lock()
			defer mu.Unlock()
			return len(received) == 2
		}, time.Minute, 10*time.Millisecond, "the quiet statement's event arrives long before the hour's poll")
		mu.Lock()
		require.NoError(t, quietErr)
		require.Equal(t, ids, received)
		mu.Unlock()
		stopSub()
		require.ErrorIs(t, <-subDone, context.Canceled)
	})

	// GapDetected: a reader whose next events were pruned before it
	// read them is told so (events.ErrPruned, naming both cursors), by
	// ReadChecked, Engine.ReadEvents and Subscribe; with SkipPruned a
	// subscription reads on after the gap; a reader with nothing pruned after
	// its cursor, or reading from the beginning, is not disturbed.
	t.Run("GapDetected", func(t *testing.T) {
		t.Parallel()
		ctx := context.Background()
		pool := riverbpmntest.DBPool(t)
		schema, sql := packedSchema(ctx, t, 0, 20)

		// Three outbox rows: 10 RUNNING, 10 SUCCEEDED, 10 RUNNING.
		for _, stmt := range []string{
			"UPDATE %s.river_job SET state = 'running', attempt = 1, attempted_at = now() WHERE id <= 10",
			"UPDATE %s.river_job SET state = 'completed', finalized_at = now() WHERE id <= 10",
			"UPDATE %s.river_job SET state = 'running', attempt = 1, attempted_at = now() WHERE id > 10",
		} {
			_, err := pool.Exec(ctx, sql(stmt))
			require.NoError(t, err)
		}
		all := readAll(ctx, t, schema, events.Cursor{}, 100)
		require.Len(t, all, 30)

		_, _, ok, err := events.Pruned(ctx, pool, schema)
		require.NoError(t, err)
		require.False(t, ok, "nothing pruned yet")
		batch, _, err := events.ReadChecked(ctx, pool, schema, all[4].Cursor, 100)
		require.NoError(t, err)
		require.Len(t, batch, 25)

		// Prune the first row only: it is the only one written before olderThan.
		_, err = pool.Exec(ctx, sql(`UPDATE %s.river_bpmn_event SET created_at = now() - interval '2 hours'
			WHERE (txid, id) = (SELECT txid, id FROM %[1]s.river_bpmn_event ORDER BY txid, id LIMIT 1)`))
		require.NoError(t, err)
		deleted, err := events.Prune(ctx, pool, schema, time.Now().Add(-time.Hour), 0)
		require.NoError(t, err)
		require.EqualValues(t, 10, deleted)
		through, at, ok, err := events.Pruned(ctx, pool, schema)
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, all[9].Cursor, through, "the mark is the last event deleted")
		require.WithinDuration(t, time.Now(), at, time.Minute)

		// A reader in the middle of the pruned row lost events 6-10.
		_, _, err = events.ReadChecked(ctx, pool, schema, all[4].Cursor, 100)
		var gap *events.GapError
		require.ErrorAs(t, err, &gap)
		require.ErrorIs(t, err, events.ErrPruned)
		require.Equal(t, all[4].Cursor, gap.After)
		require.Equal(t, all[9].Cursor, gap.Through)
		require.Contains(t, err.Error(), all[4].Cursor.String())
		require.Contains(t, err.Error(), all[9].Cursor.String())

		engine, err := workflow.NewEngine(pool, &workflow.Config{Schema: schema})
		require.NoError(t, err)
		_, err = engine.Events().Read(ctx, all[4].Cursor, 100)
		require.ErrorIs(t, err, events.ErrPruned)

		// Readers at or after the mark, and from the beginning, lost nothing.
		batch, _, err = events.ReadChecked(ctx, pool, schema, all[9].Cursor, 100)
		require.NoError(t, err)
		require.Equal(t, all[10:], batch)
		batch, _, err = events.ReadChecked(ctx, pool, schema, events.Cursor{}, 100)
		require.NoError(t, err)
		require.Equal(t, all[10:], batch)

		// Pruning nothing, or less far, never moves the mark back.
		_, err = events.Prune(ctx, pool, schema, time.Now().Add(-time.Hour), 0)
		require.NoError(t, err)
		again, _, _, err := events.Pruned(ctx, pool, schema)
		require.NoError(t, err)
		require.Equal(t, through, again)

		// Subscribe ends with the gap; with SkipPruned it reads on after it,
		// and a named subscription saves the position past the gap.
		subscribe := func(cfg events.SubscribeConfig, want int) ([]events.Event, error) {
			cfg.Schema, cfg.PollInterval = schema, 20*time.Millisecond
			subCtx, cancel := context.WithTimeout(ctx, time.Minute)
			defer cancel()
			var (
				mu  sync.Mutex
				got []events.Event
			)
			err := events.Subscribe(subCtx, pool, &cfg, func(_ context.Context, batch []events.Event) error {
				mu.Lock()
				defer mu.Unlock()
				got = append(got, batch...)
				if len(got) >= want {
					cancel()
				}
				return nil
			})
			mu.Lock()
			defer mu.Unlock()
			return got, err
		}
		from := all[4].Cursor
		got, err := subscribe(events.SubscribeConfig{From: &from, Name: "audit"}, 1)
		require.ErrorAs(t, err, &gap)
		require.Equal(t, all[9].Cursor, gap.Through)
		require.Empty(t, got)

		got, err = subscribe(events.SubscribeConfig{Name: "audit", SkipPruned: true}, 20)
		require.True(t, errors.Is(err, context.Canceled), "%v", err)
		require.Equal(t, all[10:], got)
		// The saved position is past the gap: a strict subscriber resumes.
		_, err = pool.Exec(ctx, sql("UPDATE %s.river_job SET state = 'completed', finalized_at = now() WHERE id > 10"))
		require.NoError(t, err)
		got, err = subscribe(events.SubscribeConfig{Name: "audit", BatchSize: 20}, 10)
		require.True(t, errors.Is(err, context.Canceled), "%v", err)
		require.Len(t, got, 10)
		for _, ev := range got {
			require.Equal(t, events.Succeeded, ev.Status)
		}
	})

	// SubscriptionPosition: a named subscription's saved position can
	// be read, with how many events it has yet to handle, so an operator sees
	// how far a consumer is behind. Camunda has no counterpart (its engine
	// publishes no job status event stream; REGARDS broadcasts job events), so
	// no Camunda test class is reproduced: this is the operator's requirement.
	// The position falls inside an outbox row (events of one statement are
	// stored together): only the row's events after it count.
	t.Run("SubscriptionPosition", func(t *testing.T) {
		t.Parallel()
		ctx := context.Background()
		pool := riverbpmntest.DBPool(t)
		schema, sql := packedSchema(ctx, t, 0, 10)
		engine, err := workflow.NewEngine(pool, &workflow.Config{Schema: schema})
		require.NoError(t, err)
		// Two statements: a row of 4 RUNNING events, then one of 6.
		for _, ids := range [][2]int{{1, 4}, {5, 10}} {
			_, err := pool.Exec(ctx, sql(`UPDATE %s.river_job SET state = 'running', attempt = 1, attempted_at = now() WHERE id BETWEEN $1 AND $2`), ids[0], ids[1])
			require.NoError(t, err)
		}
		last, ok, err := engine.Events().Last(ctx)
		require.NoError(t, err)
		require.True(t, ok)
		// Wait until every event is readable. A read stops below the oldest
		// transaction still running in the database (events.Read), and other
		// tests' transactions run in it: one that began between the two
		// statements lets a read see the first row only, so the consumer below
		// would get batches of 3, 1 and 3 and stop after 7 events, not 6.
		require.Len(t, readAll(ctx, t, schema, events.Cursor{}, 10), 10)

		_, err = engine.Events().Subscription(ctx, "ops")
		require.ErrorIs(t, err, workflow.ErrNotFound)

		// A consumer that handles two batches of 3 events, then stops.
		subCtx, cancel := context.WithCancel(ctx)
		handled := 0
		err = engine.Events().Subscribe(subCtx, &events.SubscribeConfig{Name: "ops", From: &events.Cursor{}, BatchSize: 3},
			func(_ context.Context, batch []events.Event) error {
				handled += len(batch)
				if handled >= 6 {
					cancel()
				}
				return nil
			})
		require.ErrorIs(t, err, context.Canceled)
		require.Equal(t, 6, handled)

		sub, err := engine.Events().Subscription(ctx, "ops")
		require.NoError(t, err)
		require.Equal(t, "ops", sub.Name)
		require.EqualValues(t, 4, sub.Behind, "10 events, 6 handled")
		require.Equal(t, &last, sub.Last)
		require.True(t, sub.Cursor.Less(last))
		all, err := engine.Events().Subscriptions(ctx)
		require.NoError(t, err)
		require.Len(t, all, 1)
		require.Equal(t, *sub, all[0])

		// The consumer catches up.
		subCtx, cancel = context.WithCancel(ctx)
		err = engine.Events().Subscribe(subCtx, &events.SubscribeConfig{Name: "ops"}, func(_ context.Context, batch []events.Event) error {
			handled += len(batch)
			if handled >= 10 {
				cancel()
			}
			return nil
		})
		require.ErrorIs(t, err, context.Canceled)
		sub, err = engine.Events().Subscription(ctx, "ops")
		require.NoError(t, err)
		require.Zero(t, sub.Behind)
		require.Equal(t, last, sub.Cursor)
	})

	// List: pages read newest first hold every event once, the last page's
	// Next is empty (never a next page that comes back empty), a page of one
	// process instance holds only its events, Limit 0 is 100, and a foreign
	// cursor or an out-of-range limit is refused naming the field and the
	// value. On an engine without a pool the handle fails every call.
	t.Run("List", func(t *testing.T) {
		t.Parallel()
		ctx := context.Background()
		pool := riverbpmntest.DBPool(t)
		schema, sql := packedSchema(ctx, t, 0, 250)
		engine, err := workflow.NewEngine(pool, &workflow.Config{Schema: schema})
		require.NoError(t, err)
		handle := engine.Events()

		res, err := handle.List(ctx, nil)
		require.NoError(t, err)
		require.Equal(t, &events.ListResult{Items: []events.Event{}}, res, "no event: one empty last page")

		_, err = pool.Exec(ctx, sql("UPDATE %s.river_job SET state = 'running', attempt = 1, attempted_at = now()"))
		require.NoError(t, err)
		forward := readAll(ctx, t, schema, events.Cursor{}, 1000)
		require.Len(t, forward, 250)
		slices.Reverse(forward)

		for _, limit := range []int{7, 125, 250} {
			var all []events.Event
			params := &events.ListParams{Limit: limit}
			for pages := 1; ; pages++ {
				res, err := handle.List(ctx, params)
				require.NoError(t, err)
				require.NotEmpty(t, res.Items, "limit %d: page %d is not empty", limit, pages)
				all = append(all, res.Items...)
				if res.Next == "" {
					require.Equal(t, (250+limit-1)/limit, pages, "limit %d", limit)
					break
				}
				params.After = res.Next
			}
			require.Equal(t, forward, all, "limit %d", limit)
		}
		res, err = handle.List(ctx, &events.ListParams{})
		require.NoError(t, err)
		require.Len(t, res.Items, 100, "Limit 0 is 100")

		res, err = handle.List(ctx, &events.ListParams{ProcessInstanceID: "pi-1", Limit: 1000})
		require.NoError(t, err)
		require.Len(t, res.Items, 84)
		require.Empty(t, res.Next)
		for _, ev := range res.Items {
			require.Equal(t, "pi-1", ev.ProcessInstanceID)
		}

		_, err = handle.List(ctx, &events.ListParams{After: "42"})
		require.ErrorContains(t, err, `events: ListParams.After "42" is not a cursor`)
		_, err = handle.List(ctx, &events.ListParams{Limit: 1001})
		require.ErrorContains(t, err, "events: ListParams.Limit must be 0 (default 100) to 1000, got 1001")

		noPool, err := workflow.NewEngine(nil, &workflow.Config{Schema: schema})
		require.NoError(t, err)
		_, err = noPool.Events().List(ctx, nil)
		require.ErrorContains(t, err, "no database pool")
		_, err = noPool.Events().Enabled(ctx)
		require.ErrorContains(t, err, "no database pool")
	})

}
