package main

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivershared/riversharedtest"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/handlers"
	"github.com/riverbpmn/riverbpmn/workflow"
)

// TestTimersList: timers list filters every timer as the console's Timers
// page does: by process definition and due window, with --json.
func TestTimersList(t *testing.T) {
	ctx := context.Background()
	url, schema := migratedSchema(t)
	pool := riversharedtest.DBPool(ctx, t)
	engine, err := workflow.NewEngine(pool, &workflow.Config{Schema: schema})
	require.NoError(t, err)
	client, err := river.NewClient(engine.Driver(), &river.Config{Schema: schema, Middleware: []rivertype.Middleware{engine.Middleware()}})
	require.NoError(t, err)
	timers := handlers.NewTimers(pool, &handlers.TimersConfig{Schema: schema})
	insert := func(instance, definition, cycle string) int64 {
		tx, err := pool.Begin(ctx)
		require.NoError(t, err)
		jc := workflow.JobContext{ProcessInstanceID: instance, ProcessDefinitionKey: definition, ActivityID: "wait"}
		res, err := timers.InsertTx(ctx, client, tx, cliTimerArgs{}, handlers.Timer{Cycle: cycle}, jc.InsertOpts())
		require.NoError(t, err)
		require.NoError(t, tx.Commit(ctx))
		return res.TimerID
	}
	hourly := insert("tl-1", "order", "R3/PT1H")
	daily := insert("tl-2", "refund", "R/P1D")

	list := func(args ...string) []int64 {
		t.Helper()
		code, out, errOut := runCLI(t, append([]string{"timers", "list", "--database-url", url, "--schema", schema, "--json"}, args...)...)
		require.Equal(t, 0, code, errOut)
		var got listOutput[*workflow.TimerInfo]
		require.NoError(t, json.Unmarshal([]byte(out), &got), out)
		ids := []int64{}
		for _, tm := range got.Items {
			ids = append(ids, tm.ID)
		}
		return ids
	}
	require.Equal(t, []int64{hourly, daily}, list())
	require.Equal(t, []int64{daily}, list("--definition", "refund"))
	soon := time.Now().UTC().Add(2 * time.Hour).Format(time.RFC3339)
	require.Equal(t, []int64{hourly}, list("--due-before", soon))
	require.Equal(t, []int64{daily}, list("--due-after", soon))
	require.Equal(t, []int64{}, list("--definition", "order", "--due-after", soon))

	code, out, _ := runCLI(t, "timers", "list", "--database-url", url, "--schema", schema, "--definition", "order")
	require.Equal(t, 0, code)
	require.Contains(t, out, "tl-1")
	require.Contains(t, out, "NEXT DUE")
	code, _, errOut := runCLI(t, "timers", "list", "--database-url", url, "--schema", schema, "--due-after", "tomorrow")
	require.NotEqual(t, 0, code)
	require.Contains(t, errOut, `--due-after "tomorrow" is not an RFC 3339 time`)
}
