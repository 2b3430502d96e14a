package main

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river/riverdbtest"
	"github.com/riverqueue/river/rivershared/riversharedtest"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/riverbpmntest"
	"github.com/riverbpmn/riverbpmn/workflow"
)

// latestBPMNVersion returns the highest version of riverbpmn's embedded
// migration line.
func latestBPMNVersion(t *testing.T) int {
	t.Helper()
	engine, err := workflow.NewEngine(nil, nil)
	require.NoError(t, err)
	entries, err := fs.ReadDir(engine.Driver().GetMigrationFS(workflow.MigrationLine), "migration/riverbpmn")
	require.NoError(t, err)
	latest := 0
	for _, entry := range entries {
		var version int
		if _, err := fmt.Sscanf(entry.Name(), "%03d_", &version); err == nil {
			latest = max(latest, version)
		}
	}
	require.Positive(t, latest)
	return latest
}

// newSchema creates an empty schema for one test and drops it afterwards.
func newSchema(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	pool := riversharedtest.DBPool(ctx, t)
	schema := fmt.Sprintf("riverbpmn_cli_%d", time.Now().UnixNano())
	_, err := pool.Exec(ctx, "CREATE SCHEMA "+pgx.Identifier{schema}.Sanitize())
	require.NoError(t, err)
	t.Cleanup(func() {
		_, err := pool.Exec(context.Background(), "DROP SCHEMA "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
		require.NoError(t, err)
	})
	return schema
}

// migratedSchema returns the test database's URL and a test schema with
// both migration lines (riverdbtest.TestSchema; TestMigrateCommands tests
// migrate-up itself). The schema is not reused: verbs create indexes and
// triggers in it.
func migratedSchema(t *testing.T) (url, schema string) {
	t.Helper()
	return riversharedtest.TestDatabaseURL(), riverdbtest.TestSchema(context.Background(), t, riverbpmntest.Driver(t), &riverdbtest.TestSchemaOpts{DisableReuse: true})
}

func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(context.Background(), args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestMigrateCommands(t *testing.T) {
	url := riversharedtest.TestDatabaseURL()
	schema := newSchema(t)

	code, out, errOut := runCLI(t, "migrate", "up", "--database-url", url, "--schema", schema)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "main: applied up 001 create river migration")
	require.Contains(t, out, "riverbpmn: applied up 001 process instance index")

	code, out, errOut = runCLI(t, "migrate", "up", "--database-url", url, "--schema", schema)
	require.Equal(t, 0, code, errOut)
	require.Equal(t, "main: no migrations to apply (up)\nriverbpmn: no migrations to apply (up)\n", out, "idempotent")

	code, out, errOut = runCLI(t, "version", "--database-url", url, "--schema", schema)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "river v0.51.1\n")
	require.Contains(t, out, fmt.Sprintf("schema riverbpmn line: version %03d\n", latestBPMNVersion(t)))

	code, out, errOut = runCLI(t, "migrate", "down", "--database-url", url, "--schema", schema)
	require.Equal(t, 0, code, errOut)
	require.Equal(t, 1, strings.Count(out, "riverbpmn: applied down"), "one step by default:\n%s", out)

	code, out, errOut = runCLI(t, "migrate", "down", "--target-version", "-1", "--database-url", url, "--schema", schema)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "riverbpmn: applied down 001 process instance index")
	require.NotContains(t, out, "main:")

	code, out, _ = runCLI(t, "version", "--database-url", url, "--schema", schema)
	require.Equal(t, 0, code)
	require.Contains(t, out, "schema riverbpmn line: not applied\n")
}

