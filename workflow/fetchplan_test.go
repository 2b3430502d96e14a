package workflow

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/exclusive"
	"github.com/riverbpmn/riverbpmn/internal/longtest"
	"github.com/riverbpmn/riverbpmn/priority"
)

// planBacklogSQL writes 100,000 available jobs into a schema, in one INSERT
// ... SELECT, with every kind of job an acquisition option or exclusivity
// looks at: 6,000 process instances with 10 exclusive jobs each (grouped,
// as one instance's jobs are inserted together; every tenth instance is a
// sub-instance of another), 20,000 jobs of no instance, 20,000 plain River
// jobs; int64 priorities from -500 to 499, one job in 7 a timer, five
// deployments, two queues; plus 100 running jobs holding the keys of the
// first 100 instances and free lock rows of others.
const planBacklogSQL = `
INSERT INTO %[1]s.river_job (args, kind, max_attempts, metadata, priority, queue, state, scheduled_at, attempt)
SELECT
    '{}', 'kind_' || (i %% 4), 25,
    CASE
        -- Half the jobs in the compact form of the job context, half in the
        -- object form of rows written before migration riverbpmn/016.
        WHEN i <= 60000 AND i %% 2 = 0 THEN jsonb_build_object('bpmn', jsonb_build_array(
            'pi-' || ((i - 1) / 10), 'p', NULL::text, NULL::text, (i * 7919) %% 1000 - 500, true,
            'dep-' || (((i - 1) / 10) %% 5), CASE WHEN i %% 7 = 0 THEN 'timer' ELSE 'async' END,
            NULL::text, NULL::text, 'pi-' || (((i - 1) / 10) / 10 * 10)))
        WHEN i <= 60000 THEN jsonb_build_object('bpmn', jsonb_build_object(
            'process_instance_id', 'pi-' || ((i - 1) / 10),
            'root_process_instance_id', 'pi-' || (((i - 1) / 10) / 10 * 10),
            'process_definition_key', 'p', 'exclusive', true,
            'priority', (i * 7919) %% 1000 - 500,
            'job_type', CASE WHEN i %% 7 = 0 THEN 'timer' ELSE 'async' END,
            'deployment_id', 'dep-' || (((i - 1) / 10) %% 5)))
        WHEN i <= 80000 AND i %% 2 = 0 THEN jsonb_build_object('bpmn', jsonb_build_array(
            NULL::text, 'p', NULL::text, NULL::text, (i * 7919) %% 1000 - 500, true,
            'dep-' || (i %% 5), CASE WHEN i %% 7 = 0 THEN 'timer' ELSE 'async' END))
        WHEN i <= 80000 THEN jsonb_build_object('bpmn', jsonb_build_object(
            'process_definition_key', 'p', 'exclusive', true,
            'priority', (i * 7919) %% 1000 - 500,
            'job_type', CASE WHEN i %% 7 = 0 THEN 'timer' ELSE 'async' END,
            'deployment_id', 'dep-' || (i %% 5)))
        ELSE '{}'::jsonb
    END,
    1 + i %% 4, CASE WHEN i %% 3 = 0 THEN 'other' ELSE 'default' END, 'available',
    now() - (i %% 3600) * interval '1 second', 0
FROM generate_series(1, 100000) AS i;

INSERT INTO %[1]s.river_job (args, kind, max_attempts, metadata, priority, queue, state, scheduled_at, attempt, attempted_at)
SELECT
    '{}', 'kind_0', 25,
    jsonb_build_object('bpmn', jsonb_build_object('process_instance_id', 'pi-' || i, 'process_definition_key', 'p', 'exclusive', true)),
    1, 'default', 'running', now() - interval '2 hours', 1, now()
FROM generate_series(0, 99) AS i;

INSERT INTO %[1]s.river_bpmn_exclusive_lock (key, job_id, attempt, client_id, queue, locked_at)
SELECT %[1]s.river_bpmn_ctx_instance(metadata), id, 1, 'busy-client', 'default', now()
FROM %[1]s.river_job WHERE state = 'running';

INSERT INTO %[1]s.river_bpmn_exclusive_lock (key, client_id, queue, locked_at, released_at)
SELECT 'pi-' || i, 'busy-client', 'default', now(), now()
FROM generate_series(100, 5999) AS i;

ANALYZE %[1]s.river_job;
ANALYZE %[1]s.river_bpmn_exclusive_lock;`

