package main

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river/rivershared/riversharedtest"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/index"
	"github.com/riverbpmn/riverbpmn/workflow"
)

// TestFairnessCommands: fairness-enable creates the tenant index of River's
// order (JSON says so), with order flags the index of that order, only it;
// fairness-disable drops every order's; both are idempotent.
func TestFairnessCommands(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url, schema := migratedSchema(t)
	db := []string{"--database-url", url, "--schema", schema}
	pool, err := pgxpool.New(ctx, url)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	engine, err := workflow.NewEngine(pool, &workflow.Config{Schema: schema})
	require.NoError(t, err)
	requireIndexes := func(want ...string) {
		t.Helper()
		got, err := engine.TenantFairnessIndexes(ctx)
		require.NoError(t, err)
		require.ElementsMatch(t, want, got)
	}

	for range 2 {
		code, out, errOut := runCLI(t, append([]string{"indexes", "enable", "fairness", "--json"}, db...)...)
		require.Equal(t, exitOK, code, errOut)
		require.JSONEq(t, `{"kind": "fairness", "indexes": ["river_bpmn_fetch_tenant"]}`, out)
	}
	requireIndexes("river_bpmn_fetch_tenant")
	code, out, errOut := runCLI(t, append([]string{"indexes", "enable", "fairness", "--by-priority", "--by-due-date"}, db...)...)
	require.Equal(t, exitOK, code, errOut)
	require.Equal(t, "fairness indexes: river_bpmn_fetch_tenant, river_bpmn_fetch_tenant_pd\n", out)
	requireIndexes("river_bpmn_fetch_tenant", "river_bpmn_fetch_tenant_pd")
	code, _, errOut = runCLI(t, append([]string{"indexes", "enable", "fairness", "--timers-first"}, db...)...)
	require.Equal(t, exitOK, code, errOut)
	requireIndexes("river_bpmn_fetch_tenant", "river_bpmn_fetch_tenant_pd", "river_bpmn_fetch_tenant_t")

	for range 2 {
		code, out, errOut = runCLI(t, append([]string{"indexes", "disable", "fairness"}, db...)...)
		require.Equal(t, exitOK, code, errOut)
		require.Equal(t, "fairness indexes: none\n", out)
		requireIndexes()
	}
}

// TestFetchIndexCommands: indexes enable fetch-order creates the fetch-order index
// of the order flags (and, for an order with timers first or due date, its
// head-of-key index), only those, and refuses River's order (no flag);
// indexes disable fetch-order drops every order's.
func TestFetchIndexCommands(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url, schema := migratedSchema(t)
	db := []string{"--database-url", url, "--schema", schema}
	pool, err := pgxpool.New(ctx, url)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	engine, err := workflow.NewEngine(pool, &workflow.Config{Schema: schema})
	require.NoError(t, err)
	requireIndexes := func(want ...string) {
		t.Helper()
		got, err := engine.FetchOrderIndexes(ctx)
		require.NoError(t, err)
		require.ElementsMatch(t, want, got)
	}
	requireIndexes()

	code, _, errOut := runCLI(t, append([]string{"indexes", "enable", "fetch-order"}, db...)...)
	require.Equal(t, exitUsage, code)
	require.Contains(t, errOut, "give --by-priority, --timers-first and/or --by-due-date")
	for range 2 {
		code, out, errOut := runCLI(t, append([]string{"indexes", "enable", "fetch-order", "--by-priority", "--json"}, db...)...)
		require.Equal(t, exitOK, code, errOut)
		require.JSONEq(t, `{"kind": "fetch-order", "indexes": ["river_bpmn_fetch_p"]}`, out)
	}
	requireIndexes("river_bpmn_fetch_p")
	code, out, errOut := runCLI(t, append([]string{"indexes", "enable", "fetch-order", "--timers-first", "--by-due-date"}, db...)...)
	require.Equal(t, exitOK, code, errOut)
	require.Contains(t, out, "fetch-order indexes: ")
	require.Contains(t, out, "river_bpmn_fetch_td")
	// With exclusive jobs (the default scope), an order with timers first or
	// due date also has its head-of-key index.
	requireIndexes("river_bpmn_fetch_p", "river_bpmn_fetch_td", "river_bpmn_job_exclusive_instance_td")

	code, out, errOut = runCLI(t, append([]string{"indexes", "disable", "fetch-order"}, db...)...)
	require.Equal(t, exitOK, code, errOut)
	require.Equal(t, "fetch-order indexes: none\n", out)
	requireIndexes()
}

