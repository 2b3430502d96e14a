package exclusive_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/exclusive"
	"github.com/riverbpmn/riverbpmn/liveness"
	"github.com/riverbpmn/riverbpmn/riverbpmntest"
	"github.com/riverbpmn/riverbpmn/workflow"
)

// retiredMechanismVersion is the version of migration
// riverbpmn/029_retire_running_row, which retires the running-row
// mechanism of the release before.
const retiredMechanismVersion = 29

// TestRetiredRunningRow upgrades schemas from the release before this one,
// whose experimental running-row mechanism held a key while a job of the
// key ran, with no lock rows. A client of this release holds keys by lock
// rows only, so on a schema recording the running row it refuses to start
// (the two would not exclude each other), naming what to do; migration 29
// refuses while a client of the schema lives, and otherwise forgets the
// record, the lock rows nothing read and the running-key indexes, after
// which a client starts. On a schema of the lock table (recorded or not)
// the migration keeps every lock row: old and new clients there use the
// same mechanism, so a rolling upgrade is safe.
func TestRetiredRunningRow(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	type testBundle struct {
		pool   *pgxpool.Pool
		schema string
	}
	// setup makes a schema at the version before migration 29 recording
	// mechanism (none when ""), with one lock row and an index named as a
	// running-key index.
	setup := func(t *testing.T, mechanism string) *testBundle {
		t.Helper()
		pool := riverbpmntest.DBPool(t)
		schema := fmt.Sprintf("riverbpmn_retired_%d", time.Now().UnixNano())
		_, err := pool.Exec(ctx, "CREATE SCHEMA "+pgx.Identifier{schema}.Sanitize())
		require.NoError(t, err)
		t.Cleanup(func() {
			_, err := pool.Exec(context.Background(), "DROP SCHEMA "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
			require.NoError(t, err)
		})
		_, err = workflow.MigrateUp(ctx, pool, &workflow.MigrateOpts{Schema: schema, TargetVersion: retiredMechanismVersion - 1})
		require.NoError(t, err)
		q := pgx.Identifier{schema}.Sanitize()
		if mechanism != "" {
			_, err = pool.Exec(ctx, "INSERT INTO "+q+".river_bpmn_setting (name, value) VALUES ('exclusive_mechanism', $1)", mechanism)
			require.NoError(t, err)
		}
		_, err = pool.Exec(ctx, "INSERT INTO "+q+".river_bpmn_exclusive_lock (key, job_id, attempt, client_id, queue, locked_at) VALUES ('pi-1', 1, 1, 'old', 'default', now())")
		require.NoError(t, err)
		_, err = pool.Exec(ctx, "CREATE INDEX river_bpmn_job_exclusive_running_instance ON "+q+".river_job (id) WHERE state = 'running'")
		require.NoError(t, err)
		return &testBundle{pool: pool, schema: schema}
	}
	count := func(t *testing.T, tb *testBundle, sql string) int {
		t.Helper()
		var n int
		require.NoError(t, tb.pool.QueryRow(ctx, fmt.Sprintf(sql, pgx.Identifier{tb.schema}.Sanitize())).Scan(&n))
		return n
	}
	startClient := func(t *testing.T, tb *testBundle) error {
		t.Helper()
		engine, err := workflow.NewEngine(tb.pool, &workflow.Config{Schema: tb.schema, Liveness: liveness.Config{Disabled: true}})
		require.NoError(t, err)
		workers := river.NewWorkers()
		river.AddWorker(workers, river.WorkFunc(func(context.Context, *river.Job[holdArgs]) error { return nil }))
		client, err := workflow.NewClient(engine, &river.Config{
			Schema: tb.schema, Queues: map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 1}}, Workers: workers,
			TestOnly: true,
		})
		require.NoError(t, err)
		if err := client.Start(ctx); err != nil {
			return err
		}
		require.NoError(t, client.Stop(ctx))
		return nil
	}
	// liveSession opens what a running client of the release before has: a
	// session row whose backend holds its advisory lock.
	liveSession := func(t *testing.T, tb *testBundle) (end func()) {
		t.Helper()
		conn, err := tb.pool.Acquire(ctx)
		require.NoError(t, err)
		_, err = conn.Exec(ctx, "SELECT pg_advisory_lock(4711, 42)")
		require.NoError(t, err)
		_, err = conn.Exec(ctx, "INSERT INTO "+pgx.Identifier{tb.schema}.Sanitize()+".river_bpmn_client_session (client_id, pid, lock_class, lock_obj) VALUES ('old', pg_backend_pid(), 4711, 42)")
		require.NoError(t, err)
		return func() {
			_, err := conn.Exec(ctx, "SELECT pg_advisory_unlock(4711, 42)")
			require.NoError(t, err)
			conn.Release()
		}
	}
	const (
		settingSQL = "SELECT count(*) FROM %s.river_bpmn_setting WHERE name = 'exclusive_mechanism'"
		locksSQL   = "SELECT count(*) FROM %s.river_bpmn_exclusive_lock"
		indexSQL   = "SELECT count(*) FROM pg_indexes WHERE schemaname = '%s' AND indexname = 'river_bpmn_job_exclusive_running_instance'"
	)
	indexCount := func(t *testing.T, tb *testBundle) int {
		t.Helper()
		var n int
		require.NoError(t, tb.pool.QueryRow(ctx, fmt.Sprintf(indexSQL, tb.schema)).Scan(&n))
		return n
	}

	t.Run("ClientRefusesRunningRowSchema", func(t *testing.T) {
		t.Parallel()
		tb := setup(t, "running-row")
		err := startClient(t, tb)
		require.ErrorIs(t, err, exclusive.ErrRetiredMechanism)
		require.ErrorContains(t, err, "riverbpmn migrate up")
		require.ErrorContains(t, err, tb.schema)
	})

	t.Run("MigrationRefusedWhileAClientLives", func(t *testing.T) {
		t.Parallel()
		tb := setup(t, "running-row")
		end := liveSession(t, tb)
		_, err := workflow.MigrateUp(ctx, tb.pool, &workflow.MigrateOpts{Schema: tb.schema})
		require.ErrorContains(t, err, "stop every client of the schema")
		require.Equal(t, 1, count(t, tb, settingSQL), "the record stays")
		require.Equal(t, 1, count(t, tb, locksSQL))

		end() // the old client stops
		_, err = workflow.MigrateUp(ctx, tb.pool, &workflow.MigrateOpts{Schema: tb.schema})
		require.NoError(t, err)
		require.Equal(t, 0, count(t, tb, settingSQL), "the record is forgotten")
		require.Equal(t, 0, count(t, tb, locksSQL), "the lock rows nothing read are gone")
		require.Equal(t, 0, indexCount(t, tb), "the running-key index is dropped")
		require.NoError(t, startClient(t, tb))
	})

	t.Run("LockTableSchemaKeepsItsLocks", func(t *testing.T) {
		t.Parallel()
		for _, mechanism := range []string{"", "lock-table"} {
			tb := setup(t, mechanism)
			require.NoError(t, startClient(t, tb), "the same mechanism as before: no refusal")
			end := liveSession(t, tb)
			_, err := workflow.MigrateUp(ctx, tb.pool, &workflow.MigrateOpts{Schema: tb.schema})
			require.NoError(t, err, "a live client of the lock table does not hold the migration back")
			end()
			require.Equal(t, 1, count(t, tb, locksSQL), "mechanism %q: lock rows are in use and stay", mechanism)
			require.Equal(t, 0, count(t, tb, settingSQL))
			require.NoError(t, startClient(t, tb))
		}
	})
}
