package workflow

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/priority"
)

// fairBacklogSQL spreads the plan backlog (planBacklogSQL) over 1,000
// tenants, skewed: tenant t-0 holds a third of the jobs, the rest are spread
// evenly; one job in 20 has no tenant.
const fairBacklogSQL = `
UPDATE %[1]s.river_job
SET metadata = jsonb_set(
    CASE WHEN metadata ? 'bpmn' THEN metadata ELSE metadata || '{"bpmn": {}}' END,
    '{bpmn,tenant_id}',
    to_jsonb(CASE WHEN id %% 3 = 0 THEN 't-0' ELSE 't-' || ((id / 20) %% 1000) END))
WHERE id %% 20 <> 0;
ANALYZE %[1]s.river_job;`

// TestFairFetchPlansUseIndexes renders the fair fetch (FairByTenant, with
// and without weights) of every combination of the other acquisition options
// under every exclusive scope, and EXPLAINs each on 100,000 available jobs
// over 1,000 tenants (custom and generic plans): the tenants are found by a
// skip-scan of the tenant index and each tenant's jobs read from it; the
// table is never scanned. For River's order and by priority (the orders the
// tenant indexes of migration 011 have), no river_job rows are sorted; with
// TimersFirst or ByDueDate, each tenant's candidates are sorted (documented
// in the README), which the test shows rather than hides.
func TestFairFetchPlansUseIndexes(t *testing.T) {
	if testing.Short() {
		t.Skip("inserts 100k jobs")
	}
	t.Parallel()
	ctx := context.Background()
	schema := exclSchema(t)
	pool := testPool(t)
	ident := pgx.Identifier{schema}.Sanitize()
	_, err := pool.Exec(ctx, fmt.Sprintf(planBacklogSQL, ident))
	require.NoError(t, err)
	_, err = pool.Exec(ctx, fmt.Sprintf(fairBacklogSQL, ident))
	require.NoError(t, err)
	var tenants int
	require.NoError(t, pool.QueryRow(ctx, fmt.Sprintf(`SELECT count(DISTINCT metadata -> 'bpmn' ->> 'tenant_id') FROM %s.river_job`, ident)).Scan(&tenants))
	require.Equal(t, 1000, tenants)
	engine, err := NewEngine(pool, &Config{Schema: schema})
	require.NoError(t, err)
	require.NoError(t, engine.EnableTenantFairness(ctx), "the indexes a fair client creates when it starts")
	conn, err := pool.Acquire(ctx)
	require.NoError(t, err)
	defer conn.Release()

	sortedTenants := 0
	for _, scope := range allScopes {
		for _, base := range acquisitionCombinations(priority.Range{Min: -100, Max: 300}, []string{"dep-1", "dep-2"}) {
			for _, weights := range []map[string]int{nil, {"t-0": 1, "t-7": 3, "": 2}} {
				acq := base
				acq.FairByTenant, acq.TenantWeights = true, weights
				query := testFetchQuery(t, schema, scope, acq)
				types, args, literals := query.explainArgs(t)
				for _, generic := range []bool{false, true} {
					name := fmt.Sprintf("%s/%s+Fair/weights=%t/generic=%t", scopeName(scope), acquisitionName(acq), weights != nil, generic)
					plan := explainPlan(ctx, t, conn, query.sql, types, args, literals, generic)
					index := "river_bpmn_fetch_tenant"
					if acq.ByPriority {
						index = "river_bpmn_fetch_tenant_p"
					}
					t.Run(name, func(t *testing.T) {
						if os.Getenv("SHOW_PLANS") != "" {
							t.Logf("%s", plan)
						}
						if acq.TimersFirst || acq.ByDueDate {
							requireNoTableScan(t, plan)
							sortedTenants++
							return
						}
						requireIndexedPlan(t, plan, index)
					})
				}
			}
		}
	}
	t.Logf("%d plans sort each tenant's candidates (TimersFirst or ByDueDate)", sortedTenants)
}

// requireNoTableScan checks that the plan never reads river_job without an
// index.
func requireNoTableScan(t *testing.T, plan planNode) {
	t.Helper()
	plan.walk(func(node planNode, _ []planNode) {
		if node.RelationName == "river_job" {
			require.NotContains(t, []string{"Seq Scan", "Bitmap Heap Scan"}, node.NodeType,
				"river_job is read without an index:\n%s", plan)
		}
	})
}
