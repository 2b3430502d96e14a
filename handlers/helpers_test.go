package handlers_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdbtest"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/riverbpmntest"
	"github.com/riverbpmn/riverbpmn/workflow"
)

// fakeClock is a settable clock for Timers and River (Config.Test.Time).
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) NowOrNil() *time.Time {
	now := c.Now()
	return &now
}

func (c *fakeClock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}

var _ rivertype.TimeGenerator = (*fakeClock)(nil)

// shiftedRetryPolicy applies workflow.RetryPolicy's interval from the fake
// clock's now instead of the wall clock's.
type shiftedRetryPolicy struct {
	clock *fakeClock
	inner workflow.RetryPolicy
}

func (p *shiftedRetryPolicy) NextRetry(job *rivertype.JobRow) time.Time {
	// The inner policy adds its interval to its own time.Now(), a moment
	// after wall (milliseconds on a loaded machine): the retry cycles of
	// these tests are whole seconds, so the interval is rounded to one.
	wall := time.Now()
	interval := p.inner.NextRetry(job).Sub(wall).Round(time.Second)
	return p.clock.Now().Add(interval)
}

// testSetup is an engine on an isolated schema with riverbpmn's line.
type testSetup struct {
	pool   *pgxpool.Pool
	schema string
	engine *workflow.Engine
}

func newTestSetup(t testing.TB, config *workflow.Config) *testSetup {
	t.Helper()
	ctx := context.Background()
	schema := riverdbtest.TestSchema(ctx, t, riverbpmntest.Driver(t), nil)
	b := riverbpmntest.New(ctx, t, schema, &riverbpmntest.Opts{Config: config})
	return &testSetup{pool: b.DBPool, schema: schema, engine: b.Engine}
}

// insertClient is a client that only inserts.
func (s *testSetup) insertClient(t testing.TB) *river.Client[pgx.Tx] {
	t.Helper()
	client, err := river.NewClient(s.engine.Driver(), &river.Config{
		Schema:     s.schema,
		Middleware: []rivertype.Middleware{s.engine.Middleware()},
	})
	require.NoError(t, err)
	return client
}

func (s *testSetup) job(t testing.TB, id int64) *rivertype.JobRow {
	t.Helper()
	client := s.insertClient(t)
	job, err := client.JobGet(context.Background(), id)
	require.NoError(t, err)
	return job
}

// inTx runs f in a committed transaction.
func (s *testSetup) inTx(t testing.TB, f func(tx pgx.Tx)) {
	t.Helper()
	ctx := context.Background()
	tx, err := s.pool.Begin(ctx)
	require.NoError(t, err)
	defer func() { _ = tx.Rollback(ctx) }()
	f(tx)
	require.NoError(t, tx.Commit(ctx))
}