func TestMigrateErrors(t *testing.T) {
	url := riversharedtest.TestDatabaseURL()

	t.Run("MainLineMissing", func(t *testing.T) {
		schema := newSchema(t)
		code, _, errOut := runCLI(t, "migrate", "down", "--database-url", url, "--schema", schema)
		require.Equal(t, 1, code)
		require.Contains(t, errOut, fmt.Sprintf("riverbpmn migrate down: workflow: schema %q: River's main migration line is not applied", schema))

		code, _, errOut = runCLI(t, "migrate", "up", "--skip-main", "--database-url", url, "--schema", schema)
		require.Equal(t, 1, code)
		require.Contains(t, errOut, "River's main migration line is not applied")
	})

	t.Run("NoDatabaseURL", func(t *testing.T) {
		t.Setenv("DATABASE_URL", "")
		code, _, errOut := runCLI(t, "migrate", "up")
		require.Equal(t, exitUsage, code)
		require.Contains(t, errOut, "--database-url is required")
	})

	t.Run("UnknownCommand", func(t *testing.T) {
		code, _, errOut := runCLI(t, "migrate-sideways")
		require.Equal(t, 2, code)
		require.Contains(t, errOut, `unknown command "migrate-sideways"`)
	})

	t.Run("StrayArgument", func(t *testing.T) {
		code, _, errOut := runCLI(t, "version", "extra")
		require.Equal(t, exitUsage, code)
		require.Contains(t, errOut, `unexpected argument "extra"`)
	})
}

// TestUsageFromCommandTable: --help prints the command table's visible
// commands in its order, no deprecated alias, the summaries in one column
// after the longest path and wrapped within usageWidth columns; a noun's
// --help its own commands, laid out for its longest path; the CLI reference
// names every command and every deprecated alias.
func TestUsageFromCommandTable(t *testing.T) {
	layout := func(errOut string, cmds []command) {
		t.Helper()
		width := 0
		for _, cmd := range cmds {
			width = max(width, len(cmd.path))
		}
		column := 2 + width + 2
		var names []string
		for _, line := range strings.Split(errOut, "\n") {
			if !strings.HasPrefix(line, "  ") {
				continue
			}
			require.LessOrEqual(t, len(line), usageWidth, "%q", line)
			require.Greater(t, len(line), column, "%q", line)
			require.NotEqual(t, ' ', rune(line[column]), "the summary starts at column %d: %q", column, line)
			require.Equal(t, strings.Repeat(" ", 2), line[column-2:column], "%q", line)
			if name := strings.TrimSpace(line[:column]); name != "" {
				names = append(names, name)
			}
		}
		var want []string
		for _, cmd := range cmds {
			want = append(want, cmd.path)
		}
		require.Equal(t, want, names)
	}
	code, out, errOut := runCLI(t, "--help")
	require.Equal(t, exitOK, code)
	require.Empty(t, out)
	require.Greater(t, len("exclusive locks delete-stale"), 13, "a path longer than the old fixed column")
	layout(errOut, visibleCommands())
	for _, a := range aliases() {
		require.NotContains(t, errOut, "  "+a.path+"  ", "deprecated aliases are hidden")
	}

	code, _, errOut = runCLI(t, "timers", "--help")
	require.Equal(t, exitOK, code)
	var timers []command
	for _, cmd := range visibleCommands() {
		if cmd.noun() == "timers" {
			timers = append(timers, cmd)
		}
	}
	layout(errOut, timers)
	code, _, errOut = runCLI(t, "exclusive", "locks")
	require.Equal(t, exitUsage, code, "a noun without a verb")
	require.Contains(t, errOut, `"exclusive locks" needs a verb`)
	require.Contains(t, errOut, "exclusive locks delete-stale")
	code, _, errOut = runCLI(t, "jobs", "lsit")
	require.Equal(t, exitUsage, code)
	require.Contains(t, errOut, `unknown verb "lsit" of "jobs"`)

	reference, err := os.ReadFile("../../docs/operating/cli.md")
	require.NoError(t, err)
	for _, cmd := range commands() {
		require.Regexp(t, "(?m)^\\| .*`"+regexp.QuoteMeta(cmd.path)+"[` ]", string(reference), "docs/operating/cli.md's tables name %s", cmd.path)
	}
}