// acquisitionCombinations returns every valid Acquisition: each ordering
// option on or off, a priority range (which needs ByPriority) on or off,
// deployment awareness on or off.
func acquisitionCombinations(rng priority.Range, deployments []string) []Acquisition {
	var combos []Acquisition
	for bits := range 32 {
		acq := Acquisition{ByPriority: bits&1 != 0, TimersFirst: bits&2 != 0, ByDueDate: bits&4 != 0}
		if bits&8 != 0 {
			if !acq.ByPriority {
				continue
			}
			r := rng
			acq.PriorityRange = &r
		}
		if bits&16 != 0 {
			acq.DeploymentAware, acq.Deployments = true, deployments
		}
		combos = append(combos, acq)
	}
	return combos
}

// orderIndex names the index that serves acq's order.
func orderIndex(acq Acquisition) string {
	suffix := ""
	if acq.ByPriority {
		suffix += "p"
	}
	if acq.TimersFirst {
		suffix += "t"
	}
	if acq.ByDueDate {
		suffix += "d"
	}
	if suffix == "" {
		return "river_job_prioritized_fetching_index"
	}
	return "river_bpmn_fetch_" + suffix
}

func acquisitionName(acq Acquisition) string {
	var parts []string
	for _, opt := range []struct {
		on   bool
		name string
	}{
		{acq.ByPriority, "ByPriority"}, {acq.TimersFirst, "TimersFirst"}, {acq.ByDueDate, "ByDueDate"},
		{acq.PriorityRange != nil, "PriorityRange"}, {acq.DeploymentAware, "DeploymentAware"},
	} {
		if opt.on {
			parts = append(parts, opt.name)
		}
	}
	if len(parts) == 0 {
		return "River"
	}
	return strings.Join(parts, "+")
}

var allScopes = []exclusive.Scope{exclusive.None, exclusive.ProcessInstance, exclusive.RootProcessInstance}

func scopeName(scope exclusive.Scope) string { return strings.ReplaceAll(scope.String(), " ", "_") }

// TestFetchPlansUseIndexes renders the fetch query of every combination of
// acquisition options under every exclusive scope (3 x 24 queries) and
// EXPLAINs each on 100,000 available jobs, both the plan PostgreSQL makes for
// given values and the generic plan it caches after a few executions: each
// reads the queue through the index of its order (River's, or migration
// riverbpmn/003's), probes the scope's head-of-key index (in River's order,
// or by priority for a by-priority client) and the lock table's primary key
// when exclusive, never sorts rows of river_job and never scans
// the table. The backlog is built once; each EXPLAIN takes milliseconds.
func TestFetchPlansUseIndexes(t *testing.T) {
	longtest.Skip(t)
	t.Parallel()
	ctx := context.Background()
	schema := exclSchema(t)
	pool := testPool(t)
	combos := acquisitionCombinations(priority.Range{Min: -100, Max: 300}, []string{"dep-1", "dep-2"})
	require.Len(t, combos, 24)
	// The fetch-order indexes the clients of these acquisitions create when
	// they start (EnableFetchOrderIndexes), before the backlog so that its
	// ANALYZE covers their expressions.
	engine, err := NewEngine(pool, &Config{Schema: schema})
	require.NoError(t, err)
	require.NoError(t, engine.EnableFetchOrderIndexes(ctx, combos...))
	// And the head-of-key indexes of both scopes (a client creates its
	// scope's).
	require.NoError(t, exclusiveHeadIndexes.enable(ctx, engine, exclusiveHeadIndexNames))
	_, err = pool.Exec(ctx, fmt.Sprintf(planBacklogSQL, pgx.Identifier{schema}.Sanitize()))
	require.NoError(t, err)
	conn, err := pool.Acquire(ctx)
	require.NoError(t, err)
	defer conn.Release()

	explained := 0
	for _, scope := range allScopes {
		for _, acq := range combos {
			for _, generic := range []bool{false, true} {
				name := fmt.Sprintf("%s/%s/generic=%t", scopeName(scope), acquisitionName(acq), generic)
				query := testFetchQuery(t, schema, scope, acq)
				types, args, literals := query.explainArgs(t)
				plan := explainPlan(ctx, t, conn, query.SQL, types, args, literals, generic)
				want := []string{orderIndex(acq)}
				if scope.Enabled() {
					want = append(want, headIndex(scope, acq), "river_bpmn_exclusive_lock_pkey")
				}
				t.Run(name, func(t *testing.T) {
					requireIndexedPlan(t, plan, want...)
					requireScanUses(t, plan, orderIndex(acq))
					if scope.Enabled() && !acq.FairByTenant {
						requireProbesUse(t, plan, want[1])
						requireProbesSeek(t, plan)
					}
					if os.Getenv("SHOW_PLANS") != "" {
						t.Logf("%s", plan)
					}
				})
				explained++
			}
		}
	}
	t.Logf("%d plans explained", explained)
}

