package workflow

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/events"
)

// TestEventsGapDetected: a reader whose next events were pruned before it
// read them is told so (events.ErrPruned, naming both cursors), by
// ReadChecked, Engine.ReadEvents and Subscribe; with SkipPruned a
// subscription reads on after the gap; a reader with nothing pruned after
// its cursor, or reading from the beginning, is not disturbed.
func TestEventsGapDetected(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testPool(t)
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

	engine, err := NewEngine(pool, &Config{Schema: schema})
	require.NoError(t, err)
	_, err = engine.ReadEvents(ctx, all[4].Cursor, 100)
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
}
