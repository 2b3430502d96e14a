package workflow

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/exclusive"
	"github.com/riverbpmn/riverbpmn/index"
	"github.com/riverbpmn/riverbpmn/priority"
)

// TestFetchOrderIndexesOnDemand: a migrated schema has no fetch-order index
// (an insert pays for none until a client fetches in such an order); a
// client's start creates its own order's index only, a client in River's
// order none; clients starting together build an index once and all
// succeed; an index left invalid is built again; DisableFetchOrderIndexes
// drops them all.
func TestFetchOrderIndexesOnDemand(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testPool(t)
	schema := exclSchema(t)
	engine, err := NewEngine(pool, &Config{Schema: schema})
	require.NoError(t, err)
	requireIndexes := func(t *testing.T, want ...string) {
		t.Helper()
		got, err := engine.FetchOrderIndexes(ctx)
		require.NoError(t, err)
		require.ElementsMatch(t, want, got)
	}
	// riverdbtest may hand out a schema another test enabled: start clean.
	require.NoError(t, engine.DisableFetchOrderIndexes(ctx))
	requireIndexes(t)

	require.Empty(t, FetchOrderIndex(Acquisition{PriorityRange: &priority.Range{Min: 0, Max: 9}}), "River's order: River's index")
	require.Equal(t, "river_bpmn_fetch_ptd", FetchOrderIndex(Acquisition{ByPriority: true, TimersFirst: true, ByDueDate: true}))

	startClient := func(acq Acquisition) {
		t.Helper()
		driver, err := engine.NewDriver(acq)
		require.NoError(t, err)
		workers := river.NewWorkers()
		river.AddWorker(workers, &exclWorker{rec: newExclRecorder(0)})
		client, err := river.NewClient(driver, &river.Config{
			Logger:     slog.New(slog.DiscardHandler),
			Middleware: []rivertype.Middleware{engine.Middleware()},
			Queues:     map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 1}},
			Schema:     schema,
			TestOnly:   true,
			Workers:    workers,
		})
		require.NoError(t, err)
		require.NoError(t, client.Start(ctx))
		t.Cleanup(func() { require.NoError(t, client.Stop(ctx)) })
	}
	startClient(Acquisition{DeploymentAware: true})
	requireIndexes(t) // River's order, with a filter: River's own index
	startClient(Acquisition{ByPriority: true})
	requireIndexes(t, "river_bpmn_fetch_p") // by priority alone: migration 020's head-of-key index
	startClient(Acquisition{ByPriority: true, ByDueDate: true, PriorityRange: &priority.Range{Min: 0, Max: 9}})
	// Its order's, and the head-of-key index of its order for the scope
	// in force (the engine's, ProcessInstance).
	requireIndexes(t, "river_bpmn_fetch_p", "river_bpmn_fetch_pd", "river_bpmn_job_exclusive_instance_pd")
	startClient(Acquisition{ByPriority: true, ByDueDate: true})
	requireIndexes(t, "river_bpmn_fetch_p", "river_bpmn_fetch_pd", "river_bpmn_job_exclusive_instance_pd") // found, not built again
	// A fair client reads its tenant index, and the head-of-key index of
	// its order.
	startClient(Acquisition{TimersFirst: true, ByDueDate: true, FairByTenant: true})
	requireIndexes(t, "river_bpmn_fetch_p", "river_bpmn_fetch_pd", "river_bpmn_job_exclusive_instance_pd", "river_bpmn_job_exclusive_instance_td")
	require.NoError(t, engine.DisableTenantFairness(ctx))
	require.NoError(t, engine.DisableFetchOrderIndexes(ctx))
	requireIndexes(t)

	// Eight clients of one order start together: one builds, the others
	// wait for it and find it valid (without the schema's index lock, the
	// later ones would drop the half-built index as an invalid leftover and
	// fail or build it again).
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() { errs[i] = engine.EnableFetchOrderIndexes(ctx, Acquisition{TimersFirst: true}) })
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	requireIndexes(t, "river_bpmn_fetch_t", "river_bpmn_job_exclusive_instance_t")

	// An index left invalid (as by an interrupted concurrent build) is not
	// counted, and is built again.
	_, err = pool.Exec(ctx, `UPDATE pg_index SET indisvalid = false WHERE indexrelid = $1::regclass`,
		pgx.Identifier{schema, "river_bpmn_fetch_t"}.Sanitize())
	require.NoError(t, err)
	requireIndexes(t, "river_bpmn_job_exclusive_instance_t")
	require.NoError(t, engine.EnableFetchOrderIndexes(ctx, Acquisition{TimersFirst: true}))
	requireIndexes(t, "river_bpmn_fetch_t", "river_bpmn_job_exclusive_instance_t")

	combos := acquisitionCombinations(priority.Range{Min: 0, Max: 1}, nil)
	require.NoError(t, engine.EnableFetchOrderIndexes(ctx, combos...))
	var instanceHeads []string
	for _, acq := range combos {
		if name := ExclusiveHeadIndex(exclusive.ProcessInstance, acq); name != "" && !slices.Contains(instanceHeads, name) {
			instanceHeads = append(instanceHeads, name)
		}
	}
	require.Len(t, instanceHeads, 6)
	requireIndexes(t, append(index.FetchOrder.Names(), instanceHeads...)...)
	require.NoError(t, engine.DisableFetchOrderIndexes(ctx))
	requireIndexes(t)
}

// TestExclusiveHeadIndexNames: an on-demand head-of-key index exists for
// each enforcing scope and order with timers first or due date, none for
// River's order, by priority alone (migrations' indexes) or without
// exclusivity; filters choose no index; every name has its statements.
func TestExclusiveHeadIndexNames(t *testing.T) {
	t.Parallel()
	require.Empty(t, ExclusiveHeadIndex(exclusive.ProcessInstance, Acquisition{}))
	require.Empty(t, ExclusiveHeadIndex(exclusive.ProcessInstance, Acquisition{ByPriority: true, PriorityRange: &priority.Range{Min: 0, Max: 1}}))
	require.Empty(t, ExclusiveHeadIndex(exclusive.None, Acquisition{TimersFirst: true}))
	require.Equal(t, "river_bpmn_job_exclusive_instance_ptd", ExclusiveHeadIndex(exclusive.ProcessInstance, Acquisition{ByPriority: true, TimersFirst: true, ByDueDate: true, DeploymentAware: true}))
	require.Equal(t, "river_bpmn_job_exclusive_root_d", ExclusiveHeadIndex(exclusive.RootProcessInstance, Acquisition{ByDueDate: true}))
	require.Len(t, exclusiveHeadIndexNames, 12)
	for _, name := range exclusiveHeadIndexNames {
		require.Contains(t, exclusiveHeadIndexes.CreateStatement(name), "CREATE INDEX CONCURRENTLY IF NOT EXISTS "+name+" ")
		require.True(t, strings.HasSuffix(strings.TrimSuffix(strings.TrimSpace(exclusiveHeadIndexes.DropStatement(name)), ";"), "*/"+name), exclusiveHeadIndexes.DropStatement(name))
	}
}