// headIndex names the head-of-key index of scope (enforcing) for acq's
// order: migration 005's in River's order, migration 020's by priority
// alone, the on-demand one of ExclusiveHeadIndex otherwise.
func headIndex(scope exclusive.Scope, acq Acquisition) string {
	if name := ExclusiveHeadIndex(scope, acq); name != "" {
		return name
	}
	name := map[exclusive.Scope]string{
		exclusive.ProcessInstance:     "river_bpmn_job_exclusive_instance",
		exclusive.RootProcessInstance: "river_bpmn_job_exclusive_root",
	}[scope]
	if acq.ByPriority {
		name += "_p"
	}
	return name
}

// requireProbesUse checks that every head probe of the plan (the scans of
// river_job named earlier) reads index, the head-of-key index: a probe
// planned over an order index reads every waiting job of a priority.
func requireProbesUse(t *testing.T, plan planNode, index string) {
	t.Helper()
	probes := 0
	plan.walk(func(node planNode, _ []planNode) {
		if node.RelationName == "river_job" && strings.HasPrefix(node.Alias, "earlier") {
			probes++
			require.Equal(t, index, node.IndexName, "head probe %s reads the head-of-key index:\n%s", node.Alias, plan)
		}
	})
	require.NotZero(t, probes, "the plan has a head probe:\n%s", plan)
}

// requireProbesSeek checks that every head probe of the plan compares
// "comes before" as an index condition (a row comparison over the
// head-of-key index's columns: River's order, or ~priority then River's
// order, migration 020), so that the probe of a key's head stops at the
// key's first index entry instead of reading the rows of the jobs that
// follow it.
func requireProbesSeek(t *testing.T, plan planNode) {
	t.Helper()
	plan.walk(func(node planNode, _ []planNode) {
		if node.RelationName == "river_job" && strings.HasPrefix(node.Alias, "earlier") {
			require.Contains(t, node.IndexCond, "ROW(", "head probe %s seeks with its row comparison:\n%s", node.Alias, plan)
			require.NotContains(t, node.Filter, "ROW(", "head probe %s filters nothing of its order:\n%s", node.Alias, plan)
		}
	})
}

// requireScanUses checks that the plan's scan of the queue (the outermost
// scan of river_job that is neither a subplan nor a primary-key lookup)
// reads index.
func requireScanUses(t *testing.T, plan planNode, index string) {
	t.Helper()
	var scans []string
	plan.walk(func(node planNode, ancestors []planNode) {
		if node.RelationName != "river_job" || node.IndexName == "river_job_pkey" {
			return
		}
		for _, a := range append(ancestors, node) {
			if a.Relationship == "SubPlan" {
				return
			}
		}
		scans = append(scans, node.IndexName)
	})
	require.Contains(t, scans, index, "the queue is read through its order's index:\n%s", plan)
}
