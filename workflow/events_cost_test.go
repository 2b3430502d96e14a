package workflow

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/events"
)

// setNotifiedSlot sets the trigger's last notification slot (migration
// riverbpmn/013): 0 lets the next statement notify, a far-future slot keeps
// every statement from notifying.
func setNotifiedSlot(ctx context.Context, t *testing.T, engine *Engine, slot int64) {
	t.Helper()
	_, err := engine.dbPool.Exec(ctx, engine.sql("SELECT setval('/* TEMPLATE: schema */river_bpmn_event_notified', $1)"), slot)
	require.NoError(t, err)
}

const farFutureSlot = int64(1) << 50

// scheduledControlJobs inserts n control jobs scheduled an hour ahead, so no
// client takes them; the tests move them with plain updates.
func scheduledControlJobs(ctx context.Context, t *testing.T, engine *Engine, schema string, n int) []int64 {
	t.Helper()
	client := newControlClient(t, engine, schema, newControlWorker())
	ids := make([]int64, n)
	for i := range ids {
		res, err := client.Insert(ctx, controlArgs{}, &river.InsertOpts{ScheduledAt: time.Now().Add(time.Hour)})
		require.NoError(t, err)
		ids[i] = res.Job.ID
	}
	return ids
}

// TestEventsNotifyOncePerSlot: a statement that records events notifies only
// when no statement of the schema has notified in the current 50 ms slot, so
// River's commits do not queue behind NOTIFY's database-wide lock. The
// events are recorded either way.
func TestEventsNotifyOncePerSlot(t *testing.T) {
	ctx := context.Background()
	engine, schema := testEngine(t)
	require.NoError(t, engine.EnableEvents(ctx))
	t.Cleanup(func() { require.NoError(t, engine.DisableEvents(context.Background())) })
	ids := scheduledControlJobs(ctx, t, engine, schema, 2)

	// A fresh listening connection per phase (a wait that times out may
	// leave its connection unusable).
	listen := func() *pgx.Conn {
		conn, err := engine.dbPool.Acquire(ctx)
		require.NoError(t, err)
		listener := conn.Hijack()
		t.Cleanup(func() { listener.Close(context.Background()) })
		_, err = listener.Exec(ctx, "LISTEN "+pgx.Identifier{schema + ".river_bpmn_event"}.Sanitize())
		require.NoError(t, err)
		return listener
	}
	setRunning := engine.sql("UPDATE /* TEMPLATE: schema */river_job SET state = 'running', attempt = 1, attempted_at = now() WHERE id = $1")

	// Slot already taken: the event is written, no notification is sent.
	setNotifiedSlot(ctx, t, engine, farFutureSlot)
	listener := listen()
	_, err := engine.dbPool.Exec(ctx, setRunning, ids[0])
	require.NoError(t, err)
	waitCtx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	_, err = listener.WaitForNotification(waitCtx)
	cancel()
	require.Error(t, err, "no notification within the taken slot")
	require.ErrorIs(t, waitCtx.Err(), context.DeadlineExceeded, "the wait timed out: %v", err)

	// A new slot: the statement notifies, and takes the slot.
	setNotifiedSlot(ctx, t, engine, 0)
	listener = listen()
	slotBefore := dbSlot(ctx, t, engine)
	_, err = engine.dbPool.Exec(ctx, setRunning, ids[1])
	require.NoError(t, err)
	slotAfter := dbSlot(ctx, t, engine)
	waitCtx, cancel = context.WithTimeout(ctx, 10*time.Second)
	n, err := listener.WaitForNotification(waitCtx)
	cancel()
	require.NoError(t, err)
	require.Equal(t, schema+".river_bpmn_event", n.Channel)
	var slot int64
	require.NoError(t, engine.dbPool.QueryRow(ctx, engine.sql("SELECT last_value FROM /* TEMPLATE: schema */river_bpmn_event_notified")).Scan(&slot))
	// Both ends are read from the database's clock, which the trigger reads
	// too: the slot is the one the statement ran in, however long it took.
	require.GreaterOrEqual(t, slot, slotBefore, "the slot is the statement's 50 ms")
	require.LessOrEqual(t, slot, slotAfter, "the slot is the statement's 50 ms")

	// Both events are in the outbox. Not read with ReadEvents: a read stops
	// below the oldest transaction still running in the database
	// (events.Read), and in the full suite other tests' transactions run in
	// this database, so a read right after the statements may return fewer.
	var recorded []int64
	require.NoError(t, engine.dbPool.QueryRow(ctx, engine.sql(`SELECT coalesce(array_agg(u.job_id ORDER BY e.txid, e.id, u.ord), '{}')
		FROM /* TEMPLATE: schema */river_bpmn_event e
		CROSS JOIN LATERAL unnest(e.job_id) WITH ORDINALITY AS u (job_id, ord)`)).Scan(&recorded))
	require.Equal(t, ids, recorded, "both statements recorded their event")
}

// dbSlot is the 50 ms slot the trigger would compute now (migration
// riverbpmn/013), from the database's clock.
func dbSlot(ctx context.Context, t *testing.T, engine *Engine) int64 {
	t.Helper()
	var slot int64
	require.NoError(t, engine.dbPool.QueryRow(ctx, "SELECT (extract(epoch FROM clock_timestamp()) * 20)::bigint").Scan(&slot))
	return slot
}

// TestEventsArriveWithoutNotification: the events of a statement that sent no
// notification (another took the slot) reach a subscriber without waiting
// for its poll interval (here an hour): a subscriber reads again shortly
// after every batch it got.
func TestEventsArriveWithoutNotification(t *testing.T) {
	ctx := context.Background()
	engine, schema := testEngine(t)
	require.NoError(t, engine.EnableEvents(ctx))
	t.Cleanup(func() { require.NoError(t, engine.DisableEvents(context.Background())) })
	ids := scheduledControlJobs(ctx, t, engine, schema, 2)
	setRunning := engine.sql("UPDATE /* TEMPLATE: schema */river_job SET state = 'running', attempt = 1, attempted_at = now() WHERE id = $1")

	start, err := engine.EventsNow(ctx)
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
		subDone <- engine.SubscribeEvents(subCtx, &events.SubscribeConfig{From: &start, PollInterval: time.Hour},
			func(ctx context.Context, batch []events.Event) error {
				mu.Lock()
				for _, ev := range batch {
					received = append(received, ev.JobID)
				}
				mu.Unlock()
				// While the first batch is handled, a statement commits that
				// sends no notification.
				once.Do(func() {
					if _, err := engine.dbPool.Exec(ctx, engine.sql("SELECT setval('/* TEMPLATE: schema */river_bpmn_event_notified', $1)"), farFutureSlot); err != nil {
						quietErr = err
						return
					}
					_, quietErr = engine.dbPool.Exec(ctx, setRunning, ids[1])
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
	setNotifiedSlot(ctx, t, engine, 0)
	_, err = engine.dbPool.Exec(ctx, setRunning, ids[0])
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
}
