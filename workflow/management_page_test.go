package workflow

import (
	"context"
	"testing"

	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"
)

func TestManagementPages(t *testing.T) {
	ctx := context.Background()
	engine, schema := testEngineWithConfig(t, &Config{
		ProcessDefinitions: []ProcessDefinition{{Key: "p"}, {Key: "excl_process"}},
		JobDefinitions: []JobDefinition{
			{ID: "def-a", ProcessDefinitionKey: "p", ActivityID: "act_a", Kind: "page_a"},
			{ID: "def-b", ProcessDefinitionKey: "p", ActivityID: "act_b", Kind: "page_b"},
			{ID: "def-c", ProcessDefinitionKey: "p", ActivityID: "act_c", Kind: "page_c"},
		},
	})
	require.NoError(t, engine.SyncJobDefinitions(ctx))
	client, err := NewClient(engine, &river.Config{Schema: schema, TestOnly: true})
	require.NoError(t, err)

	var discarded []int64
	for _, pi := range []string{"pi-1", "pi-2", "pi-3"} {
		res, err := client.Insert(ctx, exclArgs{Instance: pi}, nil)
		require.NoError(t, err)
		require.NoError(t, engine.SetJobRetries(ctx, res.Job.ID, 0))
		discarded = append(discarded, res.Job.ID)
	}
	first, err := engine.OpenIncidentsPage(ctx, 0, 2)
	require.NoError(t, err)
	require.Len(t, first, 2)
	require.Equal(t, discarded[0], first[0].JobID)
	rest, err := engine.OpenIncidentsPage(ctx, first[1].ID, 2)
	require.NoError(t, err)
	require.Len(t, rest, 1)
	require.Equal(t, discarded[2], rest[0].JobID)

	defs, err := engine.JobDefinitionsPage(ctx, "", 2)
	require.NoError(t, err)
	require.Len(t, defs, 2)
	require.Equal(t, []string{"def-a", "def-b"}, []string{defs[0].ID, defs[1].ID})
	defs, err = engine.JobDefinitionsPage(ctx, "def-b", 2)
	require.NoError(t, err)
	require.Len(t, defs, 1)
	require.Equal(t, "def-c", defs[0].ID)

	locks, err := engine.ExclusiveLocksPage(ctx, "", 10)
	require.NoError(t, err)
	require.Empty(t, locks)
	_, err = engine.OpenIncidentsPage(ctx, 0, MaxPageSize+1)
	require.ErrorContains(t, err, "ListParams.Limit must be 0 (default 100) to 1000, got 1001")

	timers, err := engine.ProcessInstanceTimersPage(ctx, "pi-1", 0, 10)
	require.NoError(t, err)
	require.Empty(t, timers)
}
