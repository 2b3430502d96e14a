package main

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river/rivershared/riversharedtest"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/bulk"
	"github.com/riverbpmn/riverbpmn/incident"
	"github.com/riverbpmn/riverbpmn/workflow"
)

// TestCockpitListVerbs: incidents list filters incidents and incidents
// groups groups them as the console does, instances tree prints a call hierarchy from any of its
// instances, bulk list|show the bulk actions' history; each with --json.
func TestCockpitListVerbs(t *testing.T) {
	ctx := context.Background()
	url, schema := migratedSchema(t)
	pool := riversharedtest.DBPool(ctx, t)
	engine, err := workflow.NewEngine(pool, &workflow.Config{Schema: schema})
	require.NoError(t, err)
	ids := map[string]int64{}
	rows, err := pool.Query(ctx, `
INSERT INTO `+pgx.Identifier{schema}.Sanitize()+`.river_job (args, kind, max_attempts, metadata, priority, queue, state, scheduled_at)
SELECT '{}', 'cli_task', 3,
    jsonb_build_object('bpmn', jsonb_build_object('process_instance_id', x.inst, 'root_process_instance_id', 'root-9',
        'process_definition_key', x.def, 'activity_id', x.act)),
    1, 'default', 'scheduled', now() + interval '1 day'
FROM (VALUES ('root-9', 'order', 'charge'), ('child-9a', 'payment', 'charge'), ('child-9b', 'payment', 'ship')) x (inst, def, act)
RETURNING id, metadata -> 'bpmn' ->> 'instance'`) // rewritten to the labelled form on insert (migration 028)
	require.NoError(t, err)
	for rows.Next() {
		var (
			id   int64
			inst string
		)
		require.NoError(t, rows.Scan(&id, &inst))
		ids[inst] = id
	}
	require.NoError(t, rows.Err())
	for _, inst := range []string{"child-9a", "child-9b"} {
		require.NoError(t, engine.SetJobRetries(ctx, ids[inst], 0)) // incidents
	}

	run := func(into any, args ...string) string {
		t.Helper()
		code, out, errOut := runCLI(t, append(args, "--database-url", url, "--schema", schema)...)
		require.Equal(t, 0, code, errOut)
		if into != nil {
			require.NoError(t, json.Unmarshal([]byte(out), into), out)
		}
		return out
	}
	var list listOutput[*incident.Incident]
	run(&list, "incidents", "list", "--json")
	require.Len(t, list.Items, 2)
	list = listOutput[*incident.Incident]{}
	run(&list, "incidents", "list", "--activity", "ship", "--json")
	require.Len(t, list.Items, 1)
	require.Equal(t, "child-9b", list.Items[0].ProcessInstanceID)
	list = listOutput[*incident.Incident]{}
	run(&list, "incidents", "list", "--job", strconv.FormatInt(ids["child-9a"], 10), "--json")
	require.Len(t, list.Items, 1)
	require.Equal(t, "child-9a", list.Items[0].ProcessInstanceID)
	list = listOutput[*incident.Incident]{}
	run(&list, "incidents", "list", "--definition", "order", "--json")
	require.Empty(t, list.Items)
	list = listOutput[*incident.Incident]{}
	run(&list, "incidents", "list", "--older-than", "1h", "--json")
	require.Empty(t, list.Items, "opened just now")
	var groups listOutput[*incident.Group]
	run(&groups, "incidents", "groups", "--json")
	require.Len(t, groups.Items, 1)
	require.Equal(t, int64(2), groups.Items[0].Count)
	// Resolved ones on demand.
	require.NoError(t, engine.SetJobRetries(ctx, ids["child-9a"], 1))
	list = listOutput[*incident.Incident]{}
	run(&list, "incidents", "list", "--json")
	require.Len(t, list.Items, 1)
	list = listOutput[*incident.Incident]{}
	run(&list, "incidents", "list", "--resolved", "--json")
	require.Len(t, list.Items, 2)
	code, _, errOut := runCLI(t, "incidents", "list", "--group-by", "tenant", "--database-url", url, "--schema", schema)
	require.NotEqual(t, 0, code)
	require.Contains(t, errOut, `--group-by "tenant": only error is known`)

	var tree instanceTreeOutput
	run(&tree, "instances", "tree", "child-9b", "--json")
	require.Equal(t, "root-9", tree.Root)
	require.Len(t, tree.Members, 3)
	for _, m := range tree.Members {
		if m.ProcessInstanceID == "child-9b" {
			require.Equal(t, int64(1), m.OpenIncidents)
		}
	}
	out := run(nil, "instances", "tree", "root-9")
	require.Contains(t, out, "root-9 (this one, root)")
	require.Contains(t, out, "child-9b")
	code, _, _ = runCLI(t, "instances", "tree", "nobody", "--database-url", url, "--schema", schema)
	require.NotEqual(t, 0, code)

	op, err := engine.CreateBulkOperation(ctx, &bulk.Spec{Action: bulk.ActionSuspend, Jobs: &bulk.Jobs{JobIDs: []int64{ids["root-9"]}}}, "suspend 1 job", "test")
	require.NoError(t, err)
	var ops listOutput[*bulk.Operation]
	run(&ops, "bulk", "list", "--json")
	require.Len(t, ops.Items, 1)
	require.Equal(t, op.ID, ops.Items[0].ID)
	var one bulk.Operation
	run(&one, "bulk", "show", strconv.FormatInt(op.ID, 10), "--json")
	require.Equal(t, "suspend 1 job", one.Description)
	require.Equal(t, bulk.ActionSuspend, one.Action)
	out = run(nil, "bulk", "show", strconv.FormatInt(op.ID, 10))
	require.Contains(t, out, "suspend 1 job")
}
