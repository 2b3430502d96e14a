package fairness_test

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/index"
	"github.com/riverbpmn/riverbpmn/priority"
	"github.com/riverbpmn/riverbpmn/riverbpmntest"
	"github.com/riverbpmn/riverbpmn/workflow"
)

// TestTenantFairnessIndex: the tenant indexes a fair fetch reads
// (workflow.TenantFairnessIndex), one per acquisition order, created at run
// time outside the migration line.
func TestTenantFairnessIndex(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	// OnlyWhenEnabled: a migrated schema has no tenant indexes (inserts pay
	// nothing for fairness until a fair client starts);
	// EnableTenantFairness creates the index of River's order, or those of
	// the orders it is given, only those, idempotently;
	// DisableTenantFairness drops every order's; a fair client's start
	// creates its own order's index only.
	t.Run("OnlyWhenEnabled", func(t *testing.T) {
		t.Parallel()
		bundle := setupEngine(ctx, t, nil)
		engine := bundle.Engine
		requireIndexes := func(t *testing.T, want ...string) {
			t.Helper()
			got, err := engine.TenantFairnessIndexes(ctx)
			require.NoError(t, err)
			require.ElementsMatch(t, want, got)
			on, err := engine.TenantFairnessEnabled(ctx)
			require.NoError(t, err)
			require.Equal(t, len(want) > 0, on)
		}
		// riverdbtest may hand out a schema another test enabled: start clean.
		require.NoError(t, engine.DisableTenantFairness(ctx))
		requireIndexes(t)

		require.NoError(t, engine.EnableTenantFairness(ctx))
		require.NoError(t, engine.EnableTenantFairness(ctx), "idempotent")
		requireIndexes(t, "river_bpmn_fetch_tenant")
		on, err := engine.TenantFairnessEnabled(ctx, workflow.Acquisition{ByPriority: true})
		require.NoError(t, err)
		require.False(t, on, "River's order's index does not serve a fair client by priority")

		byDue := workflow.Acquisition{TimersFirst: true, ByDueDate: true}
		require.NoError(t, engine.EnableTenantFairness(ctx, byDue, workflow.Acquisition{ByPriority: true, DeploymentAware: true}))
		requireIndexes(t, "river_bpmn_fetch_tenant", "river_bpmn_fetch_tenant_td", "river_bpmn_fetch_tenant_p")
		on, err = engine.TenantFairnessEnabled(ctx, workflow.Acquisition{}, byDue)
		require.NoError(t, err)
		require.True(t, on)

		require.NoError(t, engine.EnableTenantFairness(ctx, acquisitionCombinations(priority.Range{Min: 0, Max: 1}, nil)...))
		requireIndexes(t, index.TenantFairness.Names()...)

		require.NoError(t, engine.DisableTenantFairness(ctx))
		requireIndexes(t)

		// An index left invalid (as by an interrupted concurrent build) is
		// not counted, and is built again.
		require.NoError(t, engine.EnableTenantFairness(ctx, workflow.Acquisition{ByDueDate: true}))
		_, err = bundle.DBPool.Exec(ctx, `UPDATE pg_index SET indisvalid = false WHERE indexrelid = $1::regclass`,
			pgx.Identifier{bundle.Schema, "river_bpmn_fetch_tenant_d"}.Sanitize())
		require.NoError(t, err)
		requireIndexes(t)
		require.NoError(t, engine.EnableTenantFairness(ctx, workflow.Acquisition{ByDueDate: true}))
		requireIndexes(t, "river_bpmn_fetch_tenant_d")
		require.NoError(t, engine.DisableTenantFairness(ctx))
		requireIndexes(t)

		driver, err := engine.NewDriver(workflow.Acquisition{FairByTenant: true, ByPriority: true, ByDueDate: true})
		require.NoError(t, err)
		workers := river.NewWorkers()
		river.AddWorker(workers, fairWorker{})
		client, err := driver.NewClient(&river.Config{
			Logger:   slog.New(slog.DiscardHandler),
			Queues:   map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 1}},
			TestOnly: true,
			Workers:  workers,
		})
		require.NoError(t, err)
		require.NoError(t, client.Start(ctx))
		t.Cleanup(func() { require.NoError(t, client.Stop(ctx)) })
		requireIndexes(t, "river_bpmn_fetch_tenant_pd") // a fair client creates its order's index when it starts, only that
	})

	// MigrateDown: the tenant indexes are created at run time, outside the
	// migration line, and those by priority or timers first read functions
	// of migration 003; migrating down through 003 drops them with it rather
	// than failing on their dependency.
	t.Run("MigrateDown", func(t *testing.T) {
		t.Parallel()
		pool := riverbpmntest.DBPool(t)
		schema := emptySchema(ctx, t)
		_, err := workflow.MigrateUp(ctx, pool, &workflow.MigrateOpts{Schema: schema})
		require.NoError(t, err)
		engine, err := workflow.NewEngine(pool, &workflow.Config{Schema: schema})
		require.NoError(t, err)
		require.NoError(t, engine.EnableTenantFairness(ctx, acquisitionCombinations(priority.Range{Min: 0, Max: 1}, nil)...))
		present, err := engine.TenantFairnessIndexes(ctx)
		require.NoError(t, err)
		require.ElementsMatch(t, index.TenantFairness.Names(), present)

		_, err = workflow.MigrateDown(ctx, pool, &workflow.MigrateOpts{Schema: schema, TargetVersion: 2})
		require.NoError(t, err)
		present, err = engine.TenantFairnessIndexes(ctx)
		require.NoError(t, err)
		require.Empty(t, present)
		_, err = workflow.MigrateUp(ctx, pool, &workflow.MigrateOpts{Schema: schema})
		require.NoError(t, err, "and up again")
	})
}

// emptySchema creates a schema with nothing in it, dropped when the test
// ends: one a test migrates down and up itself (riverdbtest's schemas are
// shared between the package's tests, migrated).
func emptySchema(ctx context.Context, t *testing.T) string {
	t.Helper()
	schema := fmt.Sprintf("fairness_migrate_%d", time.Now().UnixNano())
	pool := riverbpmntest.DBPool(t)
	_, err := pool.Exec(ctx, "CREATE SCHEMA "+pgx.Identifier{schema}.Sanitize())
	require.NoError(t, err)
	t.Cleanup(func() {
		_, err := pool.Exec(context.WithoutCancel(ctx), "DROP SCHEMA "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
		require.NoError(t, err)
	})
	return schema
}
