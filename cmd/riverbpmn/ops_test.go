package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/rivershared/riversharedtest"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/definition"
	"github.com/riverbpmn/riverbpmn/exclusive"
	"github.com/riverbpmn/riverbpmn/incident"
	"github.com/riverbpmn/riverbpmn/liveness"
	"github.com/riverbpmn/riverbpmn/priority"
	"github.com/riverbpmn/riverbpmn/riverbpmntest"
	"github.com/riverbpmn/riverbpmn/workflow"
)

type opsArgs struct {
	Instance string `json:"instance"`
}

func (opsArgs) Kind() string { return "ops_task" }

func (a opsArgs) JobContext() workflow.JobContext {
	return workflow.JobContext{ProcessInstanceID: a.Instance, ProcessDefinitionKey: "order"}
}

// opsSetup migrates a fresh schema and returns an engine on it (exclusive
// by process instance, one job definition for kind ops_task).
func opsSetup(t *testing.T) (*workflow.Engine, string) {
	t.Helper()
	ctx := context.Background()
	_, schema := migratedSchema(t)
	b := riverbpmntest.New(ctx, t, schema, &riverbpmntest.Opts{Config: &workflow.Config{
		ExclusiveScope: exclusive.ProcessInstance,
		// The tests fetch through the engine's pilot directly, with no
		// running client and so no liveness session to fetch under.
		Liveness:           liveness.Config{Disabled: true},
		ProcessDefinitions: []workflow.ProcessDefinition{{Key: "order", Priority: priority.Constant(5)}},
		JobDefinitions: []workflow.JobDefinition{
			{ID: "task-async", ProcessDefinitionKey: "order", ActivityID: "task", Kind: "ops_task", RetryCycle: "R3/PT5M"},
		},
	}})
	return b.Engine, schema
}

// cli runs a verb against schema and returns exit code, stdout and stderr.
func cli(t *testing.T, schema string, args ...string) (int, string, string) {
	t.Helper()
	return runCLI(t, append(args, "--database-url", riversharedtest.TestDatabaseURL(), "--schema", schema)...)
}

// cliJSON runs a verb with --json, requires exit 0 and decodes stdout.
func cliJSON(t *testing.T, schema string, v any, args ...string) {
	t.Helper()
	code, out, errOut := cli(t, schema, append(args, "--json")...)
	require.Equal(t, exitOK, code, "%v: %s", args, errOut)
	require.NoError(t, json.Unmarshal([]byte(out), v), out)
}

// cliItems runs a list verb with --json, requires exit 0 and returns the
// page's items.
func cliItems[I any](t *testing.T, schema string, args ...string) []I {
	t.Helper()
	var page listOutput[I]
	cliJSON(t, schema, &page, args...)
	return page.Items
}

