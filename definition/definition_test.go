package definition_test

import (
	"context"
	"testing"

	"github.com/riverqueue/river/riverdbtest"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/definition"
	"github.com/riverbpmn/riverbpmn/riverbpmntest"
	"github.com/riverbpmn/riverbpmn/workflow"
)

// shipArgs is a job of job definition "def-b" (activity "act_b" of process
// "p"), by its kind.
type shipArgs struct{}

func (shipArgs) Kind() string { return "definition_test_b" }

func (shipArgs) JobContext() workflow.JobContext {
	return workflow.JobContext{ProcessDefinitionKey: "p", ProcessInstanceID: "pi-1", ActivityID: "act_b"}
}

func TestDefinitions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	type testBundle struct {
		*riverbpmntest.Bundle
		definitions *definition.Definitions
	}

	setup := func(t *testing.T) *testBundle {
		t.Helper()
		schema := riverdbtest.TestSchema(ctx, t, riverbpmntest.Driver(t), nil)
		bundle := riverbpmntest.New(ctx, t, schema, &riverbpmntest.Opts{Config: &workflow.Config{
			ProcessDefinitions: []workflow.ProcessDefinition{{Key: "p"}},
			JobDefinitions: []workflow.JobDefinition{
				{ID: "def-c", ProcessDefinitionKey: "p", ActivityID: "act_c", Kind: "definition_test_c"},
				{ID: "def-a", ProcessDefinitionKey: "p", ActivityID: "act_a", Kind: "definition_test_a"},
				{ID: "def-b", ProcessDefinitionKey: "p", ActivityID: "act_b", Kind: "definition_test_b"},
			},
		}})
		return &testBundle{Bundle: bundle, definitions: bundle.Engine.Definitions()}
	}

	ids := func(items []*definition.Summary) []string {
		out := make([]string, len(items))
		for i, s := range items {
			out[i] = s.ID
		}
		return out
	}

	// Before Sync the declared definitions are listed from their
	// declarations (Stored false), by id; after it, as stored, with their
	// unfinished jobs counted. Next is empty exactly on the last page.
	t.Run("ListBeforeAndAfterSync", func(t *testing.T) {
		t.Parallel()
		bundle := setup(t)

		res, err := bundle.definitions.List(ctx, nil)
		require.NoError(t, err)
		require.Equal(t, []string{"def-a", "def-b", "def-c"}, ids(res.Items))
		require.False(t, res.Items[0].Stored)
		require.Empty(t, res.Next)

		require.NoError(t, bundle.definitions.Sync(ctx))
		_, err = bundle.Client.Insert(ctx, shipArgs{}, nil)
		require.NoError(t, err)

		first, err := bundle.definitions.List(ctx, &definition.ListParams{Limit: 2})
		require.NoError(t, err)
		require.Equal(t, []string{"def-a", "def-b"}, ids(first.Items))
		require.True(t, first.Items[1].Stored)
		require.EqualValues(t, 1, first.Items[1].UnfinishedJobs)
		require.Equal(t, "def-b", first.Next)
		rest, err := bundle.definitions.List(ctx, &definition.ListParams{Limit: 2, After: first.Next})
		require.NoError(t, err)
		require.Equal(t, []string{"def-c"}, ids(rest.Items))
		require.Empty(t, rest.Next)
	})

	// Paging over a mix of stored and not stored definitions gives each
	// once, by id: a definition stored by another engine (here: one that
	// declares only def-b) sits between the declared ones that are not.
	t.Run("ListMixed", func(t *testing.T) {
		t.Parallel()
		bundle := setup(t)
		other, err := workflow.NewEngine(bundle.DBPool, &workflow.Config{
			Schema:             bundle.Schema,
			ProcessDefinitions: []workflow.ProcessDefinition{{Key: "p"}},
			JobDefinitions:     []workflow.JobDefinition{{ID: "def-b", ProcessDefinitionKey: "p", ActivityID: "act_b", Kind: "definition_test_b"}},
		})
		require.NoError(t, err)
		require.NoError(t, other.Definitions().Sync(ctx))

		var listed []string
		stored := map[string]bool{}
		params := &definition.ListParams{Limit: 1}
		for {
			res, err := bundle.definitions.List(ctx, params)
			require.NoError(t, err)
			require.NotEmpty(t, res.Items)
			for _, s := range res.Items {
				listed = append(listed, s.ID)
				stored[s.ID] = s.Stored
			}
			if res.Next == "" {
				break
			}
			params.After = res.Next
		}
		require.Equal(t, []string{"def-a", "def-b", "def-c"}, listed)
		require.Equal(t, map[string]bool{"def-a": false, "def-b": true, "def-c": false}, stored)
	})

	// An overriding priority set with cascade rewrites the definition's
	// waiting jobs and is read back by Get; cleared, Get shows none. An
	// unknown id is ErrNotFound naming it.
	t.Run("OverridingPriority", func(t *testing.T) {
		t.Parallel()
		bundle := setup(t)
		require.NoError(t, bundle.definitions.Sync(ctx))
		res, err := bundle.Client.Insert(ctx, shipArgs{}, nil)
		require.NoError(t, err)

		cascade, err := bundle.definitions.SetOverridingPriority(ctx, "def-b", 42, true)
		require.NoError(t, err)
		require.EqualValues(t, 1, cascade.Rewritten)
		require.Equal(t, 1, cascade.Batches)
		job, err := bundle.Client.JobGet(ctx, res.Job.ID)
		require.NoError(t, err)
		jc, err := workflow.JobContextOf(job)
		require.NoError(t, err)
		require.EqualValues(t, 42, *jc.Priority)

		state, err := bundle.definitions.Get(ctx, "def-b")
		require.NoError(t, err)
		require.EqualValues(t, 42, *state.OverridingPriority)
		require.NoError(t, bundle.definitions.ClearOverridingPriority(ctx, "def-b"))
		state, err = bundle.definitions.Get(ctx, "def-b")
		require.NoError(t, err)
		require.Nil(t, state.OverridingPriority)

		noCascade, err := bundle.definitions.SetOverridingPriority(ctx, "def-a", 1, false)
		require.NoError(t, err)
		require.Nil(t, noCascade)

		_, err = bundle.definitions.Get(ctx, "nope")
		require.ErrorIs(t, err, definition.ErrNotFound)
		require.ErrorContains(t, err, `job definition "nope"`)
		_, err = bundle.definitions.SetOverridingPriority(ctx, "nope", 1, false)
		require.ErrorIs(t, err, definition.ErrNotFound)
		require.ErrorIs(t, bundle.Engine.ClearOverridingJobPriority(ctx, "nope"), workflow.ErrNotFound, "the deprecated forward keeps its error")
	})

	// A cursor longer than any job definition id is refused naming the
	// field and the value.
	t.Run("BadCursor", func(t *testing.T) {
		t.Parallel()
		bundle := setup(t)
		long := string(make([]byte, definition.MaxIDBytes+1))
		_, err := bundle.definitions.List(ctx, &definition.ListParams{After: long})
		require.ErrorContains(t, err, "definition: ListParams.After")
	})
}
