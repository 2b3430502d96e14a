package main

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivershared/riversharedtest"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/handlers"
	"github.com/riverbpmn/riverbpmn/workflow"
)

type cliTimerArgs struct{}

func (cliTimerArgs) Kind() string { return "cli_timer" }

func TestTimerCommands(t *testing.T) {
	ctx := context.Background()
	url, schema := migratedSchema(t)

	pool := riversharedtest.DBPool(ctx, t)
	engine, err := workflow.NewEngine(pool, &workflow.Config{Schema: schema})
	require.NoError(t, err)
	client, err := river.NewClient(engine.Driver(), &river.Config{Schema: schema, Middleware: []rivertype.Middleware{engine.Middleware()}})
	require.NoError(t, err)
	timers := handlers.NewTimers(pool, &handlers.TimersConfig{Schema: schema})
	tx, err := pool.Begin(ctx)
	require.NoError(t, err)
	jc := workflow.JobContext{ProcessInstanceID: "cli-1", ProcessDefinitionKey: "cli", ActivityID: "wait"}
	res, err := timers.InsertTx(ctx, client, tx, cliTimerArgs{}, handlers.Timer{Cycle: "R3/PT1H"}, jc.InsertOpts())
	require.NoError(t, err)
	require.NoError(t, tx.Commit(ctx))
	id := fmt.Sprint(res.TimerID)

	code, out, errOut := runCLI(t, "instances", "timers", "--database-url", url, "--schema", schema, "cli-1", "--json")
	require.Equal(t, 0, code, errOut)
	var page listOutput[workflow.TimerInfo]
	require.NoError(t, json.Unmarshal([]byte(out), &page), out)
	listed := page.Items
	require.Len(t, listed, 1)
	require.Equal(t, res.TimerID, listed[0].ID)
	require.Equal(t, "R3/PT1H", listed[0].Definition)
	require.Equal(t, "wait", listed[0].ActivityID)
	require.Equal(t, int64(2), *listed[0].RepetitionsLeft)
	require.WithinDuration(t, res.DueAt, *listed[0].NextDueAt, time.Microsecond)

	code, out, errOut = runCLI(t, "instances", "timers", "--database-url", url, "--schema", schema, "cli-1")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "R3/PT1H")
	require.Contains(t, out, "NEXT DUE")

	code, out, errOut = runCLI(t, "timers", "show", "--database-url", url, "--schema", schema, "--timer", id, "--json")
	require.Equal(t, 0, code, errOut)
	var one workflow.TimerInfo
	require.NoError(t, json.Unmarshal([]byte(out), &one), out)
	require.Equal(t, listed[0], one)

	// The ids may also be given positionally, like the operator verbs take
	// theirs, with flags before or after them.
	code, out, errOut = runCLI(t, "timers", "show", id, "--database-url", url, "--schema", schema, "--json")
	require.Equal(t, 0, code, errOut)
	var positional workflow.TimerInfo
	require.NoError(t, json.Unmarshal([]byte(out), &positional), out)
	require.Equal(t, listed[0], positional)
	code, out, errOut = runCLI(t, "timers", "list", "--database-url", url, "--schema", schema, "--json")
	require.Equal(t, 0, code, errOut)
	var all listOutput[workflow.TimerInfo]
	require.NoError(t, json.Unmarshal([]byte(out), &all), out)
	require.Equal(t, listed, all.Items, "the instance's timer is the schema's one timer")
	code, _, errOut = runCLI(t, "timers", "show", id, "--timer", id, "--database-url", url, "--schema", schema)
	require.Equal(t, exitUsage, code)
	require.Contains(t, errOut, "not both")
	code, _, errOut = runCLI(t, "timers", "show", "--database-url", url, "--schema", schema)
	require.Equal(t, exitUsage, code)
	require.Contains(t, errOut, "--timer is required")
	code, _, errOut = runCLI(t, "timers", "show", "abc", "--database-url", url, "--schema", schema)
	require.Equal(t, exitUsage, code)
	require.Contains(t, errOut, `TIMER_ID "abc"`)
	code, _, errOut = runCLI(t, "instances", "timers", "cli-1", "cli-2", "--database-url", url, "--schema", schema)
	require.Equal(t, exitUsage, code)
	require.Contains(t, errOut, `unexpected argument "cli-2"`)
	code, out, errOut = runCLI(t, "instances", "timers", "no-such-instance", "--database-url", url, "--schema", schema, "--json")
	require.Equal(t, exitNotFound, code, errOut)
	require.Empty(t, out)
	var jsonErr jsonError // with --json, the error is JSON too
	require.NoError(t, json.Unmarshal([]byte(errOut), &jsonErr), errOut)
	require.Equal(t, `process instance "no-such-instance" has no jobs: not found`, jsonErr.Error)

	due := res.DueAt.Add(15 * time.Minute).Format(time.RFC3339Nano)
	code, out, errOut = runCLI(t, "timers", "set-due-date", "--database-url", url, "--schema", schema, "--timer", id, "--due", due, "--cascade", "--json")
	require.Equal(t, 0, code, errOut)
	var moved struct {
		OffsetAdded time.Duration      `json:"offset_added_ns"`
		Timer       workflow.TimerInfo `json:"timer"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &moved), out)
	require.Equal(t, 15*time.Minute, moved.OffsetAdded)
	require.Equal(t, 15*time.Minute, moved.Timer.RepeatOffset)

	code, out, errOut = runCLI(t, "timers", "cancel", "--database-url", url, "--schema", schema, "--timer", id, "--json")
	require.Equal(t, 0, code, errOut)
	var cancelled struct {
		CancelledJobs []int64 `json:"cancelled_jobs"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &cancelled), out)
	require.Equal(t, []int64{res.Job.Job.ID}, cancelled.CancelledJobs)

	code, _, errOut = runCLI(t, "timers", "set-due-date", "--database-url", url, "--schema", schema, "--timer", id, "--due", due)
	require.Equal(t, exitError, code)
	require.Contains(t, errOut, "no occurrence waiting to fire")

	code, _, errOut = runCLI(t, "timers", "cancel", "--database-url", url, "--schema", schema, "--timer", "999999999")
	require.Equal(t, exitNotFound, code, errOut)
	code, _, errOut = runCLI(t, "timers", "cancel", "999999999", "--database-url", url, "--schema", schema)
	require.Equal(t, exitNotFound, code, errOut)
	code, _, errOut = runCLI(t, "timers", "set-due-date", id, "--database-url", url, "--schema", schema, "--due", due)
	require.Equal(t, exitError, code)
	require.Contains(t, errOut, "no occurrence waiting to fire")
	code, _, errOut = runCLI(t, "timers", "show", "999999999", "--database-url", url, "--schema", schema)
	require.Equal(t, exitNotFound, code, errOut)
	code, _, errOut = runCLI(t, "timers", "show", "--database-url", url, "--schema", schema, "--timer", "999999999")
	require.Equal(t, exitNotFound, code, errOut)
	require.Contains(t, errOut, "timer 999999999")

	code, _, errOut = runCLI(t, "timers", "set-due-date", "--database-url", url, "--schema", schema, "--timer", id, "--due", "tomorrow")
	require.Equal(t, exitUsage, code)
	require.Contains(t, errOut, `--due "tomorrow"`)

	code, _, errOut = runCLI(t, "instances", "timers", "--database-url", url, "--schema", schema)
	require.Equal(t, exitUsage, code)
	require.Contains(t, errOut, "missing PROCESS_INSTANCE_ID")

	// The cancelled timer ended just now: kept by the default 24 h, deleted
	// with --older-than 0s.
	var pruned struct {
		Deleted int64 `json:"deleted"`
	}
	code, out, errOut = runCLI(t, "timers", "prune", "--database-url", url, "--schema", schema, "--json")
	require.Equal(t, 0, code, errOut)
	require.NoError(t, json.Unmarshal([]byte(out), &pruned), out)
	require.Zero(t, pruned.Deleted)
	code, out, errOut = runCLI(t, "timers", "prune", "--database-url", url, "--schema", schema, "--older-than", "0s")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "deleted 1 timer(s) that ended before")
	code, _, errOut = runCLI(t, "timers", "show", "--database-url", url, "--schema", schema, "--timer", id)
	require.Equal(t, exitNotFound, code, errOut)
	code, _, errOut = runCLI(t, "timers", "prune", "--database-url", url, "--schema", schema, "--older-than", "-1h")
	require.Equal(t, exitUsage, code)
	require.Contains(t, errOut, "--older-than -1h0m0s must not be negative")
}
