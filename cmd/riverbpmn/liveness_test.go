package main

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/riverqueue/river/rivershared/riversharedtest"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/liveness"
)

func TestClientSessionsCommand(t *testing.T) {
	ctx := context.Background()
	url, schema := migratedSchema(t)

	code, out, errOut := runCLI(t, "sessions", "list", "--database-url", url, "--schema", schema, "--json")
	require.Equal(t, 0, code, errOut)
	require.JSONEq(t, `{"items": []}`, out, "no session yet")

	pool := riversharedtest.DBPool(ctx, t)
	keeper := liveness.NewKeeper(liveness.Config{}, liveness.KeeperConfig{
		ConnConfig: pool.Config().ConnConfig.Copy(), Schema: schema, ClientID: "cli-client",
	})
	require.NoError(t, keeper.Open(ctx))

	code, out, errOut = runCLI(t, "sessions", "list", "--database-url", url, "--schema", schema, "--json")
	require.Equal(t, 0, code, errOut)
	var page listOutput[liveness.Session]
	require.NoError(t, json.Unmarshal([]byte(out), &page))
	sessions := page.Items
	require.Len(t, sessions, 1)
	require.Equal(t, "cli-client", sessions[0].ClientID)
	require.True(t, sessions[0].Alive)
	require.Nil(t, sessions[0].DeadSince)

	code, out, errOut = runCLI(t, "sessions", "list", "--database-url", url, "--schema", schema)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "cli-client")
	require.Contains(t, out, "true")

	keeper.Close(ctx)
	code, out, errOut = runCLI(t, "sessions", "list", "--database-url", url, "--schema", schema, "--json")
	require.Equal(t, 0, code, errOut)
	require.JSONEq(t, `{"items": []}`, out, "a clean stop deletes the session")
}
