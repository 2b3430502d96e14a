package main

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivershared/riversharedtest"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/workflow"
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
		code, out, errOut := runCLI(t, append([]string{"queues", "list", "--database-url", url, "--schema", schema, "--json"}, extra...)...)
		require.Equal(t, 0, code, errOut)
		var queues listOutput[queue]
		require.NoError(t, json.Unmarshal([]byte(out), &queues), out)
		return queues.Items
	}
	queues := list()
	require.Len(t, queues, 2)
	require.Equal(t, queue{Name: "billing", Recorded: true, Worked: true}, queues[0])
	require.Equal(t, queue{Name: "orphans", Available: 1}, queues[1], "no record: no client works it")

	code, out, errOut := runCLI(t, "queues", "pause", "billing", "--database-url", url, "--schema", schema)
	require.Equal(t, 0, code, errOut)
	require.Equal(t, "queue \"billing\" paused\n", out)
	queues = list()
	require.NotNil(t, queues[0].PausedAt)
	code, _, errOut = runCLI(t, "queues", "resume", "billing", "--database-url", url, "--schema", schema)
	require.Equal(t, 0, code, errOut)
	queues = list()
	require.Nil(t, queues[0].PausedAt)
	code, _, errOut = runCLI(t, "queues", "pause", "--database-url", url, "--schema", schema)
	require.Equal(t, exitUsage, code)
	require.Contains(t, errOut, "missing QUEUE")

	code, out, _ = runCLI(t, "queues", "list", "--database-url", url, "--schema", schema)
	require.Equal(t, 0, code)
	require.Contains(t, out, "NO CLIENT WORKS IT")
}

// TestOverviewCommand: overview counts a failed job and its incident on
// its definition's row and in the total, and in the last bucket.
func TestOverviewCommand(t *testing.T) {
	engine, schema := opsSetup(t)
	ctx := context.Background()
	client, err := workflow.NewClient(engine, &river.Config{TestOnly: true})
	require.NoError(t, err)
	res, err := client.Insert(ctx, opsArgs{Instance: "pi-ov"}, nil)
	require.NoError(t, err)
	require.NoError(t, engine.SetJobRetries(ctx, res.Job.ID, 0))
	_, err = client.Insert(ctx, opsArgs{Instance: "pi-ov"}, nil)
	require.NoError(t, err)

	code, out, errOut := runCLI(t, "overview", "--database-url", riversharedtest.TestDatabaseURL(), "--schema", schema, "--json")
	require.Equal(t, 0, code, errOut)
	var o struct {
		Total struct {
			Available int64 `json:"available"`
			Failed    int64 `json:"failed"`
			Incidents int64 `json:"incidents"`
		} `json:"total"`
		Buckets []struct {
			Failed          int64 `json:"failed"`
			IncidentsOpened int64 `json:"incidents_opened"`
		} `json:"buckets"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &o), out)
	require.Equal(t, int64(1), o.Total.Available)
	require.Equal(t, int64(1), o.Total.Failed)
	require.Equal(t, int64(1), o.Total.Incidents)
	last := o.Buckets[len(o.Buckets)-1]
	require.Equal(t, int64(1), last.Failed)
	require.Equal(t, int64(1), last.IncidentsOpened)

	code, out, errOut = runCLI(t, "overview", "--database-url", riversharedtest.TestDatabaseURL(), "--schema", schema, "--window", "1h", "--step", "5m")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "TOTAL")
	code, _, errOut = runCLI(t, "overview", "--database-url", riversharedtest.TestDatabaseURL(), "--schema", schema, "--window", "1h", "--step", "2h")
	require.Equal(t, exitError, code)
	require.Contains(t, errOut, "the step at most the window")
}
