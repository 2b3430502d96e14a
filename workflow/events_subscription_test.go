package workflow

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/events"
)

// TestEventSubscriptionPosition: a named subscription's saved position can
// be read, with how many events it has yet to handle, so an operator sees
// how far a consumer is behind. Camunda has no counterpart (its engine
// publishes no job status event stream; REGARDS broadcasts job events), so
// no Camunda test class is reproduced: this is the operator's requirement.
// The position falls inside an outbox row (events of one statement are
// stored together): only the row's events after it count.
func TestEventSubscriptionPosition(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testPool(t)
	schema, sql := packedSchema(ctx, t, 0, 10)
	engine, err := NewEngine(pool, &Config{Schema: schema})
	require.NoError(t, err)
	// Two statements: a row of 4 RUNNING events, then one of 6.
	for _, ids := range [][2]int{{1, 4}, {5, 10}} {
		_, err := pool.Exec(ctx, sql(`UPDATE %s.river_job SET state = 'running', attempt = 1, attempted_at = now() WHERE id BETWEEN $1 AND $2`), ids[0], ids[1])
		require.NoError(t, err)
	}
	last, ok, err := engine.LastEvent(ctx)
	require.NoError(t, err)
	require.True(t, ok)
	// Wait until every event is readable. A read stops below the oldest
	// transaction still running in the database (events.Read), and other
	// tests' transactions run in it: one that began between the two
	// statements lets a read see the first row only, so the consumer below
	// would get batches of 3, 1 and 3 and stop after 7 events, not 6.
	require.Len(t, readAll(ctx, t, schema, events.Cursor{}, 10), 10)

	_, err = engine.EventSubscription(ctx, "ops")
	require.ErrorIs(t, err, ErrNotFound)

	// A consumer that handles two batches of 3 events, then stops.
	subCtx, cancel := context.WithCancel(ctx)
	handled := 0
	err = engine.SubscribeEvents(subCtx, &events.SubscribeConfig{Name: "ops", From: &events.Cursor{}, BatchSize: 3},
		func(_ context.Context, batch []events.Event) error {
			handled += len(batch)
			if handled >= 6 {
				cancel()
			}
			return nil
		})
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, 6, handled)

	sub, err := engine.EventSubscription(ctx, "ops")
	require.NoError(t, err)
	require.Equal(t, "ops", sub.Name)
	require.EqualValues(t, 4, sub.Behind, "10 events, 6 handled")
	require.Equal(t, &last, sub.Last)
	require.True(t, sub.Cursor.Less(last))
	all, err := engine.EventSubscriptions(ctx)
	require.NoError(t, err)
	require.Len(t, all, 1)
	require.Equal(t, *sub, all[0])

	// The consumer catches up.
	subCtx, cancel = context.WithCancel(ctx)
	err = engine.SubscribeEvents(subCtx, &events.SubscribeConfig{Name: "ops"}, func(_ context.Context, batch []events.Event) error {
		handled += len(batch)
		if handled >= 10 {
			cancel()
		}
		return nil
	})
	require.ErrorIs(t, err, context.Canceled)
	sub, err = engine.EventSubscription(ctx, "ops")
	require.NoError(t, err)
	require.Zero(t, sub.Behind)
	require.Equal(t, last, sub.Cursor)
}
