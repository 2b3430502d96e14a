package main

import (
	"context"
	"strconv"
	"testing"

	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/definition"
	"github.com/riverbpmn/riverbpmn/incident"
	"github.com/riverbpmn/riverbpmn/workflow"
)

// TestListingPages: --after and --limit list one page of an instance's
// jobs, incidents, definitions, locks and timers through the engine's
// keyset pages, the text ending with the flags of the next page when there
// is one (never a next page that comes back empty); bad values are named.
func TestListingPages(t *testing.T) {
	ctx := context.Background()
	engine, schema := opsSetup(t)
	require.NoError(t, engine.SyncJobDefinitions(ctx))
	client, err := workflow.NewClient(engine, &river.Config{TestOnly: true})
	require.NoError(t, err)
	var ids []int64
	for range 5 {
		res, err := client.Insert(ctx, opsArgs{Instance: "pi-pages"}, nil)
		require.NoError(t, err)
		ids = append(ids, res.Job.ID)
	}
	id := func(n int64) string { return strconv.FormatInt(n, 10) }

	page := cliItems[instanceJobJSON](t, schema, "instances", "jobs", "pi-pages", "--limit", "2")
	require.Len(t, page, 2)
	require.Equal(t, ids[0], page[0].ID)
	code, out, errOut := cli(t, schema, "instances", "jobs", "pi-pages", "--limit", "2", "--after", id(ids[1]))
	require.Equal(t, exitOK, code, errOut)
	require.Contains(t, out, "\n"+id(ids[2])+" ")
	require.NotContains(t, out, "\n"+id(ids[1])+" ")
	require.Contains(t, out, "next page: --after "+id(ids[3])+" --limit 2\n")
	code, out, errOut = cli(t, schema, "instances", "jobs", "pi-pages", "--limit", "1", "--after", id(ids[3]))
	require.Equal(t, exitOK, code, errOut)
	require.Contains(t, out, "\n"+id(ids[4])+" ")
	require.NotContains(t, out, "next page", "a full last page names no next page")
	code, out, errOut = cli(t, schema, "instances", "jobs", "pi-pages", "--after", id(ids[4]))
	require.Equal(t, exitOK, code, errOut)
	require.Equal(t, "nothing after "+id(ids[4])+"\n", out)

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"instances", "jobs", "pi-pages", "--limit", "-1"}, "--limit -1 is out of range: 1 to 1000"},
		{[]string{"instances", "jobs", "pi-pages", "--limit", "1001"}, "--limit 1001 is out of range"},
		{[]string{"instances", "jobs", "pi-pages", "--after", "abc"}, `--after "abc": instance: ListParams.After "abc" is not a cursor`},
		{[]string{"instances", "timers", "pi-pages", "--after", "-3"}, `--after "-3": timer: ListParams.After "-3" is not a cursor`},
		{[]string{"events", "subscriptions", "--after", "nobody"}, `--after "nobody": no such item`},
	} {
		code, _, errOut := cli(t, schema, tc.args...)
		require.Equal(t, exitUsage, code, tc.args)
		require.Contains(t, errOut, tc.want, tc.args)
	}

	// Incidents: two open ones, one per page.
	for _, jobID := range ids[:2] {
		require.NoError(t, engine.SetJobRetries(ctx, jobID, 0))
	}
	var incidents listOutput[*incident.Incident]
	cliJSON(t, schema, &incidents, "incidents", "list", "--limit", "1")
	require.Len(t, incidents.Items, 1)
	require.Equal(t, id(incidents.Items[0].ID), incidents.Next)
	code, out, errOut = cli(t, schema, "incidents", "list", "--limit", "1", "--after", incidents.Next)
	require.Equal(t, exitOK, code, errOut)
	require.NotContains(t, out, "next page", "the second of two is the last")
	require.NotContains(t, out, "\n"+incidents.Next+" ")

	var defs listOutput[*definition.Summary]
	cliJSON(t, schema, &defs, "definitions", "list", "--limit", "1")
	require.Len(t, defs.Items, 1)
	require.Empty(t, defs.Next, "one job definition")
	first := defs.Items[0].ID
	defs = listOutput[*definition.Summary]{}
	cliJSON(t, schema, &defs, "definitions", "list", "--after", first)
	require.Empty(t, defs.Items)

	code, out, errOut = cli(t, schema, "exclusive", "locks", "list", "--limit", "10")
	require.Equal(t, exitOK, code, errOut)
	require.Equal(t, "no exclusive locks held\n", out)
	code, out, errOut = cli(t, schema, "instances", "timers", "pi-pages", "--limit", "10")
	require.Equal(t, exitOK, code, errOut)
	require.NotContains(t, out, "next page")
}
