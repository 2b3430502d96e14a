package bulk_test

import (
	"fmt"
	"testing"

	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/bulk"
	"github.com/riverbpmn/riverbpmn/workflow"
)

// TestOperations tests the bulk operations of the engine's bulk handle
// (workflow.Engine.Bulk): an operation recorded by Create is run by Run to
// its end, its outcome read back by Get; List pages through the operations
// newest first, its last page's Next empty (never a next page that comes
// back empty); an unknown id wraps workflow.ErrNotFound and a foreign
// cursor is refused naming the field and the value.
func TestOperations(t *testing.T) {
	t.Parallel()

	setup := func(t *testing.T) (*env, []int64) {
		t.Helper()
		e := newEnv(t)
		client, err := workflow.NewClient(e.engine, &river.Config{Schema: e.schema, TestOnly: true})
		require.NoError(t, err)
		var ids []int64
		for i := range 4 {
			jc := workflow.JobContext{ProcessInstanceID: fmt.Sprintf("op-%d", i), ProcessDefinitionKey: "invoice"}
			res, err := client.Insert(e.ctx, bulkArgs{}, jc.InsertOpts())
			require.NoError(t, err)
			ids = append(ids, res.Job.ID)
		}
		return e, ids
	}

	t.Run("CreateRunGet", func(t *testing.T) {
		t.Parallel()
		e, ids := setup(t)
		ops := e.engine.Bulk()
		op, err := ops.Create(e.ctx, &bulk.Spec{Action: bulk.ActionSuspend, Jobs: &bulk.Jobs{JobIDs: ids}}, "suspend 4 jobs", "test-owner")
		require.NoError(t, err)
		require.Equal(t, "running", op.State)
		require.NoError(t, ops.Run(e.ctx, op, "test-owner"))
		got, err := ops.Get(e.ctx, op.ID)
		require.NoError(t, err)
		require.Equal(t, "finished", got.State)
		require.Equal(t, 4, got.Progress.Changed)
		require.Equal(t, 4, e.count(t, `SELECT count(*) FROM %[1]s.river_job WHERE state = 'pending'`))

		_, err = ops.Get(e.ctx, 1<<40)
		require.ErrorIs(t, err, bulk.ErrNoOperation)
		require.ErrorIs(t, err, workflow.ErrNotFound)
	})

	t.Run("List", func(t *testing.T) {
		t.Parallel()
		e, ids := setup(t)
		ops := e.engine.Bulk()
		var created []int64
		for i := range 5 {
			op, err := ops.Create(e.ctx, &bulk.Spec{Action: bulk.ActionActivate, Jobs: &bulk.Jobs{JobIDs: ids[:1]}}, fmt.Sprintf("activate %d", i), "test-owner")
			require.NoError(t, err)
			created = append([]int64{op.ID}, created...) // newest first
		}
		for _, limit := range []int{2, 5} {
			var got []int64
			params := &bulk.ListParams{Limit: limit}
			for pages := 1; ; pages++ {
				res, err := ops.List(e.ctx, params)
				require.NoError(t, err)
				require.NotEmpty(t, res.Items, "limit %d: page %d is not empty", limit, pages)
				for _, op := range res.Items {
					got = append(got, op.ID)
				}
				if res.Next == "" {
					require.Equal(t, (5+limit-1)/limit, pages, "limit %d", limit)
					break
				}
				params.After = res.Next
			}
			require.Equal(t, created, got, "limit %d", limit)
		}
		_, err := ops.List(e.ctx, &bulk.ListParams{After: "-3"})
		require.ErrorContains(t, err, `bulk: ListParams.After "-3" is not a cursor`)
	})
}
