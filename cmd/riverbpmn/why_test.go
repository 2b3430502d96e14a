package main

import (
	"context"
	"strconv"
	"testing"

	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/diagnose"
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