// TestHeadIndexCommands: exclusive indexes enable creates the exclusive head-of-key
// index of the order flags, for the scope in force or the one given, and
// refuses orders whose head-of-key index a migration made; indexes list and
// exclusive indexes list show them; exclusive indexes disable drops every
// order's and leaves the fetch-order indexes.
func TestHeadIndexCommands(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url, schema := migratedSchema(t)
	db := []string{"--database-url", url, "--schema", schema}
	engine, err := workflow.NewEngine(riversharedtest.DBPool(ctx, t), &workflow.Config{Schema: schema})
	require.NoError(t, err)
	requireIndexes := func(want ...string) {
		t.Helper()
		got, err := engine.ExclusiveHeadIndexes(ctx)
		require.NoError(t, err)
		require.ElementsMatch(t, want, got)
	}
	requireIndexes()

	for _, args := range [][]string{{}, {"--by-priority"}} {
		code, _, errOut := runCLI(t, append(append([]string{"exclusive", "indexes", "enable"}, args...), db...)...)
		require.Equal(t, exitUsage, code, "%v", args)
		require.Contains(t, errOut, "give --timers-first and/or --by-due-date")
	}
	code, _, errOut := runCLI(t, append([]string{"exclusive", "indexes", "enable", "--by-due-date", "--exclusive-scope", "none"}, db...)...)
	require.Equal(t, exitUsage, code)
	require.Contains(t, errOut, "--exclusive-scope none enforces nothing")

	for range 2 {
		code, out, errOut := runCLI(t, append([]string{"exclusive", "indexes", "enable", "--by-priority", "--by-due-date", "--json"}, db...)...)
		require.Equal(t, exitOK, code, errOut)
		require.JSONEq(t, `{"kind": "head-of-key", "indexes": ["river_bpmn_job_exclusive_instance_pd"]}`, out)
	}
	requireIndexes("river_bpmn_job_exclusive_instance_pd")
	code, out, errOut := runCLI(t, append([]string{"exclusive", "indexes", "enable", "--timers-first", "--exclusive-scope", "root-process-instance"}, db...)...)
	require.Equal(t, exitOK, code, errOut)
	require.Contains(t, out, "head-of-key indexes: ")
	require.Contains(t, out, "river_bpmn_job_exclusive_root_t")
	requireIndexes("river_bpmn_job_exclusive_instance_pd", "river_bpmn_job_exclusive_root_t")

	code, _, errOut = runCLI(t, append([]string{"indexes", "enable", "fetch-order", "--by-priority"}, db...)...)
	require.Equal(t, exitOK, code, errOut)
	var all listOutput[*index.Index]
	code, out, errOut = runCLI(t, append([]string{"indexes", "list", "--json"}, db...)...)
	require.Equal(t, exitOK, code, errOut)
	require.NoError(t, json.Unmarshal([]byte(out), &all))
	require.ElementsMatch(t, []*index.Index{
		{Name: "river_bpmn_fetch_p", Family: "fetch-order", Enabled: true},
		{Name: "river_bpmn_job_exclusive_instance_pd", Family: "exclusive-head-of-key", Enabled: true},
		{Name: "river_bpmn_job_exclusive_root_t", Family: "exclusive-head-of-key", Enabled: true},
	}, all.Items, "every on-demand index present, with its family")
	code, out, errOut = runCLI(t, append([]string{"exclusive", "indexes", "list"}, db...)...)
	require.Equal(t, exitOK, code, errOut)
	require.Contains(t, out, "river_bpmn_job_exclusive_root_t")
	require.NotContains(t, out, "river_bpmn_fetch_p", "the head-of-key indexes only")
	code, out, errOut = runCLI(t, append([]string{"exclusive", "indexes", "disable"}, db...)...)
	require.Equal(t, exitOK, code, errOut)
	require.Equal(t, "head-of-key indexes: none\n", out)
	requireIndexes()
	fetch, err := engine.FetchOrderIndexes(ctx)
	require.NoError(t, err)
	require.Equal(t, []string{"river_bpmn_fetch_p"}, fetch, "the fetch-order indexes stay")
}
