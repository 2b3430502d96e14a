package workflow

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river/riverdbtest"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivershared/riversharedtest"
	"github.com/stretchr/testify/require"
)

// testPool is the shared test pool of TEST_DATABASE_URL (River's convention;
// `make test` sets it). Its search_path is empty, so every query must name
// its schema.
func testPool(t testing.TB) *pgxpool.Pool {
	t.Helper()
	return riversharedtest.DBPool(context.Background(), t)
}

// testEngine returns an engine and an isolated schema with River's main line
// and riverbpmn's line applied (riverdbtest applies the driver's default
// lines), set as the engine's schema.
func testEngine(t *testing.T) (*Engine, string) {
	t.Helper()
	return testEngineWithConfig(t, &Config{})
}

// testEngineWithConfig is testEngine with declarations or options.
func testEngineWithConfig(t *testing.T, config *Config) (*Engine, string) {
	t.Helper()
	engine, err := NewEngine(testPool(t), config)
	require.NoError(t, err)
	schema := riverdbtest.TestSchema(context.Background(), t, engine.Driver(), nil)
	engine.config.Schema = schema
	return engine, schema
}

// testStockSchema returns an isolated schema with only River's main line,
// migrated by stock River's driver.
func testStockSchema(t testing.TB) (*riverpgxv5.Driver, string) {
	t.Helper()
	driver := riverpgxv5.New(testPool(t))
	return driver, riverdbtest.TestSchema(context.Background(), t, driver, nil)
}

// waitOrTimeout is riversharedtest.WaitOrTimeout with a timeout
// given by the caller instead of River's fixed 3 s.
func waitOrTimeout[T any](t *testing.T, ch <-chan T, timeout time.Duration) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(timeout):
		require.FailNowf(t, "timed out", "no value after %v", timeout)
		var zero T
		return zero
	}
}
