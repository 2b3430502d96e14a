package index_test

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdbtest"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/index"
	"github.com/riverbpmn/riverbpmn/riverbpmntest"
	"github.com/riverbpmn/riverbpmn/workflow"
)

type noopArgs struct{}

func (noopArgs) Kind() string { return "index_test_noop" }

type noopWorker struct {
	river.WorkerDefaults[noopArgs]
}

func (noopWorker) Work(context.Context, *river.Job[noopArgs]) error { return nil }

func TestIndexes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	type testBundle struct {
		*riverbpmntest.Bundle
		indexes *index.Indexes
	}

	setup := func(t *testing.T) *testBundle {
		t.Helper()
		schema := riverdbtest.TestSchema(ctx, t, riverbpmntest.Driver(t), nil)
		bundle := riverbpmntest.New(ctx, t, schema, nil)
		indexes := bundle.Engine.Indexes()
		// riverdbtest may hand out a schema another test enabled: start
		// clean.
		all, err := indexes.List(ctx, &index.ListParams{Limit: 1000})
		require.NoError(t, err)
		var names []string
		for _, in := range all.Items {
			names = append(names, in.Name)
		}
		require.NoError(t, indexes.Disable(ctx, names...))
		return &testBundle{Bundle: bundle, indexes: indexes}
	}

	enabled := func(t *testing.T, bundle *testBundle) []string {
		t.Helper()
		res, err := bundle.indexes.List(ctx, &index.ListParams{Enabled: true})
		require.NoError(t, err)
		var names []string
		for _, in := range res.Items {
			names = append(names, in.Name)
		}
		return names
	}

	// startClient starts a client whose acquisition is acq, which builds
	// the indexes its fetch reads.
	startClient := func(t *testing.T, bundle *testBundle, acq workflow.Acquisition) {
		t.Helper()
		driver, err := bundle.Engine.NewDriver(acq)
		require.NoError(t, err)
		workers := river.NewWorkers()
		river.AddWorker(workers, &noopWorker{})
		config, err := bundle.Engine.ClientConfig(&river.Config{
			Queues:   map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 1}},
			Schema:   bundle.Schema,
			TestOnly: true,
			Workers:  workers,
		})
		require.NoError(t, err)
		client, err := driver.NewClient(config)
		require.NoError(t, err)
		require.NoError(t, client.Start(ctx))
		t.Cleanup(func() { require.NoError(t, client.Stop(ctx)) })
	}

	// A migrated schema has no on-demand index (an insert pays for none
	// until a client fetches in such an order); a client's start creates
	// its own order's indexes only, a client in River's order none; List
	// shows every index of every family with whether it is enabled, and
	// Disable drops them.
	t.Run("OnDemand", func(t *testing.T) {
		t.Parallel()
		bundle := setup(t)
		require.Empty(t, enabled(t, bundle))

		startClient(t, bundle, workflow.Acquisition{DeploymentAware: true})
		require.Empty(t, enabled(t, bundle), "River's order, with a filter: River's own index")
		startClient(t, bundle, workflow.Acquisition{ByPriority: true, ByDueDate: true})
		// Its order's, and the head-of-key index of its order for the
		// scope in force (the engine's, ProcessInstance).
		require.Equal(t, []string{"river_bpmn_fetch_pd", "river_bpmn_job_exclusive_instance_pd"}, enabled(t, bundle))
		startClient(t, bundle, workflow.Acquisition{TimersFirst: true, ByDueDate: true, FairByTenant: true})
		require.Equal(t, []string{"river_bpmn_fetch_pd", "river_bpmn_fetch_tenant_td", "river_bpmn_job_exclusive_instance_pd", "river_bpmn_job_exclusive_instance_td"},
			enabled(t, bundle), "a fair client reads its tenant index, and the head-of-key index of its order")

		all, err := bundle.indexes.List(ctx, &index.ListParams{Family: index.TenantFairness.Name()})
		require.NoError(t, err)
		require.Len(t, all.Items, len(index.TenantFairness.Names()), "every index of the family, enabled or not")
		for _, in := range all.Items {
			require.Equal(t, in.Name == "river_bpmn_fetch_tenant_td", in.Enabled, in.Name)
			require.Equal(t, "tenant-fairness", in.Family)
		}

		require.NoError(t, bundle.indexes.Disable(ctx, "river_bpmn_fetch_tenant_td", "river_bpmn_fetch_pd"))
		require.Equal(t, []string{"river_bpmn_job_exclusive_instance_pd", "river_bpmn_job_exclusive_instance_td"}, enabled(t, bundle))
	})

	// Eight callers enabling one index together: one builds, the others
	// wait for it and find it valid (without the schema's index lock, the
	// later ones would drop the half-built index as an invalid leftover and
	// fail or build it again). An index left invalid (as by an interrupted
	// concurrent build) is not counted, and is built again.
	t.Run("TogetherAndInvalid", func(t *testing.T) {
		t.Parallel()
		bundle := setup(t)
		var wg sync.WaitGroup
		errs := make([]error, 8)
		for i := range errs {
			wg.Go(func() { errs[i] = bundle.indexes.Enable(ctx, "river_bpmn_fetch_t") })
		}
		wg.Wait()
		for _, err := range errs {
			require.NoError(t, err)
		}
		require.Equal(t, []string{"river_bpmn_fetch_t"}, enabled(t, bundle))

		_, err := bundle.DBPool.Exec(ctx, `UPDATE pg_index SET indisvalid = false WHERE indexrelid = $1::regclass`,
			pgx.Identifier{bundle.Schema, "river_bpmn_fetch_t"}.Sanitize())
		require.NoError(t, err)
		require.Empty(t, enabled(t, bundle))
		require.NoError(t, bundle.indexes.Enable(ctx, "river_bpmn_fetch_t"))
		require.Equal(t, []string{"river_bpmn_fetch_t"}, enabled(t, bundle))
	})

	// Pages of the listing go by name with a cursor; Next is empty exactly
	// on the last page. Unknown names, families and cursors are refused
	// naming the value, before anything is built.
	t.Run("ListPagesAndBadInput", func(t *testing.T) {
		t.Parallel()
		bundle := setup(t)
		var names []string
		params := &index.ListParams{Family: index.FetchOrder.Name(), Limit: 3}
		for {
			res, err := bundle.indexes.List(ctx, params)
			require.NoError(t, err)
			require.NotEmpty(t, res.Items)
			for _, in := range res.Items {
				names = append(names, in.Name)
			}
			if res.Next == "" {
				break
			}
			params.After = res.Next
		}
		want := index.FetchOrder.Names()
		slices.Sort(want)
		require.Equal(t, want, names, "each index once, by name")

		require.ErrorContains(t, bundle.indexes.Enable(ctx, "river_bpmn_fetch_t", "river_job_kind"), `index: "river_job_kind" is not an on-demand index`)
		require.Empty(t, enabled(t, bundle), "nothing built")
		_, err := bundle.indexes.List(ctx, &index.ListParams{Family: "fetch"})
		require.ErrorContains(t, err, `index: ListParams.Family "fetch" is not a family of indexes`)
		_, err = bundle.indexes.List(ctx, &index.ListParams{After: "x"})
		require.ErrorContains(t, err, `index: ListParams.After "x"`)
	})
}
