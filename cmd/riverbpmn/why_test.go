package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/bulk"
	"github.com/riverbpmn/riverbpmn/diagnose"
	"github.com/riverbpmn/riverbpmn/search"
	"github.com/riverbpmn/riverbpmn/workflow"
)

func TestWhy(t *testing.T) {
	ctx := context.Background()
	engine, schema := opsSetup(t)
	client, err := workflow.NewClient(engine, &river.Config{Schema: schema, TestOnly: true})
	require.NoError(t, err)
	res, err := client.Insert(ctx, opsArgs{Instance: "order-4711"}, nil)
	require.NoError(t, err)
	id := res.Job.ID
	_, err = engine.SuspendProcessInstance(ctx, "order-4711")
	require.NoError(t, err)

	var d diagnose.Diagnosis
	cliJSON(t, schema, &d, "why", strconv.FormatInt(id, 10))
	require.Equal(t, id, d.JobID)
	require.True(t, d.Waiting)
	require.Equal(t, "process instance", d.ExclusiveScope)
	r := d.Reason(diagnose.Suspended)
	require.NotNil(t, r)
	require.Equal(t, "order-4711", r.SuspendedBy[0].ID)

	code, out, errOut := cli(t, schema, "why", strconv.FormatInt(id, 10))
	require.Equal(t, exitOK, code, errOut)
	require.Contains(t, out, `[suspended] The job is suspended by process instance "order-4711"`)
	require.Contains(t, out, "fix: Activate")
	require.Contains(t, out, "exclusive scope in force: process instance")

	code, _, errOut = cli(t, schema, "why", "999999")
	require.Equal(t, exitNotFound, code, errOut)
	code, _, errOut = cli(t, schema, "why")
	require.NotEqual(t, exitOK, code)
	require.Contains(t, errOut, "missing JOB_ID")
	code, _, errOut = cli(t, schema, "why", "abc")
	require.NotEqual(t, exitOK, code)
	require.Contains(t, errOut, `JOB_ID "abc" is not a job id`)
}

func TestSearchAndBulkVerbs(t *testing.T) {
	ctx := context.Background()
	engine, schema := opsSetup(t)
	client, err := workflow.NewClient(engine, &river.Config{Schema: schema, TestOnly: true})
	require.NoError(t, err)
	var ids []int64
	for _, instance := range []string{"order-4711", "order-4712", "invoice-1"} {
		res, err := client.Insert(ctx, opsArgs{Instance: instance}, nil)
		require.NoError(t, err)
		ids = append(ids, res.Job.ID)
	}
	require.NoError(t, engine.SetJobRetries(ctx, ids[0], 0))
	require.NoError(t, engine.SetJobRetries(ctx, ids[1], 0))

	var jobs listOutput[*search.Job]
	cliJSON(t, schema, &jobs, "jobs", "list", "--state", "discarded", "--instance-prefix", "order-")
	require.Len(t, jobs.Items, 2)
	require.Equal(t, ids[1], jobs.Items[0].ID, "newest first")
	require.Empty(t, jobs.Next, "the last page")
	jobs = listOutput[*search.Job]{}
	cliJSON(t, schema, &jobs, "jobs", "list", "--state", "discarded", "--oldest", "--limit", "1")
	require.Len(t, jobs.Items, 1)
	require.Equal(t, ids[0], jobs.Items[0].ID)
	require.Equal(t, strconv.FormatInt(ids[0], 10), jobs.Next)
	jobs = listOutput[*search.Job]{}
	cliJSON(t, schema, &jobs, "jobs", "list", "--state", "discarded", "--oldest", "--limit", "1", "--after", strconv.FormatInt(ids[0], 10))
	require.Len(t, jobs.Items, 1)
	require.Equal(t, ids[1], jobs.Items[0].ID)
	require.Empty(t, jobs.Next, "a full last page names no next page")
	var instances listOutput[*search.Instance]
	cliJSON(t, schema, &instances, "instances", "list", "--instance-prefix", "order-47")
	require.Len(t, instances.Items, 2)

	var p bulk.Progress
	cliJSON(t, schema, &p, "bulk", "retry", "--job-definition", "task-async", "--retries", "2")
	require.Equal(t, 2, p.Changed)
	require.True(t, p.Finished)
	cliJSON(t, schema, &p, "bulk", "retry")
	require.Zero(t, p.Done, "repeated: nothing left")

	cliJSON(t, schema, &p, "bulk", "suspend", "--instance-prefix", "order-")
	require.Equal(t, 2, p.Changed)
	code, out, errOut := cli(t, schema, "bulk", "activate", "--job", strconv.FormatInt(ids[0], 10))
	require.Equal(t, exitOK, code, errOut)
	require.Contains(t, out, "activate: 1 done, 1 changed, 0 failed")
	require.Contains(t, errOut, "activate: 1 of 1 done", "progress on stderr")
	code, _, errOut = cli(t, schema, "bulk", "stop")
	require.NotEqual(t, exitOK, code)
	require.Contains(t, errOut, "give --job ids or at least one filter flag")
	code, _, errOut = cli(t, schema, "jobs", "list", "--state", "stuck")
	require.Equal(t, exitUsage, code, "a bad filter is a usage error, found before the database is opened")
	require.Contains(t, errOut, `state "stuck" is not a job state`)
}

