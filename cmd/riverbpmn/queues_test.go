package main

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river/rivershared/riversharedtest"
	"github.com/stretchr/testify/require"
)

// TestQueuesCommand: queues lists a queue River records and one with jobs
// it has no record of (no client works it), and pauses and resumes the
// recorded one with River's pause.
func TestQueuesCommand(t *testing.T) {
	ctx := context.Background()
	url, schema := migratedSchema(t)
	pool := riversharedtest.DBPool(ctx, t)
	_, err := pool.Exec(ctx, "INSERT INTO "+pgx.Identifier{schema, "river_queue"}.Sanitize()+" (name, created_at, metadata, updated_at) VALUES ('billing', now(), '{}', now())")
	require.NoError(t, err)
	_, err = pool.Exec(ctx, "INSERT INTO "+pgx.Identifier{schema, "river_job"}.Sanitize()+" (args, kind, max_attempts, priority, queue, state) VALUES ('{}', 'k', 3, 1, 'orphans', 'available')")
	require.NoError(t, err)

	type queue struct {
		Name      string  `json:"name"`
		Recorded  bool    `json:"recorded"`
		Worked    bool    `json:"worked"`
		PausedAt  *string `json:"paused_at"`
		Available int64   `json:"available"`
	}
	list := func(extra ...string) []queue {
		t.Helper()
		code, out, errOut := runCLI(t, append([]string{"queues", "--database-url", url, "--schema", schema, "--json"}, extra...)...)
		require.Equal(t, 0, code, errOut)
		var queues []queue
		require.NoError(t, json.Unmarshal([]byte(out), &queues), out)
		return queues
	}
	queues := list()
	require.Len(t, queues, 2)
	require.Equal(t, queue{Name: "billing", Recorded: true, Worked: true}, queues[0])
	require.Equal(t, queue{Name: "orphans", Available: 1}, queues[1], "no record: no client works it")

	queues = list("--pause", "billing")
	require.NotNil(t, queues[0].PausedAt)
	queues = list("--resume", "billing")
	require.Nil(t, queues[0].PausedAt)

	code, out, _ := runCLI(t, "queues", "--database-url", url, "--schema", schema)
	require.Equal(t, 0, code)
	require.Contains(t, out, "NO CLIENT WORKS IT")
}