func TestOpsVerbs(t *testing.T) {
	ctx := context.Background()
	engine, schema := opsSetup(t)
	client, err := workflow.NewClient(engine, &river.Config{TestOnly: true})
	require.NoError(t, err)
	insert := func(instance string) int64 {
		res, err := client.Insert(ctx, opsArgs{Instance: instance}, nil)
		require.NoError(t, err)
		return res.Job.ID
	}
	id := func(n int64) string { return strconv.FormatInt(n, 10) }

	t.Run("DefinitionsBeforeAndAfterStore", func(t *testing.T) {
		code, out, errOut := cli(t, schema, "definitions", "list")
		require.Equal(t, exitOK, code, errOut)
		require.Contains(t, out, "no job definitions stored")
		require.NoError(t, engine.SyncJobDefinitions(ctx))
	})

	// Job A is fetched by a client that then stops working it (as one that
	// died would): it holds instance pi-1's key. B waits for it; C is of
	// another instance.
	jobA := insert("pi-1")
	fetched, err := engine.Driver().PluginPilot().JobGetAvailable(ctx, engine.Driver().GetExecutor(), nil, &riverdriver.JobGetAvailableParams{
		ClientID: "dead-client", MaxAttemptedBy: 100, MaxToLock: 1, Queue: river.QueueDefault, Schema: schema,
	})
	require.NoError(t, err)
	require.Len(t, fetched.Jobs, 1)
	require.Equal(t, jobA, fetched.Jobs[0].ID)
	jobB := insert("pi-1")
	jobC := insert("pi-2")

	t.Run("Definitions", func(t *testing.T) {
		code, out, errOut := cli(t, schema, "definitions", "list")
		require.Equal(t, exitOK, code, errOut)
		require.Regexp(t, `task-async\s+order\s+task\s+ops_task\s+-\s+3\s+0`, out)
		defs := cliItems[*definition.Summary](t, schema, "definitions", "list")
		require.Len(t, defs, 1)
		require.Equal(t, definition.State{ID: "task-async", ProcessDefinitionKey: "order", ActivityID: "task", Kind: "ops_task"}, defs[0].State)
		require.EqualValues(t, 3, defs[0].UnfinishedJobs)
		require.True(t, defs[0].Stored)
	})

	t.Run("Instance", func(t *testing.T) {
		code, out, errOut := cli(t, schema, "instances", "jobs", "pi-1")
		require.Equal(t, exitOK, code, errOut)
		require.Regexp(t, id(jobA)+`\s+ops_task\s+running\s+1/3\s+task\s+task-async\s+5`, out)
		require.Regexp(t, id(jobB)+`\s+ops_task\s+available\s+0/3`, out)
		require.NotContains(t, out, " "+id(jobC)+" ")
		jobs := cliItems[instanceJobJSON](t, schema, "instances", "jobs", "pi-1")
		require.Len(t, jobs, 2)
		require.JSONEq(t, `{"instance":"pi-1"}`, string(jobs[0].Args))

		code, _, errOut = cli(t, schema, "instances", "jobs", "no-such-instance")
		require.Equal(t, exitNotFound, code)
		require.Contains(t, errOut, `process instance "no-such-instance" has no jobs: not found`)
	})

	t.Run("JobAndExclusiveWait", func(t *testing.T) {
		code, out, errOut := cli(t, schema, "jobs", "show", id(jobB))
		require.Equal(t, exitOK, code, errOut)
		require.Regexp(t, `state\s+available\n`, out)
		require.Regexp(t, `retries left\s+3\n`, out)
		require.Regexp(t, `retry cycle\s+R3/PT5M\n`, out)
		require.Regexp(t, `priority\s+5 \(BPMN; River's own priority column: 1\)\n`, out)
		require.Regexp(t, `job definition\s+task-async\n`, out)
		require.Contains(t, out, fmt.Sprintf(`job %d (available, queue default): key "pi-1", waiting for key "pi-1" held by job %d attempt 1 (client dead-client`, jobB, jobA))
		require.Contains(t, out, "incidents: none")

		var details jobDetailsJSON
		cliJSON(t, schema, &details, "jobs", "show", id(jobA))
		require.Equal(t, rivertype.JobStateRunning, details.Job.State)
		require.Equal(t, 3, details.RetriesLeft, "counting the execution under way")
		require.Equal(t, "pi-1", details.JobContext.ProcessInstanceID)
		require.Equal(t, "task-async", details.JobContext.JobDefinitionID)
		require.Nil(t, details.NextRunAt)
		require.NotNil(t, details.ExclusiveWait.Holder)
		require.Equal(t, jobA, details.ExclusiveWait.Holder.JobID)
		require.False(t, details.ExclusiveWait.Waiting, "A holds its own key")
		var waiting jobDetailsJSON
		cliJSON(t, schema, &waiting, "jobs", "show", id(jobB))
		require.True(t, waiting.ExclusiveWait.Waiting)
		require.Equal(t, "pi-1", waiting.ExclusiveWait.Key)
		require.Equal(t, "dead-client", waiting.ExclusiveWait.Holder.ClientID)

		code, _, errOut = cli(t, schema, "jobs", "show", "999999999")
		require.Equal(t, exitNotFound, code)
		require.Contains(t, errOut, "job 999999999: not found")
		code, _, errOut = cli(t, schema, "jobs", "show", "abc")
		require.Equal(t, exitUsage, code)
		require.Contains(t, errOut, `JOB_ID "abc" is not a job id`)
		code, _, errOut = runCLI(t, "jobs", "show", "--json")
		require.Equal(t, exitUsage, code)
		require.Contains(t, errOut, "missing JOB_ID")
	})

	t.Run("Locks", func(t *testing.T) {
		code, out, errOut := cli(t, schema, "exclusive", "locks", "list")
		require.Equal(t, exitOK, code, errOut)
		require.Regexp(t, `pi-1\s+`+id(jobA)+`\s+1\s+dead-client\s+default\s+\S+\s+running \(attempt 1\)\s*\n`, out)
		require.NotContains(t, out, "STALE (")
		var kept struct{ Deleted int }
		cliJSON(t, schema, &kept, "exclusive", "locks", "delete-stale")
		require.Zero(t, kept.Deleted, "a lock whose job runs is kept")

		// River's rescuer makes A retryable: the lock is now stale.
		_, err := engine.Driver().GetExecutor().JobRescueMany(ctx, &riverdriver.JobRescueManyParams{
			ID:           []int64{jobA},
			Error:        [][]byte{[]byte(`{"at":"2026-01-01T00:00:00Z","attempt":1,"error":"stuck"}`)},
			FinalizedAt:  []*time.Time{nil},
			ScheduledAt:  []time.Time{time.Now().Add(time.Hour)},
			Schema:       schema,
			State:        []string{string(rivertype.JobStateRetryable)},
			StuckHorizon: time.Now(),
		})
		require.NoError(t, err)
		code, out, errOut = cli(t, schema, "exclusive", "locks", "list")
		require.Equal(t, exitOK, code, errOut)
		require.Regexp(t, `pi-1\s+`+id(jobA)+`\s+1\s+dead-client\s+default\s+\S+\s+retryable \(attempt 1\)\s+STALE`, out)
		locks := cliItems[*exclusive.Lock](t, schema, "exclusive", "locks", "list")
		require.Len(t, locks, 1)
		require.True(t, locks[0].Stale)

		var deleted struct{ Deleted int }
		cliJSON(t, schema, &deleted, "exclusive", "locks", "delete-stale")
		require.Equal(t, 1, deleted.Deleted)
		code, out, errOut = cli(t, schema, "exclusive", "locks", "delete-stale")
		require.Equal(t, exitOK, code, errOut)
		require.Equal(t, "deleted 0 stale or given-back exclusive lock row(s); locks held by running jobs are kept\n", out)
		code, out, errOut = cli(t, schema, "exclusive", "locks", "list")
		require.Equal(t, exitOK, code, errOut)
		require.Equal(t, "no exclusive locks held\n", out)

		code, out, _ = cli(t, schema, "jobs", "show", id(jobA))
		require.Equal(t, exitOK, code)
		require.Regexp(t, `retries left\s+2\n`, out)
		require.Regexp(t, `last error\s+attempt 1 at 2026-01-01T00:00:00Z: stuck\n`, out)
		require.Regexp(t, `next run\s+\d{4}-`, out)
	})

	t.Run("RetriesAndIncidents", func(t *testing.T) {
		code, out, errOut := cli(t, schema, "incidents", "list")
		require.Equal(t, exitOK, code, errOut)
		require.Equal(t, "no incidents\n", out)

		code, out, errOut = cli(t, schema, "jobs", "set-retries", id(jobC), "0")
		require.Equal(t, exitOK, code, errOut)
		require.Equal(t, fmt.Sprintf("job %d has 0 retries left; it is discarded\n", jobC), out)

		code, out, errOut = cli(t, schema, "incidents", "list")
		require.Equal(t, exitOK, code, errOut)
		require.Regexp(t, `\d+\s+`+id(jobC)+`\s+failedJob\s+task-async\s+task\s+pi-2\s+\S+\s+-`, out)
		incidents := cliItems[*incident.Incident](t, schema, "incidents", "list", "--job", id(jobC))
		require.Equal(t, jobC, incidents[0].JobID)
		require.Equal(t, "pi-2", incidents[0].ProcessInstanceID)
		require.Len(t, incidents, 1)
		require.Nil(t, incidents[0].ResolvedAt)

		var done doneJSON
		cliJSON(t, schema, &done, "jobs", "set-retries", id(jobC), "2")
		require.Equal(t, fmt.Sprintf("job %d has 2 retries left; it is available", jobC), done.Done)

		incidents = cliItems[*incident.Incident](t, schema, "incidents", "list")
		require.Empty(t, incidents, "SetJobRetries resolved it")
		incidents = cliItems[*incident.Incident](t, schema, "incidents", "list", "--resolved")
		require.Len(t, incidents, 1)
		require.NotNil(t, incidents[0].ResolvedAt)

		code, _, errOut = cli(t, schema, "jobs", "set-retries", "999999999", "1")
		require.Equal(t, exitNotFound, code, errOut)
		code, _, errOut = cli(t, schema, "jobs", "set-retries", id(jobC), "-1")
		require.Equal(t, exitUsage, code)
		require.Contains(t, errOut, `N "-1" is not a number of retries`)
		code, _, _ = cli(t, schema, "incidents", "list", "--job", "999999999")
		require.Equal(t, exitNotFound, code)
	})

	t.Run("Priority", func(t *testing.T) {
		bpmnPriority := func(jobID int64) int64 {
			var details jobDetailsJSON
			cliJSON(t, schema, &details, "jobs", "show", id(jobID))
			return *details.JobContext.Priority
		}
		code, out, errOut := cli(t, schema, "definitions", "set-priority", "task-async", "42", "--cascade")
		require.Equal(t, exitOK, code, errOut)
		require.Equal(t, "job definition \"task-async\" has overriding priority 42; its unfinished jobs were rewritten to it\n", out)
		require.Equal(t, int64(42), bpmnPriority(jobB), "cascaded")
		require.Equal(t, int64(42), bpmnPriority(insert("pi-3")), "new jobs get it")

		defs := cliItems[*definition.Summary](t, schema, "definitions", "list")
		require.Equal(t, int64(42), *defs[0].OverridingPriority)

		var done doneJSON
		cliJSON(t, schema, &done, "definitions", "clear-priority", "--json", "task-async") // flags before the argument too
		require.Equal(t, `job definition "task-async" has no overriding priority`, done.Done)
		require.Equal(t, int64(5), bpmnPriority(insert("pi-4")))

		cliJSON(t, schema, &done, "jobs", "set-priority", id(jobB), "-7")
		require.Equal(t, int64(-7), bpmnPriority(jobB))

		code, _, errOut = cli(t, schema, "definitions", "set-priority", "no-such-def", "1")
		require.Equal(t, exitNotFound, code)
		require.Contains(t, errOut, `job definition "no-such-def": not found`)
		code, _, _ = cli(t, schema, "jobs", "set-priority", "999999999", "1")
		require.Equal(t, exitNotFound, code)
		code, _, errOut = cli(t, schema, "jobs", "set-priority", id(jobB), "high")
		require.Equal(t, exitUsage, code)
		require.Contains(t, errOut, `PRIORITY "high" is not an integer`)
		code, _, errOut = runCLI(t, "definitions", "bump")
		require.Equal(t, exitUsage, code)
		require.Contains(t, errOut, `unknown verb "bump" of "definitions"`)
	})
}

