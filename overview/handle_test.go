package overview_test

import (
	"context"
	"testing"
	"time"

	"github.com/riverqueue/river/riverdbtest"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/exclusive"
	"github.com/riverbpmn/riverbpmn/riverbpmntest"
	"github.com/riverbpmn/riverbpmn/workflow"
)

// overviewArgs is a job of one process definition.
type overviewArgs struct {
	Instance string `json:"instance"`
}

func (overviewArgs) Kind() string { return "overview_job" }

func (a overviewArgs) JobContext() workflow.JobContext {
	return workflow.JobContext{ProcessInstanceID: a.Instance, ProcessDefinitionKey: "overview_process"}
}

// TestOverviews tests the Overviews handle (workflow.Engine.Overviews).
func TestOverviews(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	setup := func(t *testing.T, config *workflow.Config) *riverbpmntest.Bundle {
		t.Helper()
		schema := riverdbtest.TestSchema(ctx, t, riverbpmntest.Driver(t), nil)
		return riverbpmntest.New(ctx, t, schema, &riverbpmntest.Opts{Config: config})
	}

	// Read counts the unfinished jobs on their definitions' row and in the
	// total, with one bucket per step of the window, the first starting at
	// the window's start truncated to the step; the deprecated
	// Engine.Overview reads the same.
	t.Run("Read", func(t *testing.T) {
		t.Parallel()
		bundle := setup(t, nil)
		for range 2 {
			_, err := bundle.Client.Insert(ctx, overviewArgs{Instance: "pi-1"}, nil)
			require.NoError(t, err)
		}
		before := time.Now().UTC().Add(-3 * time.Hour).Truncate(time.Hour)
		o, err := bundle.Engine.Overviews().Read(ctx, 3*time.Hour, time.Hour)
		require.NoError(t, err)
		after := time.Now().UTC().Add(-3 * time.Hour).Truncate(time.Hour)
		require.Equal(t, int64(2), o.Total.Available)
		require.Len(t, o.Rows, 1)
		require.Equal(t, "overview_process", o.Rows[0].ProcessDefinition)
		require.Equal(t, time.Hour, o.Step)
		require.Contains(t, []time.Time{before, after}, o.Since)
		require.NotEmpty(t, o.Buckets)

		old, err := bundle.Engine.Overview(ctx, 3*time.Hour, time.Hour)
		require.NoError(t, err)
		require.Equal(t, o.Total, old.Total)
	})

	// With the root scope in force a job waits on its root's key; the
	// figure is read either way, and a step that is not positive is
	// refused.
	t.Run("RootScopeAndStep", func(t *testing.T) {
		t.Parallel()
		bundle := setup(t, &workflow.Config{Exclusive: exclusive.Config{Scope: exclusive.RootProcessInstance}})
		_, err := bundle.Engine.Overviews().Read(ctx, time.Hour, 10*time.Minute)
		require.NoError(t, err)
		_, err = bundle.Engine.Overviews().Read(ctx, time.Hour, 0)
		require.ErrorContains(t, err, "step 0s must be positive")
	})

	// Without a pool Read fails with the engine's no-pool error.
	t.Run("NoPool", func(t *testing.T) {
		t.Parallel()
		engine, err := workflow.NewEngine(nil, nil)
		require.NoError(t, err)
		_, err = engine.Overviews().Read(ctx, time.Hour, time.Minute)
		require.ErrorContains(t, err, "no database pool")
	})
}
