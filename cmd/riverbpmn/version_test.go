package main

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river/rivershared/riversharedtest"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/workflow"
)

// TestVersionReports: version reports (exit 0) what is applied and missing
// on an empty schema, a migrated one, and one whose main line was rolled back
// below what riverbpmn needs.
func TestVersionReports(t *testing.T) {
	ctx := context.Background()
	url := riversharedtest.TestDatabaseURL()
	schema := newSchema(t)
	latest := latestBPMNVersion(t)

	code, out, errOut := runCLI(t, "version", "--database-url", url, "--schema", schema)
	require.Equal(t, exitOK, code, errOut)
	require.Contains(t, out, "schema main line: not applied\n  applied: none; missing: 001-")
	require.Contains(t, out, fmt.Sprintf("schema riverbpmn line: not applied\n  applied: none; missing: 001-%03d (latest known: %03d)\n", latest, latest))
	require.Contains(t, out, "warning: River's main line is not applied in schema")
	require.Contains(t, out, "run `riverbpmn migrate up`")

	code, _, errOut = runCLI(t, "migrate", "up", "--database-url", url, "--schema", schema)
	require.Equal(t, exitOK, code, errOut)
	code, out, errOut = runCLI(t, "version", "--database-url", url, "--schema", schema)
	require.Equal(t, exitOK, code, errOut)
	require.Contains(t, out, fmt.Sprintf("schema riverbpmn line: version %03d\n  applied: 001-%03d; missing: none", latest, latest))
	require.NotContains(t, out, "warning")

	code, out, errOut = runCLI(t, "version", "--json", "--database-url", url, "--schema", schema)
	require.Equal(t, exitOK, code, errOut)
	var rep struct {
		River  string                   `json:"river"`
		Schema workflow.MigrationStatus `json:"schema"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rep), out)
	require.Equal(t, "v0.51.1", rep.River)
	require.Equal(t, latest, rep.Schema.BPMN.Current())
	require.Empty(t, rep.Schema.Warnings)
	mainLatest := rep.Schema.Main.Latest

	// River's main line rolled back (as `river migrate-down` would record
	// it): version warns, and still exits 0.
	pool := riversharedtest.DBPool(ctx, t)
	_, err := pool.Exec(ctx, "DELETE FROM "+pgx.Identifier{schema, "river_migration"}.Sanitize()+" WHERE line = 'main' AND version = $1", mainLatest)
	require.NoError(t, err)
	code, out, errOut = runCLI(t, "version", "--database-url", url, "--schema", schema)
	require.Equal(t, exitOK, code, errOut)
	require.Contains(t, out, fmt.Sprintf("missing: %03d (latest known: %03d)", mainLatest, mainLatest))
	require.Contains(t, out, fmt.Sprintf("warning: River's main line is at version %d, below version %d that riverbpmn (built with this River) needs", mainLatest-1, mainLatest))
}
