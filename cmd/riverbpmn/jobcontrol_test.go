package main

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/events"
	"github.com/riverbpmn/riverbpmn/jobcontrol"
	"github.com/riverbpmn/riverbpmn/workflow"
)

// TestJobControlCommands runs progress, stop, events-enable, events and
// events-disable end to end on a migrated schema.
func TestJobControlCommands(t *testing.T) {
	ctx := context.Background()
	url, schema := migratedSchema(t)

	pool, err := pgxpool.New(ctx, url)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	engine, err := workflow.NewEngine(pool, &workflow.Config{Schema: schema})
	require.NoError(t, err)
	client, err := river.NewClient(engine.Driver(), &river.Config{
		Middleware: []rivertype.Middleware{engine.Middleware()}, Schema: schema,
	})
	require.NoError(t, err)
	jc := workflow.JobContext{ProcessInstanceID: "cli-pi", ProcessDefinitionKey: "cli_process"}
	res, err := client.Insert(ctx, noopArgs{}, jc.InsertOpts())
	require.NoError(t, err)
	id := strconv.FormatInt(res.Job.ID, 10)
	db := []string{"--database-url", url, "--schema", schema}

	code, out, errOut := runCLI(t, append([]string{"events-enable", "--json"}, db...)...)
	require.Equal(t, 0, code, errOut)
	require.JSONEq(t, `{"events_enabled": true}`, out)

	code, out, errOut = runCLI(t, append([]string{"progress", "--job", id}, db...)...)
	require.Equal(t, 0, code, errOut)
	require.Equal(t, "job "+id+" testworker_noop: QUEUED (available, attempt 0): no progress reported\n", out)

	code, out, errOut = runCLI(t, append([]string{"stop", "--job", id, "--json"}, db...)...)
	require.Equal(t, 0, code, errOut)
	var stop jobcontrol.StopResult
	require.NoError(t, json.Unmarshal([]byte(out), &stop))
	require.Equal(t, jobcontrol.StopResult{JobID: res.Job.ID, State: "available", Outcome: jobcontrol.StopAborted}, stop)

	code, out, errOut = runCLI(t, append([]string{"stop", "--instance", "cli-pi"}, db...)...)
	require.Equal(t, 0, code, errOut)
	require.Equal(t, "job "+id+" had already finished (cancelled); left as it is\n", out)

	code, out, errOut = runCLI(t, append([]string{"progress", "--instance", "cli-pi", "--json"}, db...)...)
	require.Equal(t, 0, code, errOut)
	var statuses []jobcontrol.JobStatus
	require.NoError(t, json.Unmarshal([]byte(out), &statuses))
	require.Len(t, statuses, 1)
	require.Equal(t, jobcontrol.Aborted, statuses[0].Status)

	code, out, errOut = runCLI(t, append([]string{"events", "--json"}, db...)...)
	require.Equal(t, 0, code, errOut)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 1, out)
	var ev events.Event
	require.NoError(t, json.Unmarshal([]byte(lines[0]), &ev))
	require.Equal(t, events.Aborted, ev.Status)
	require.Equal(t, res.Job.ID, ev.JobID)
	require.Equal(t, "cli-pi", ev.ProcessInstanceID)

	code, out, errOut = runCLI(t, append([]string{"events", "--instance", "other"}, db...)...)
	require.Equal(t, 0, code, errOut)
	require.Empty(t, out)

	code, out, errOut = runCLI(t, append([]string{"events-disable"}, db...)...)
	require.Equal(t, 0, code, errOut)
	require.Equal(t, "job status events: off\n", out)

	// Unknown ids: exit code 3; bad flags: a clear error.
	code, _, errOut = runCLI(t, append([]string{"stop", "--job", "987654321"}, db...)...)
	require.Equal(t, exitNotFound, code, errOut)
	require.Contains(t, errOut, "job 987654321")
	code, _, _ = runCLI(t, append([]string{"progress", "--job", "987654321"}, db...)...)
	require.Equal(t, exitNotFound, code)
	code, _, errOut = runCLI(t, append([]string{"stop"}, db...)...)
	require.Equal(t, exitError, code)
	require.Contains(t, errOut, "give --job ID or --instance ID")
	code, _, errOut = runCLI(t, append([]string{"events", "--from", "yesterday"}, db...)...)
	require.Equal(t, exitError, code)
	require.Contains(t, errOut, `--from: events: cursor "yesterday" is not of the form txid:id`)
	code, _, errOut = runCLI(t, append([]string{"events", "--subscription", "x"}, db...)...)
	require.Equal(t, exitError, code)
	require.Contains(t, errOut, "--subscription needs --follow")
}