// TestInstancesPaging: instances pages as jobs does: a full page names the
// next one, the page that is not full is the last and names none, and
// following "next page" never comes back empty.
func TestInstancesPaging(t *testing.T) {
	ctx := context.Background()
	engine, schema := opsSetup(t)
	client, err := workflow.NewClient(engine, &river.Config{Schema: schema, TestOnly: true})
	require.NoError(t, err)
	for _, instance := range []string{"order-1", "order-2", "order-3"} {
		_, err := client.Insert(ctx, opsArgs{Instance: instance}, nil)
		require.NoError(t, err)
	}
	var page listOutput[*search.Instance]
	cliJSON(t, schema, &page, "instances", "list", "--limit", "2")
	require.Len(t, page.Items, 2)
	require.NotEmpty(t, page.Next, "a full page names the next")
	var last listOutput[*search.Instance]
	cliJSON(t, schema, &last, "instances", "list", "--limit", "2", "--after", page.Next)
	require.Len(t, last.Items, 1)
	require.Empty(t, last.Next, "the page that is not full is the last")

	code, out, errOut := cli(t, schema, "instances", "list", "--limit", "3")
	require.Equal(t, exitOK, code, errOut)
	require.Contains(t, out, "next page: --after ", "a full page")
	after := strings.Fields(out[strings.LastIndex(out, "--after ")+len("--after "):])[0]
	code, out, errOut = cli(t, schema, "instances", "list", "--limit", "3", "--after", after)
	require.Equal(t, exitOK, code, errOut)
	require.NotContains(t, out, "order-", "past the last instance")
	require.NotContains(t, out, "next page")
	code, out, errOut = cli(t, schema, "instances", "list", "--limit", "4")
	require.Equal(t, exitOK, code, errOut)
	require.NotContains(t, out, "next page", "three instances fit one page of four")
}

// TestWhyEveryReason: why gives every reason, as text and JSON: a suspended
// job whose exclusive key another job holds is both suspended and waiting
// for the key.
func TestWhyEveryReason(t *testing.T) {
	ctx := context.Background()
	engine, schema := opsSetup(t)
	client, err := workflow.NewClient(engine, &river.Config{Schema: schema, TestOnly: true})
	require.NoError(t, err)
	res, err := client.Insert(ctx, opsArgs{Instance: "order-4711"}, nil)
	require.NoError(t, err)
	holder := res.Job.ID
	fetched, err := engine.Driver().PluginPilot().JobGetAvailable(ctx, engine.Driver().GetExecutor(), nil, &riverdriver.JobGetAvailableParams{
		ClientID: "worker-7f3a", MaxAttemptedBy: 100, MaxToLock: 1, Queue: river.QueueDefault, Schema: schema,
	})
	require.NoError(t, err)
	require.Equal(t, holder, fetched.Jobs[0].ID)
	res, err = client.Insert(ctx, opsArgs{Instance: "order-4711"}, nil)
	require.NoError(t, err)
	id := res.Job.ID
	_, err = engine.SuspendProcessInstance(ctx, "order-4711")
	require.NoError(t, err)

	var d diagnose.Diagnosis
	cliJSON(t, schema, &d, "why", strconv.FormatInt(id, 10))
	require.True(t, d.Has(diagnose.Suspended), "%+v", d.Reasons)
	require.True(t, d.Has(diagnose.KeyHeld), "%+v", d.Reasons)
	require.Equal(t, holder, d.Reason(diagnose.KeyHeld).HolderJobID)
	code, out, errOut := cli(t, schema, "why", strconv.FormatInt(id, 10))
	require.Equal(t, exitOK, code, errOut)
	require.Contains(t, out, `[suspended] The job is suspended by process instance "order-4711"`)
	require.Contains(t, out, fmt.Sprintf("[key_held] Its exclusive key %q (scope: process instance) is held by job %d on client worker-7f3a", "order-4711", holder))
}
