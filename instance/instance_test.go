package instance_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river/riverdbtest"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/instance"
	"github.com/riverbpmn/riverbpmn/internal/longtest"
	"github.com/riverbpmn/riverbpmn/riverbpmntest"
	"github.com/riverbpmn/riverbpmn/search"
	"github.com/riverbpmn/riverbpmn/workflow"
)

// stepArgs is a job of activity "step" of process "order" in instance
// Instance, under root Root.
type stepArgs struct {
	Instance string `json:"instance"`
	Root     string `json:"root"`
	Parent   string `json:"parent"`
}

func (stepArgs) Kind() string { return "instance_test_step" }

func (a stepArgs) JobContext() workflow.JobContext {
	return workflow.JobContext{ProcessDefinitionKey: "order", ProcessInstanceID: a.Instance, ActivityID: "step",
		RootProcessInstanceID: a.Root, ParentProcessInstanceID: a.Parent}
}

func TestInstances(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	type testBundle struct {
		*riverbpmntest.Bundle
		instances *instance.Instances
	}

	setup := func(t *testing.T) *testBundle {
		t.Helper()
		schema := riverdbtest.TestSchema(ctx, t, riverbpmntest.Driver(t), nil)
		bundle := riverbpmntest.New(ctx, t, schema, nil)
		return &testBundle{Bundle: bundle, instances: bundle.Engine.Instances()}
	}

	insert := func(t *testing.T, bundle *testBundle, args stepArgs) int64 {
		t.Helper()
		res, err := bundle.Client.Insert(ctx, args, nil)
		require.NoError(t, err)
		return res.Job.ID
	}

	// bulkInstanceJobs inserts n scheduled jobs of process instance pi
	// straight into river_job (much faster than the client for 10,000 rows).
	bulkInstanceJobs := func(t *testing.T, bundle *testBundle, pi string, n int) {
		t.Helper()
		_, err := bundle.DBPool.Exec(ctx, fmt.Sprintf(`
INSERT INTO %s.river_job (args, kind, max_attempts, metadata, priority, queue, state, scheduled_at)
SELECT '{}', 'bulk', 25, jsonb_build_object('bpmn', jsonb_build_object('process_instance_id', $1::text, 'process_definition_key', 'bulk')),
    1, 'default', 'scheduled', now() + interval '1 day'
FROM generate_series(1, $2::integer)`, pgx.Identifier{bundle.Schema}.Sanitize()), pi, n)
		require.NoError(t, err)
	}

	// An instance's jobs come back by id, a page at a time; Next is empty
	// exactly on the last page. Another instance's jobs never appear.
	t.Run("Jobs", func(t *testing.T) {
		t.Parallel()
		bundle := setup(t)
		var ids []int64
		for range 3 {
			ids = append(ids, insert(t, bundle, stepArgs{Instance: "pi-1"}))
		}
		insert(t, bundle, stepArgs{Instance: "pi-2"})

		first, err := bundle.instances.Jobs(ctx, &instance.JobsParams{ProcessInstanceID: "pi-1", Limit: 2})
		require.NoError(t, err)
		require.Len(t, first.Items, 2)
		require.Equal(t, ids[0], first.Items[0].ID)
		require.NotEmpty(t, first.Next)
		rest, err := bundle.instances.Jobs(ctx, &instance.JobsParams{ProcessInstanceID: "pi-1", Limit: 2, After: first.Next})
		require.NoError(t, err)
		require.Len(t, rest.Items, 1)
		require.Equal(t, ids[2], rest.Items[0].ID)
		require.Empty(t, rest.Next)

		exact, err := bundle.instances.Jobs(ctx, &instance.JobsParams{ProcessInstanceID: "pi-1", Limit: 3})
		require.NoError(t, err)
		require.Len(t, exact.Items, 3)
		require.Empty(t, exact.Next, "a page that ends the list exactly names no next page")

		_, err = bundle.instances.Jobs(ctx, &instance.JobsParams{})
		require.ErrorContains(t, err, "instance: JobsParams.ProcessInstanceID is required")
		_, err = bundle.instances.Jobs(ctx, &instance.JobsParams{ProcessInstanceID: "pi-1", After: "x"})
		require.ErrorContains(t, err, `instance: ListParams.After "x"`)
		_, err = bundle.Engine.ProcessInstanceJobsPage(ctx, "", 0, 10)
		require.ErrorContains(t, err, "process_instance_id", "the deprecated forward keeps its error")
	})

	// The instances with jobs a filter selects are listed once on a page,
	// the one with the newest job first; Next leads to the rest and is empty
	// on the last page. (An instance can appear again on a later page, at an
	// older job: see search.Instances.)
	t.Run("List", func(t *testing.T) {
		t.Parallel()
		bundle := setup(t)
		insert(t, bundle, stepArgs{Instance: "order-1"})
		insert(t, bundle, stepArgs{Instance: "order-2"})
		insert(t, bundle, stepArgs{Instance: "order-3"})
		insert(t, bundle, stepArgs{Instance: "order-3"})
		insert(t, bundle, stepArgs{Instance: "invoice-1"})

		filter := search.Filter{InstancePrefix: "order-"}
		first, err := bundle.instances.List(ctx, &instance.ListParams{Filter: filter, Limit: 2})
		require.NoError(t, err)
		require.Equal(t, []string{"order-3", "order-2"}, []string{first.Items[0].ID, first.Items[1].ID})
		require.NotEmpty(t, first.Next)
		rest, err := bundle.instances.List(ctx, &instance.ListParams{Filter: filter, Limit: 2, After: first.Next})
		require.NoError(t, err)
		require.Len(t, rest.Items, 1)
		require.Equal(t, "order-1", rest.Items[0].ID)
		require.Empty(t, rest.Next)
	})

	// A root's call hierarchy nests each instance under its caller, and a
	// called instance's incident shows on its parent's and root's subtree.
	t.Run("Tree", func(t *testing.T) {
		t.Parallel()
		bundle := setup(t)
		insert(t, bundle, stepArgs{Instance: "root"})
		insert(t, bundle, stepArgs{Instance: "child", Root: "root", Parent: "root"})
		failed := insert(t, bundle, stepArgs{Instance: "grandchild", Root: "root", Parent: "child"})
		require.NoError(t, bundle.Engine.Jobs().SetRetries(ctx, failed, 0))

		tree, err := bundle.instances.Tree(ctx, &instance.TreeParams{Root: "root"})
		require.NoError(t, err)
		var shape []string
		for _, m := range tree {
			shape = append(shape, fmt.Sprintf("%d:%s:%d", m.Depth, m.ProcessInstanceID, m.SubtreeOpenIncidents))
		}
		require.Equal(t, []string{"0:root:1", "1:child:1", "2:grandchild:1"}, shape)
		_, err = bundle.instances.Tree(ctx, nil)
		require.ErrorContains(t, err, "instance: TreeParams.Root is required")
	})

	// Status lists the status of each job of the instance.
	t.Run("Status", func(t *testing.T) {
		t.Parallel()
		bundle := setup(t)
		id := insert(t, bundle, stepArgs{Instance: "pi-s"})
		statuses, err := bundle.instances.Status(ctx, "pi-s")
		require.NoError(t, err)
		require.Len(t, statuses, 1)
		require.Equal(t, id, statuses[0].JobID)
		none, err := bundle.instances.Status(ctx, "pi-none")
		require.NoError(t, err)
		require.Empty(t, none)
	})

	// Walking the pages of an instance with 10,000 jobs, in a table of
	// 100,000 others, lists each of its jobs once, in id order; a page is
	// never found by a sequential scan: a small instance's jobs come through
	// River's GIN index on metadata (migrations riverbpmn/012, 014); for a
	// deep page the planner may walk the primary key after the cursor
	// instead, when few jobs follow it.
	t.Run("JobsOfALargeInstance", func(t *testing.T) {
		longtest.Skip(t)
		t.Parallel()
		bundle := setup(t)
		bulkInstanceJobs(t, bundle, "other", 5_000)
		// 100,000 jobs of 10,000 other instances, in the compact form (the
		// instances' own are in the object form): a table where reading it
		// whole costs what it would in production.
		_, err := bundle.DBPool.Exec(ctx, fmt.Sprintf(`
INSERT INTO %s.river_job (args, kind, max_attempts, metadata, priority, queue, state, finalized_at)
SELECT '{}', 'bulk', 25, jsonb_build_object('bpmn', jsonb_build_array('done-' || (i %% 10000), 'bulk')),
    1, 'default', 'completed', now()
FROM generate_series(1, 100000) AS i`, pgx.Identifier{bundle.Schema}.Sanitize()))
		require.NoError(t, err)
		bulkInstanceJobs(t, bundle, "big", 10_000)
		bulkInstanceJobs(t, bundle, "small", 3)
		_, err = bundle.DBPool.Exec(ctx, "ANALYZE "+pgx.Identifier{bundle.Schema, "river_job"}.Sanitize())
		require.NoError(t, err)

		var ids []int64
		params := &instance.JobsParams{ProcessInstanceID: "big", Limit: 1000}
		for pages := 1; ; pages++ {
			require.LessOrEqual(t, pages, 10)
			res, err := bundle.instances.Jobs(ctx, params)
			require.NoError(t, err)
			for _, job := range res.Items {
				ids = append(ids, job.ID)
				require.Equal(t, "bulk", job.Kind)
			}
			if res.Next == "" {
				break
			}
			params.After = res.Next
		}
		require.Len(t, ids, 10_000)
		for i := 1; i < len(ids); i++ {
			require.Greater(t, ids[i], ids[i-1])
		}

		for _, args := range [][]any{{"big", ids[9_900], 51}, {"small", int64(0), 51}, {"big", int64(0), 51}} {
			rows, err := bundle.DBPool.Query(ctx, "EXPLAIN "+instance.JobsStatement(bundle.Schema), args...)
			require.NoError(t, err)
			plan, err := pgx.CollectRows(rows, pgx.RowTo[string])
			require.NoError(t, err)
			text := strings.Join(plan, "\n")
			require.NotContains(t, text, "Seq Scan", text)
			if args[0] == "small" {
				// Containment on the schema's form of the job context
				// (river_bpmn_ctx_has, migrations riverbpmn/016 and 028): a
				// scan of River's GIN index.
				require.Contains(t, text, "river_job_metadata_index", text)
			}
		}
	})
}