// TestExclusiveScopeVerb: `exclusive scope show` shows the scope in force
// in the schema, `exclusive scope set` records another; `jobs show` and
// `exclusive wait` judge keys by it.
func TestExclusiveScopeVerb(t *testing.T) {
	ctx := context.Background()
	engine, schema := opsSetup(t)
	client, err := workflow.NewClient(engine, &river.Config{TestOnly: true})
	require.NoError(t, err)

	var shown scopeJSON
	cliJSON(t, schema, &shown, "exclusive", "scope", "show")
	require.False(t, shown.Recorded)
	code, out, errOut := cli(t, schema, "exclusive", "scope", "show")
	require.Equal(t, exitOK, code, errOut)
	require.Contains(t, out, "none recorded yet")

	cliJSON(t, schema, &shown, "exclusive", "scope", "set", "root-process-instance")
	require.True(t, shown.Recorded)
	require.Equal(t, "root-process-instance", shown.Scope)
	require.Empty(t, shown.Previous)
	code, out, errOut = cli(t, schema, "exclusive", "scope", "show")
	require.Equal(t, exitOK, code, errOut)
	require.Contains(t, out, "exclusive scope in force: root process instance (recorded by hand")

	// A job of instance "child" under root "root": the recorded scope, not
	// the --exclusive-scope fallback, decides its key.
	res, err := client.Insert(ctx, opsArgs{Instance: "child"}, nil)
	require.NoError(t, err)
	var details jobDetailsJSON
	cliJSON(t, schema, &details, "jobs", "show", strconv.FormatInt(res.Job.ID, 10), "--exclusive-scope", "none")
	require.NotNil(t, details.ExclusiveWait)
	require.Equal(t, "root-process-instance", details.ExclusiveWait.Scope)
	var wait waitJSON
	cliJSON(t, schema, &wait, "exclusive", "wait", strconv.FormatInt(res.Job.ID, 10))
	require.Equal(t, "root-process-instance", wait.Scope)
	require.Equal(t, *details.ExclusiveWait, wait)

	cliJSON(t, schema, &shown, "exclusive", "scope", "set", "none")
	require.Equal(t, "root-process-instance", shown.Previous)
	details = jobDetailsJSON{}
	cliJSON(t, schema, &details, "jobs", "show", strconv.FormatInt(res.Job.ID, 10))
	require.Equal(t, "none", details.ExclusiveWait.Scope)
	require.Empty(t, details.ExclusiveWait.Key)
	require.Contains(t, details.ExclusiveWait.Summary, "exclusivity is not enforced on this schema")

	code, _, errOut = cli(t, schema, "exclusive", "scope", "set", "everything")
	require.NotEqual(t, exitOK, code)
	require.Contains(t, errOut, `unknown scope "everything"`)
}
