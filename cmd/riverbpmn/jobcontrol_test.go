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

// TestJobControlCommands runs progress, stop, events-enable, events,
// events-disable and events-prune end to end on a migrated schema.
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

	code, out, errOut := runCLI(t, append([]string{"events", "enable", "--json"}, db...)...)
	require.Equal(t, 0, code, errOut)
	require.JSONEq(t, `{"events_enabled": true}`, out)

	code, out, errOut = runCLI(t, append([]string{"jobs", "status", id}, db...)...)
	require.Equal(t, 0, code, errOut)
	require.Equal(t, "job "+id+" testworker_noop: QUEUED (available, attempt 0): no progress reported\n", out)

	code, out, errOut = runCLI(t, append([]string{"jobs", "stop", id, "--json"}, db...)...)
	require.Equal(t, 0, code, errOut)
	var stop jobcontrol.StopResult
	require.NoError(t, json.Unmarshal([]byte(out), &stop))
	require.Equal(t, jobcontrol.StopResult{JobID: res.Job.ID, State: "available", Outcome: jobcontrol.StopAborted}, stop)

	code, out, errOut = runCLI(t, append([]string{"instances", "stop", "cli-pi"}, db...)...)
	require.Equal(t, 0, code, errOut)
	require.Equal(t, "job "+id+" had already finished (cancelled); left as it is\n", out)

	code, out, errOut = runCLI(t, append([]string{"instances", "status", "--process-instance", "cli-pi", "--json"}, db...)...)
	require.Equal(t, 0, code, errOut)
	var statuses []jobcontrol.JobStatus
	require.NoError(t, json.Unmarshal([]byte(out), &statuses))
	require.Len(t, statuses, 1)
	require.Equal(t, jobcontrol.Aborted, statuses[0].Status)

	code, out, errOut = runCLI(t, append([]string{"events", "read", "--json"}, db...)...)
	require.Equal(t, 0, code, errOut)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 1, out)
	var ev events.Event
	require.NoError(t, json.Unmarshal([]byte(lines[0]), &ev))
	require.Equal(t, events.Aborted, ev.Status)
	require.Equal(t, res.Job.ID, ev.JobID)
	require.Equal(t, "cli-pi", ev.ProcessInstanceID)

	code, out, errOut = runCLI(t, append([]string{"events", "read", "--instance", "other"}, db...)...)
	require.Equal(t, 0, code, errOut)
	require.Empty(t, out)

	// Newest first, one page (the console's Events page).
	var page listOutput[events.Event]
	code, out, errOut = runCLI(t, append([]string{"events", "list", "--limit", "10", "--json"}, db...)...)
	require.Equal(t, 0, code, errOut)
	require.NoError(t, json.Unmarshal([]byte(out), &page))
	require.Len(t, page.Items, 1)
	require.Equal(t, ev.Cursor, page.Items[0].Cursor)
	require.Empty(t, page.Next)
	code, out, errOut = runCLI(t, append([]string{"events", "list", "--process-instance", "cli-pi"}, db...)...)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "ABORTED")
	require.Contains(t, out, "cli-pi")
	code, out, errOut = runCLI(t, append([]string{"events", "list", "--after", ev.Cursor.String()}, db...)...)
	require.Equal(t, 0, code, errOut)
	require.Equal(t, "nothing after "+ev.Cursor.String()+"\n", out)
	code, _, errOut = runCLI(t, append([]string{"events", "list", "--limit", "-1"}, db...)...)
	require.Equal(t, exitUsage, code)
	require.Contains(t, errOut, "limit -1 is out of range")
	code, _, errOut = runCLI(t, append([]string{"events", "list", "--follow"}, db...)...)
	require.Equal(t, exitUsage, code)
	require.Contains(t, errOut, "flag provided but not defined: -follow")

	code, out, errOut = runCLI(t, append([]string{"events", "disable"}, db...)...)
	require.Equal(t, 0, code, errOut)
	require.Equal(t, "job status events: off\n", out)

	// What was written is pruned with --older-than 0s (kept by the default
	// 24 h).
	code, out, errOut = runCLI(t, append([]string{"events", "prune"}, db...)...)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "deleted 0 event(s)")
	code, out, errOut = runCLI(t, append([]string{"events", "prune", "--older-than", "0s"}, db...)...)
	require.Equal(t, 0, code, errOut)
	require.NotContains(t, out, "deleted 0 ")
	code, out, errOut = runCLI(t, append([]string{"events", "read"}, db...)...)
	require.Equal(t, 0, code, errOut)
	require.Empty(t, out)
	// A position before the pruned event: the loss is an error, or with
	// --skip-pruned a warning on stderr.
	before := events.Cursor{TxID: ev.Cursor.TxID, ID: ev.Cursor.ID - 1}.String()
	code, out, errOut = runCLI(t, append([]string{"events", "read", "--from", before}, db...)...)
	require.Equal(t, exitError, code)
	require.Empty(t, out)
	require.Contains(t, errOut, "events after cursor "+before+" were pruned before they were read (pruned through "+ev.Cursor.String())
	code, out, errOut = runCLI(t, append([]string{"events", "read", "--from", before, "--skip-pruned"}, db...)...)
	require.Equal(t, 0, code, errOut)
	require.Empty(t, out)
	require.Contains(t, errOut, "skipping them (--skip-pruned)")

	// Unknown ids: exit code 3; bad flags: a clear error.
	code, _, errOut = runCLI(t, append([]string{"jobs", "stop", "987654321"}, db...)...)
	require.Equal(t, exitNotFound, code, errOut)
	require.Contains(t, errOut, "job 987654321")
	code, _, _ = runCLI(t, append([]string{"jobs", "status", "987654321"}, db...)...)
	require.Equal(t, exitNotFound, code)
	code, _, errOut = runCLI(t, append([]string{"jobs", "stop"}, db...)...)
	require.Equal(t, exitUsage, code)
	require.Contains(t, errOut, "missing JOB_ID")
	code, _, errOut = runCLI(t, append([]string{"events", "read", "--from", "yesterday"}, db...)...)
	require.Equal(t, exitUsage, code)
	require.Contains(t, errOut, `--from: events: cursor "yesterday" is not of the form txid:id`)
	code, _, errOut = runCLI(t, append([]string{"events", "read", "--subscription", "x"}, db...)...)
	require.Equal(t, exitUsage, code)
	require.Contains(t, errOut, "flag provided but not defined: -subscription", "a subscription follows")
}
