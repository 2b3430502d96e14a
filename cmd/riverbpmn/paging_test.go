package main

import (
	"context"
	"strconv"
	"testing"

	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/workflow"
)

// TestListingPages: --after and --limit list one page of instance,
// incidents, definitions, locks and timers through the engine's keyset
// pages, the text ending with the flags of the next page while a page is
// full; bad values are named.
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

	var page []jobJSON
	cliJSON(t, schema, &page, "instance", "pi-pages", "--limit", "2")
	require.Len(t, page, 2)
	require.Equal(t, ids[0], page[0].ID)
	code, out, errOut := cli(t, schema, "instance", "pi-pages", "--limit", "2", "--after", id(ids[1]))
	require.Equal(t, exitOK, code, errOut)
	require.Contains(t, out, "\n"+id(ids[2])+" ")
	require.NotContains(t, out, "\n"+id(ids[1])+" ")
	require.Contains(t, out, "next page: --after "+id(ids[3])+" --limit 2\n")
	code, out, errOut = cli(t, schema, "instance", "pi-pages", "--limit", "2", "--after", id(ids[3]))
	require.Equal(t, exitOK, code, errOut)
	require.Contains(t, out, "\n"+id(ids[4])+" ")
	require.NotContains(t, out, "next page", "the last page is not full")
	code, out, errOut = cli(t, schema, "instance", "pi-pages", "--after", id(ids[4]))
	require.Equal(t, exitOK, code, errOut)
	require.Equal(t, "no more jobs\n", out)

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"instance", "pi-pages", "--limit", "-1"}, "--limit -1 is out of range: 1 to 1000"},
		{[]string{"instance", "pi-pages", "--limit", "1001"}, "--limit 1001 is out of range"},
		{[]string{"instance", "pi-pages", "--after", "abc"}, `--after "abc" is not a job id`},
		{[]string{"timers", "pi-pages", "--after", "-3"}, `--after "-3" is not a timer id`},
		{[]string{"incidents", "--all", "--limit", "5"}, "--after and --limit page the open incidents; not with --all or --job"},
	} {
		code, _, errOut := cli(t, schema, tc.args...)
		require.Equal(t, exitUsage, code, tc.args)
		require.Contains(t, errOut, tc.want, tc.args)
	}

	// Incidents: two open ones, one per page.
	for _, jobID := range ids[:2] {
		require.NoError(t, engine.SetJobRetries(ctx, jobID, 0))
	}
	var incidents []incidentJSON
	cliJSON(t, schema, &incidents, "incidents", "--limit", "1")
	require.Len(t, incidents, 1)
	code, out, errOut = cli(t, schema, "incidents", "--limit", "1", "--after", id(incidents[0].ID))
	require.Equal(t, exitOK, code, errOut)
	require.Contains(t, out, "next page: --after ")
	require.NotContains(t, out, "\n"+id(incidents[0].ID)+" ")

	var defs []definitionJSON
	cliJSON(t, schema, &defs, "definitions", "--limit", "1")
	require.Len(t, defs, 1)
	cliJSON(t, schema, &defs, "definitions", "--after", defs[0].ID)
	require.Empty(t, defs)

	code, out, errOut = cli(t, schema, "locks", "--limit", "10")
	require.Equal(t, exitOK, code, errOut)
	require.Equal(t, "exclusive scope in force: none recorded yet (the first client to start records its engine's; engines enforce process instance unless configured otherwise)\nno exclusive locks held\n", out)
	code, out, errOut = cli(t, schema, "timers", "pi-pages", "--limit", "10")
	require.Equal(t, exitOK, code, errOut)
	require.NotContains(t, out, "next page")
}
