package workflow

import (
	"context"
	"fmt"
	"io/fs"
	"math"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// emptySchema creates a schema with nothing in it, dropped after the test.
func emptySchema(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	schema := fmt.Sprintf("riverbpmn_migrate_%d", time.Now().UnixNano())
	pool := testPool(t)
	_, err := pool.Exec(ctx, "CREATE SCHEMA "+pgx.Identifier{schema}.Sanitize())
	require.NoError(t, err)
	t.Cleanup(func() {
		_, err := pool.Exec(context.Background(), "DROP SCHEMA "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
		require.NoError(t, err)
	})
	return schema
}

func indexExists(ctx context.Context, t *testing.T, schema, index string) bool {
	t.Helper()
	var exists bool
	require.NoError(t, testPool(t).QueryRow(ctx, "SELECT to_regclass($1) IS NOT NULL", pgx.Identifier{schema, index}.Sanitize()).Scan(&exists))
	return exists
}

// ourMigrationVersions lists the versions of our embedded migration files.
func ourMigrationVersions(t *testing.T) []int {
	t.Helper()
	entries, err := migrationFS.ReadDir("migration/" + MigrationLine)
	require.NoError(t, err)
	var versions []int
	for _, entry := range entries {
		var version int
		_, err := fmt.Sscanf(entry.Name(), "%03d_", &version)
		require.NoError(t, err)
		if len(versions) == 0 || versions[len(versions)-1] != version {
			versions = append(versions, version)
		}
	}
	return versions
}

func TestMigrateUpDown(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testPool(t)

	t.Run("UpAppliesMainThenOursAndIsIdempotent", func(t *testing.T) {
		t.Parallel()
		schema := emptySchema(t)

		allOurs := ourMigrationVersions(t)
		latest := allOurs[len(allOurs)-1]

		res, err := MigrateUp(ctx, pool, &MigrateOpts{Schema: schema})
		require.NoError(t, err)
		require.NotEmpty(t, res.Main.Versions)
		require.Len(t, res.BPMN.Versions, len(allOurs))
		require.True(t, indexExists(ctx, t, schema, "river_bpmn_job_exclusive_instance"))
		require.False(t, indexExists(ctx, t, schema, "river_bpmn_fetch_p"), "created on demand, not by a migration")

		mainVersions, ourVersions, err := MigrationVersions(ctx, pool, schema)
		require.NoError(t, err)
		require.Len(t, mainVersions, len(res.Main.Versions))
		require.Equal(t, allOurs, ourVersions)

		res, err = MigrateUp(ctx, pool, &MigrateOpts{Schema: schema})
		require.NoError(t, err)
		require.Empty(t, res.Main.Versions, "second run applies nothing")
		require.Empty(t, res.BPMN.Versions)

		res, err = MigrateDown(ctx, pool, &MigrateOpts{Schema: schema})
		require.NoError(t, err)
		require.Len(t, res.BPMN.Versions, 1, "one step down by default")
		require.Equal(t, latest, res.BPMN.Versions[0].Version)
		require.Nil(t, res.Main, "down never touches River's main line")

		res, err = MigrateDown(ctx, pool, &MigrateOpts{Schema: schema, TargetVersion: -1})
		require.NoError(t, err)
		require.Len(t, res.BPMN.Versions, len(allOurs)-1)
		require.False(t, indexExists(ctx, t, schema, "river_bpmn_job_exclusive_instance"))

		mainVersions, ourVersions, err = MigrationVersions(ctx, pool, schema)
		require.NoError(t, err)
		require.NotEmpty(t, mainVersions)
		require.Empty(t, ourVersions)

		res, err = MigrateDown(ctx, pool, &MigrateOpts{Schema: schema})
		require.NoError(t, err)
		require.Empty(t, res.BPMN.Versions, "down again is a no-op")
	})

	t.Run("MainLineMissing", func(t *testing.T) {
		t.Parallel()
		schema := emptySchema(t)

		_, err := MigrateUp(ctx, pool, &MigrateOpts{Schema: schema, SkipMainLine: true})
		require.ErrorIs(t, err, ErrMainLineMissing)
		require.ErrorContains(t, err, fmt.Sprintf("schema %q: River's main migration line is not applied; apply it first", schema))

		_, err = MigrateDown(ctx, pool, &MigrateOpts{Schema: schema})
		require.ErrorIs(t, err, ErrMainLineMissing)

		_, _, err = MigrationVersions(ctx, pool, schema)
		require.ErrorIs(t, err, ErrMainLineMissing)
	})
}

func TestMigrationTruncateTables(t *testing.T) {
	t.Parallel()
	require.Empty(t, migrationTruncateTables(1))
	require.Equal(t, []string{"river_bpmn_job_definition"}, migrationTruncateTables(2))
	require.Equal(t, []string{"river_bpmn_job_definition"}, migrationTruncateTables(3))
	require.Equal(t, []string{"river_bpmn_job_definition", "river_bpmn_incident"}, migrationTruncateTables(4))
	require.Equal(t, []string{"river_bpmn_job_definition", "river_bpmn_incident", "river_bpmn_exclusive_lock"}, migrationTruncateTables(5))
	require.Equal(t, []string{"river_bpmn_job_definition", "river_bpmn_incident", "river_bpmn_exclusive_lock", "river_bpmn_timer"}, migrationTruncateTables(migrationVersionTimers))
	require.Equal(t, append(migrationTruncateTables(migrationVersionHoldSuspension), "river_bpmn_client_session"), migrationTruncateTables(livenessMigrationVersion))
	require.Equal(t, append(migrationTruncateTables(livenessMigrationVersion), eventsMigrationTables...), migrationTruncateTables(eventsMigrationVersion))
	require.Equal(t, append(migrationTruncateTables(eventsMigrationVersion), "river_bpmn_dependency", "river_bpmn_dependent", "river_bpmn_expiry"),
		migrationTruncateTables(migrationVersionLifecycle))
	require.Equal(t, migrationTruncateTables(math.MaxInt), migrationTruncateTables(0))
	entries, err := fs.Glob(migrationFS, "migration/riverbpmn/004_incidents.*.sql")
	require.NoError(t, err)
	require.Len(t, entries, 2)
}
