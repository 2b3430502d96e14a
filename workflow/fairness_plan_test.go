package workflow

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/index"
	"github.com/riverbpmn/riverbpmn/internal/longtest"
	"github.com/riverbpmn/riverbpmn/priority"
)

// fairBacklogSQL spreads the plan backlog (planBacklogSQL) over 1,000
// tenants, skewed: tenant t-0 holds a third of the jobs, the rest are spread
// evenly; one job in 20 has no tenant.
const fairBacklogSQL = `
UPDATE %[1]s.river_job
SET metadata = %[1]s.river_bpmn_ctx_set(metadata, 9, 'tenant_id',
    to_jsonb(CASE WHEN id %% 3 = 0 THEN 't-0' ELSE 't-' || ((id / 20) %% 1000) END))
WHERE id %% 20 <> 0;
ANALYZE %[1]s.river_job;`

// TestFairFetchPlansUseIndexes renders the fair fetch (FairByTenant, with
// and without weights) of every combination of the other acquisition options
// under every exclusive scope, and EXPLAINs each on 100,000 available jobs
// over 1,000 tenants (custom and generic plans). For each order (by
// priority, timers first, due date: 8 orders) the schema has exactly the
// tenant index a fair client of that order creates when it starts
// (EnableTenantFairness with its acquisition), no other: the tenants are
// found by a skip-scan of it, each tenant's jobs are read from it in the
// client's order, the table is never scanned and no river_job rows are
// sorted, in every combination.
func TestFairFetchPlansUseIndexes(t *testing.T) {
	longtest.Skip(t) // 100k jobs, an EXPLAIN matrix over every plan
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
	require.NoError(t, pool.QueryRow(ctx, fmt.Sprintf(`SELECT count(DISTINCT %[1]s.river_bpmn_ctx_tenant(metadata)) FROM %[1]s.river_job`, ident)).Scan(&tenants))
	require.Equal(t, 1000, tenants)
	engine, err := NewEngine(pool, &Config{Schema: schema})
	require.NoError(t, err)
	conn, err := pool.Acquire(ctx)
	require.NoError(t, err)
	defer conn.Release()

	byIndex := map[string][]Acquisition{}
	var indexes []string
	for _, acq := range acquisitionCombinations(priority.Range{Min: -100, Max: 300}, []string{"dep-1", "dep-2"}) {
		index := TenantFairnessIndex(acq)
		if byIndex[index] == nil {
			indexes = append(indexes, index)
		}
		byIndex[index] = append(byIndex[index], acq)
	}
	require.ElementsMatch(t, index.TenantFairness.Names(), indexes, "every order has its tenant index")

	plans := 0
	for _, index := range indexes {
		// The indexes a fair client of this order finds: its own.
		require.NoError(t, engine.DisableTenantFairness(ctx))
		require.NoError(t, engine.EnableTenantFairness(ctx, byIndex[index][0]))
		present, err := engine.TenantFairnessIndexes(ctx)
		require.NoError(t, err)
		require.Equal(t, []string{index}, present)
		for _, scope := range allScopes {
			for _, base := range byIndex[index] {
				for _, weights := range []map[string]int{nil, {"t-0": 1, "t-7": 3, "": 2}} {
					acq := base
					acq.FairByTenant, acq.TenantWeights = true, weights
					query := testFetchQuery(t, schema, scope, acq)
					types, args, literals := query.explainArgs(t)
					for _, generic := range []bool{false, true} {
						name := fmt.Sprintf("%s/%s+Fair/weights=%t/generic=%t", scopeName(scope), acquisitionName(acq), weights != nil, generic)
						plan := explainPlan(ctx, t, conn, query.SQL, types, args, literals, generic)
						plans++
						t.Run(name, func(t *testing.T) {
							if os.Getenv("SHOW_PLANS") != "" {
								t.Logf("%s", plan)
							}
							requireIndexedPlan(t, plan, index)
							requireNoIncrementalSort(t, plan)
						})
					}
				}
			}
		}
	}
	require.Equal(t, 24*3*2*2, plans, "24 combinations (8 orders, with and without a range and deployments) x 3 scopes x 2 weightings x 2 plans")
	t.Logf("%d plans, none sorts river_job rows", plans)
}

// requireNoIncrementalSort adds to requireIndexedPlan (which looks for Sort
// nodes) the Incremental Sort: an index with the order's leading keys but
// not the rest (say timers first, then River's order, for a client by
// timers first and due date) is read presorted and each group of equal
// leading keys sorted; that is a sort of river_job rows too.
func requireNoIncrementalSort(t *testing.T, plan planNode) {
	t.Helper()
	plan.walk(func(node planNode, _ []planNode) {
		if node.NodeType == "Incremental Sort" {
			require.False(t, readsRiverJob(node), "river_job rows are sorted (incrementally):\n%s", plan)
		}
	})
}
