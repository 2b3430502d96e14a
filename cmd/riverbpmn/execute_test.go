package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivershared/riversharedtest"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/events"
	"github.com/riverbpmn/riverbpmn/workflow"
)

type cliExecArgs struct {
	Fail bool `json:"fail"`
}

func (cliExecArgs) Kind() string { return "cli_exec" }

func (cliExecArgs) JobContext() workflow.JobContext {
	return workflow.JobContext{ProcessDefinitionKey: "cli", ActivityID: "exec", ProcessInstanceID: "cli-exec", RetryCycle: "R2/PT1H"}
}

// TestExecuteCommand: `execute JOB_ID` runs a job due in an hour now, by
// the client working its queue, and prints its outcome (Camunda's
// managementService.executeJob, ManagementServiceTest); a failed run exits
// 1 with its error, an unknown job 3.
func TestExecuteCommand(t *testing.T) {
	ctx := context.Background()
	url, schema := migratedSchema(t)
	pool := riversharedtest.DBPool(ctx, t)
	engine, err := workflow.NewEngine(pool, &workflow.Config{Schema: schema})
	require.NoError(t, err)
	workers := river.NewWorkers()
	river.AddWorker(workers, river.WorkFunc(func(_ context.Context, job *river.Job[cliExecArgs]) error {
		if job.Args.Fail {
			return fmt.Errorf("cli exec: failing on purpose")
		}
		return nil
	}))
	client, err := workflow.NewClient(engine, &river.Config{
		Logger: slog.New(slog.DiscardHandler), Queues: map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 2}},
		TestOnly: true, Workers: workers,
	})
	require.NoError(t, err)
	require.NoError(t, client.Start(ctx))
	t.Cleanup(func() {
		stopCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = client.StopAndCancel(stopCtx)
	})
	inHour := &river.InsertOpts{ScheduledAt: time.Now().Add(time.Hour)}
	ok, err := client.Insert(ctx, cliExecArgs{}, inHour)
	require.NoError(t, err)
	failing, err := client.Insert(ctx, cliExecArgs{Fail: true}, inHour)
	require.NoError(t, err)

	code, out, errOut := runCLI(t, "jobs", "execute", fmt.Sprint(ok.Job.ID), "--database-url", url, "--schema", schema, "--json")
	require.Equal(t, exitOK, code, errOut)
	var res executeJSON
	require.NoError(t, json.Unmarshal([]byte(out), &res), out)
	require.Equal(t, "completed", res.Outcome)
	require.Equal(t, ok.Job.ScheduledAt.UTC().Truncate(time.Microsecond), res.DueAt.Truncate(time.Microsecond))

	code, out, errOut = runCLI(t, "jobs", "execute", fmt.Sprint(failing.Job.ID), "--database-url", url, "--schema", schema)
	require.Equal(t, exitError, code)
	require.Contains(t, out, "failed (attempt 1, now retryable)")
	require.Contains(t, out, "next run")
	require.Contains(t, errOut, "failing on purpose")

	code, _, errOut = runCLI(t, "jobs", "execute", "999999", "--database-url", url, "--schema", schema)
	require.Equal(t, exitNotFound, code, errOut)
	code, _, _ = runCLI(t, "jobs", "execute", "--database-url", url, "--schema", schema)
	require.NotEqual(t, exitOK, code, "JOB_ID is required")
}

// TestSubscriptionsCommand: `subscriptions` lists the named event
// subscriptions with their position and the events they have yet to
// handle; `subscriptions NAME` shows one, and an unknown name exits 3.
func TestSubscriptionsCommand(t *testing.T) {
	ctx := context.Background()
	url, schema := migratedSchema(t)
	pool := riversharedtest.DBPool(ctx, t)
	_, err := pool.Exec(ctx, fmt.Sprintf(`INSERT INTO %s.river_bpmn_event_subscription (name, txid, id) VALUES ('billing', '1', 0)`, pgx.Identifier{schema}.Sanitize()))
	require.NoError(t, err)

	code, out, errOut := runCLI(t, "events", "subscription", "billing", "--database-url", url, "--schema", schema, "--json")
	require.Equal(t, exitOK, code, errOut)
	var sub events.Subscription
	require.NoError(t, json.Unmarshal([]byte(out), &sub), out)
	require.Equal(t, "billing", sub.Name)
	require.Equal(t, events.Cursor{TxID: 1}, sub.Cursor)
	require.Zero(t, sub.Behind)

	code, out, errOut = runCLI(t, "events", "subscriptions", "--database-url", url, "--schema", schema)
	require.Equal(t, exitOK, code, errOut)
	require.Contains(t, out, "BEHIND (EVENTS)")
	require.Contains(t, out, "billing")

	code, _, errOut = runCLI(t, "events", "subscription", "nobody", "--database-url", url, "--schema", schema)
	require.Equal(t, exitNotFound, code, errOut)
}

// TestSuspensionApplyCommand: `suspension-apply SCHEDULE_ID` applies a
// delayed suspension now (Camunda: managementService.executeJob on the
// delayed suspension's job, ProcessDefinitionSuspensionTest
// testDelayedSuspendProcessDefinition); applying it again
// fails, an unknown schedule exits 3.
func TestSuspensionApplyCommand(t *testing.T) {
	ctx := context.Background()
	url, schema := migratedSchema(t)
	pool := riversharedtest.DBPool(ctx, t)
	_, err := pool.Exec(ctx, fmt.Sprintf(`INSERT INTO %s (id, process_definition_key, activity_id, kind) VALUES ('jd', 'p', 'a', 'k')`,
		pgx.Identifier{schema, "river_bpmn_job_definition"}.Sanitize()))
	require.NoError(t, err)
	db := []string{"--database-url", url, "--schema", schema}
	code, out, errOut := runCLI(t, append([]string{"suspensions", "suspend", "--job-definition", "jd", "--at", time.Now().Add(time.Hour).Format(time.RFC3339), "--json"}, db...)...)
	require.Equal(t, exitOK, code, errOut)
	var scheduled struct {
		Result workflow.SuspensionResult `json:"result"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &scheduled), out)
	require.NotZero(t, scheduled.Result.ScheduledID, out)
	sid := fmt.Sprint(scheduled.Result.ScheduledID)

	code, out, errOut = runCLI(t, append([]string{"suspensions", "apply", sid}, db...)...)
	require.Equal(t, exitOK, code, errOut)
	require.Contains(t, out, `applied now: job_definition "jd" suspended`)
	code, out, errOut = runCLI(t, append([]string{"definitions", "list", "--json"}, db...)...)
	require.Equal(t, exitOK, code, errOut)
	require.Contains(t, out, `"suspended": true`)

	code, _, errOut = runCLI(t, append([]string{"suspensions", "apply", sid}, db...)...)
	require.Equal(t, exitError, code)
	require.Contains(t, errOut, "applied already")
	code, _, errOut = runCLI(t, append([]string{"suspensions", "apply", "99999"}, db...)...)
	require.Equal(t, exitNotFound, code, errOut)
}
