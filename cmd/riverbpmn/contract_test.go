package main

// What every verb promises a script: the exit codes of the package doc, one
// flag name per concept, and no secret in any output.

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivershared/riversharedtest"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/workflow"
)

// TestEveryVerbRejectsAnUnknownFlagAsUsage: every command of the tree,
// given a flag it does not have, exits 2 and prints its flags, under its
// path, whose --database-url names $DATABASE_URL; with --help it exits 0.
func TestEveryVerbRejectsAnUnknownFlagAsUsage(t *testing.T) {
	for _, cmd := range visibleCommands() {
		path := strings.Fields(cmd.path)
		code, out, errOut := runCLI(t, append(path, "--no-such-flag")...)
		require.Equal(t, exitUsage, code, "%s: %s", cmd.path, errOut)
		require.Empty(t, out, cmd.path)
		require.Contains(t, errOut, "flag provided but not defined: -no-such-flag", cmd.path)
		require.Contains(t, errOut, "Usage of riverbpmn "+cmd.path+":", cmd.path)
		require.Contains(t, errOut, "$DATABASE_URL", cmd.path)

		code, _, errOut = runCLI(t, append(path, "--help")...)
		require.Equal(t, exitOK, code, cmd.path)
		require.NotContains(t, errOut, "flag provided but not defined", cmd.path)
	}
}

// TestExitCodes runs verbs against a migrated schema and checks the exit
// code of the package doc: 2 for a wrong command line (a negative id
// included, whichever way it is given), 3 for an id naming nothing (a
// process instance no job belongs to included, for every verb taking one).
func TestExitCodes(t *testing.T) {
	ctx := context.Background()
	engine, schema := opsSetup(t)
	client, err := workflow.NewClient(engine, &river.Config{TestOnly: true})
	require.NoError(t, err)
	res, err := client.Insert(ctx, opsArgs{Instance: "pi-known"}, nil)
	require.NoError(t, err)
	jobID := strconv.FormatInt(res.Job.ID, 10)

	for _, tt := range []struct {
		args []string
		want int
	}{
		// Usage: bad ids, missing or extra arguments, conflicting flags.
		{[]string{"jobs", "show", "-5"}, exitUsage},
		{[]string{"jobs", "show", "abc"}, exitUsage},
		{[]string{"jobs", "show"}, exitUsage},
		{[]string{"jobs", "show", "1", "2"}, exitUsage},
		{[]string{"incidents", "list", "--job", "-1"}, exitUsage},
		{[]string{"jobs", "set-retries", "-5", "1"}, exitUsage},
		{[]string{"jobs", "deps", "-5"}, exitUsage},
		{[]string{"jobs", "queue", "-5"}, exitUsage},
		{[]string{"jobs", "queue"}, exitUsage},
		{[]string{"jobs", "status", "-5"}, exitUsage},
		{[]string{"jobs", "stop", "-5"}, exitUsage},
		{[]string{"jobs", "stop"}, exitUsage},
		{[]string{"instances", "status"}, exitUsage},
		{[]string{"instances", "status", "a", "--process-instance", "b"}, exitUsage},
		{[]string{"timers", "show", "-5"}, exitUsage},
		{[]string{"instances", "timers"}, exitUsage},
		{[]string{"instances", "jobs"}, exitUsage},
		{[]string{"instances", "jobs", "pi-known", "--after", "x"}, exitUsage},
		{[]string{"suspensions", "suspend"}, exitUsage},
		{[]string{"definitions", "set-priority", "jd", "high"}, exitUsage},
		{[]string{"indexes", "enable", "fetch-order"}, exitUsage},
		{[]string{"indexes", "enable", "btree"}, exitUsage},
		{[]string{"timers", "prune", "--older-than", "-1h"}, exitUsage},
		{[]string{"events", "list", "--after", "1"}, exitUsage},
		{[]string{"jobs", "list", "--limit", "1001"}, exitUsage},
		// Not found: unknown ids, and a process instance no job belongs
		// to, however the verb is asked.
		{[]string{"jobs", "show", "987654321"}, exitNotFound},
		{[]string{"incidents", "list", "--job", "987654321"}, exitNotFound},
		{[]string{"jobs", "set-retries", "987654321", "1"}, exitNotFound},
		{[]string{"jobs", "deps", "987654321"}, exitNotFound},
		{[]string{"jobs", "queue", "987654321"}, exitNotFound},
		{[]string{"jobs", "status", "987654321"}, exitNotFound},
		{[]string{"jobs", "stop", "987654321"}, exitNotFound},
		{[]string{"exclusive", "wait", "987654321"}, exitNotFound},
		{[]string{"timers", "show", "987654321"}, exitNotFound},
		{[]string{"timers", "cancel", "987654321"}, exitNotFound},
		{[]string{"suspensions", "suspend", "--job", "987654321"}, exitNotFound},
		{[]string{"instances", "jobs", "pi-unknown"}, exitNotFound},
		{[]string{"instances", "timers", "pi-unknown"}, exitNotFound},
		{[]string{"instances", "status", "pi-unknown"}, exitNotFound},
		{[]string{"instances", "status", "--process-instance", "pi-unknown"}, exitNotFound},
		{[]string{"instances", "status", "--instance", "pi-unknown"}, exitNotFound},
		{[]string{"instances", "stop", "pi-unknown"}, exitNotFound},
		{[]string{"suspensions", "suspend", "--process-instance", "pi-unknown"}, exitNotFound},
		{[]string{"instances", "queue", "pi-unknown"}, exitNotFound},
		// Found: the same verbs on what exists.
		{[]string{"jobs", "show", jobID}, exitOK},
		{[]string{"incidents", "list", "--job", jobID}, exitOK},
		{[]string{"instances", "jobs", "pi-known"}, exitOK},
		{[]string{"instances", "timers", "pi-known"}, exitOK}, // jobs, no timer: an empty list
		{[]string{"instances", "status", "pi-known"}, exitOK},
		{[]string{"instances", "status", "--process-instance", "pi-known"}, exitOK},
		{[]string{"jobs", "status", jobID}, exitOK},
		{[]string{"exclusive", "wait", jobID}, exitOK},
	} {
		code, _, errOut := cli(t, schema, tt.args...)
		require.Equal(t, tt.want, code, "%v: %s", tt.args, errOut)
	}
}

// TestProcessInstanceFlagAlias: --instance, the name some verbs took
// before, still works where --process-instance is the canonical name, and
// gives the same result.
func TestProcessInstanceFlagAlias(t *testing.T) {
	ctx := context.Background()
	engine, schema := opsSetup(t)
	client, err := workflow.NewClient(engine, &river.Config{TestOnly: true})
	require.NoError(t, err)
	_, err = client.Insert(ctx, opsArgs{Instance: "pi-alias"}, nil)
	require.NoError(t, err)
	for _, verb := range []string{"progress", "instance", "timers"} {
		var canonical, alias any
		cliJSON(t, schema, &canonical, verb, "--process-instance", "pi-alias")
		cliJSON(t, schema, &alias, verb, "--instance", "pi-alias")
		require.Equal(t, canonical, alias, verb)
	}
	for _, flag := range []string{"--process-instance", "--instance"} {
		code, _, errOut := cli(t, schema, "events", flag, "pi-alias")
		require.Equal(t, exitOK, code, "events %s: %s", flag, errOut)
	}
	var statuses []map[string]any
	cliJSON(t, schema, &statuses, "progress", "--instance", "pi-alias")
	require.Len(t, statuses, 1)
}

// TestNoSecretInOutput: with a password in $DATABASE_URL or in
// --database-url, nothing printed shows it: neither the usage text of a
// mistyped flag (which names $DATABASE_URL), nor -h, nor a connection error,
// nor the error of a URL pgx cannot parse, nor a key/value connection
// string's.
func TestNoSecretInOutput(t *testing.T) {
	const password = "s3cret-Pa55"
	// Port 1: nothing listens, the connection is refused at once.
	envURL := "postgres://app:" + password + "@127.0.0.1:1/app?sslmode=disable&connect_timeout=5"
	t.Setenv("DATABASE_URL", envURL)

	requireClean := func(args []string, code int, out, errOut string) {
		t.Helper()
		require.NotContains(t, out, password, "%v", args)
		require.NotContains(t, errOut, password, "%v", args)
	}
	for _, cmd := range visibleCommands() {
		path := strings.Fields(cmd.path)
		for _, args := range [][]string{append(path, "--no-such-flag"), append(path, "-h")} {
			code, out, errOut := runCLI(t, args...)
			requireClean(args, code, out, errOut)
			require.Contains(t, errOut, "$DATABASE_URL", "%v", args)
		}
	}
	for _, tt := range []struct {
		args []string
		want int
	}{
		{[]string{"jobs", "show", "1"}, exitError}, // $DATABASE_URL, refused
		{[]string{"migrate", "up"}, exitError},     // the same
		{[]string{"jobs", "show", "1", "--database-url", "postgres://app:" + password + "@127.0.0.1:1/app"}, exitError},            // the flag
		{[]string{"jobs", "show", "1", "--database-url=postgres://app:" + password + "@127.0.0.1:notaport/app"}, exitError},        // unparseable
		{[]string{"jobs", "show", "1", "--database-url", "host=127.0.0.1 port=1 user=app password=" + password}, exitError},        // key/value
		{[]string{"jobs", "show", "1", "--database-url", "host=127.0.0.1 port=1 user=app password='" + password + "'"}, exitError}, // quoted
		{[]string{"jobs", "show", "-1"}, exitUsage},
		{[]string{"jobs", "show", "--database-url", "postgres://app:" + password + "@127.0.0.1:1/app", "--bogus"}, exitUsage},
	} {
		code, out, errOut := runCLI(t, tt.args...)
		require.Equal(t, tt.want, code, "%v: %s", tt.args, errOut)
		require.NotEmpty(t, errOut, "%v", tt.args)
		requireClean(tt.args, code, out, errOut)
	}
}

func TestRedactSecrets(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"cannot parse `postgres://u:pw@h/db`: x", "cannot parse `postgres://u:xxxxx@h/db`: x"},
		{"postgresql://u:p%40w@h:5432/db?sslmode=disable", "postgresql://u:xxxxx@h:5432/db?sslmode=disable"},
		{"postgres://u@h/db", "postgres://u@h/db"},
		{"host=h password=pw user=u", "host=h password=xxxxx user=u"},
		{"host=h password = 'p w' user=u", "host=h password = xxxxx user=u"},
		{"failed: literal-secret shown", "failed: xxxxx shown"},
	} {
		require.Equal(t, tt.want, redactSecrets(tt.in, []string{"literal-secret"}), tt.in)
	}
	secrets := urlPasswords([]string{"jobs", "show", "--database-url", "postgres://u:p%40w@h/db"})
	require.Contains(t, secrets, "p@w")
	require.Contains(t, secrets, "p%40w")
	secrets = urlPasswords([]string{"jobs", "show", "--database-url=postgres://u:pw2@h/db"})
	require.Contains(t, secrets, "pw2")
}

// TestMigrateUpConcurrentCLI: 8 migrate-up runs at once on one fresh schema,
// each with its own pool, as replicas migrating at boot: all succeed (the
// migration lock of workflow.MigrateUp, which the verb uses).
func TestMigrateUpConcurrentCLI(t *testing.T) {
	url, schema := riversharedtest.TestDatabaseURL(), newSchema(t)
	var wg sync.WaitGroup
	codes := make([]int, 8)
	errOuts := make([]string, 8)
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i], _, errOuts[i] = runCLI(t, "migrate", "up", "--database-url", url, "--schema", schema)
		}()
	}
	wg.Wait()
	for i, code := range codes {
		require.Equal(t, exitOK, code, "run %d: %s", i, errOuts[i])
	}
	var status struct {
		Schema *workflow.MigrationStatus `json:"schema"`
	}
	code, out, errOut := runCLI(t, "version", "--database-url", url, "--schema", schema, "--json")
	require.Equal(t, exitOK, code, errOut)
	require.NoError(t, json.Unmarshal([]byte(out), &status), out)
	require.Empty(t, status.Schema.BPMN.Missing, fmt.Sprint(status.Schema.BPMN))
	require.Empty(t, status.Schema.Main.Missing)
}

// TestJSONErrors: with --json, an error is one JSON object on stderr (the
// message, the verb, the exit code; after a flag error, the verb's flags),
// nothing on stdout, with the exit codes of the text form, and no password
// of a database URL, plain or escaped.
func TestJSONErrors(t *testing.T) {
	_, schema := opsSetup(t)
	decode := func(args []string, errOut string) jsonError {
		t.Helper()
		var e jsonError
		dec := json.NewDecoder(strings.NewReader(errOut))
		dec.DisallowUnknownFields()
		require.NoError(t, dec.Decode(&e), "%v: %s", args, errOut)
		require.False(t, dec.More(), "%v: one JSON object: %s", args, errOut)
		return e
	}
	for _, tt := range []struct {
		args      []string
		code      int
		verb, msg string
		usage     bool
	}{
		{[]string{"jobs", "show", "999999"}, exitNotFound, "jobs show", "job 999999: not found", false},
		{[]string{"why", "abc"}, exitUsage, "why", `JOB_ID "abc" is not a job id`, false},
		{[]string{"timers", "list", "--no-such-flag"}, exitUsage, "timers list", "flag provided but not defined: -no-such-flag", true},
		{[]string{"instances", "list", "--state", "stuck"}, exitUsage, "instances list", `state "stuck" is not a job state`, false},
		{[]string{"jobs", "set-retries", "999999", "2"}, exitNotFound, "jobs set-retries", "not found", false},
		{[]string{"jobs", "lsit"}, exitUsage, "jobs", `unknown verb "lsit" of "jobs"`, false},
		// A deprecated alias: the error names the command it ran.
		{[]string{"job", "999999"}, exitNotFound, "jobs show", "job 999999: not found", false},
	} {
		args := append(tt.args, "--json")
		code, out, errOut := cli(t, schema, args...)
		require.Equal(t, tt.code, code, "%v: %s", args, errOut)
		require.Empty(t, out, "%v", args)
		e := decode(args, errOut)
		require.Equal(t, tt.verb, e.Verb, "%v", args)
		require.Equal(t, tt.code, e.ExitCode, "%v", args)
		require.Contains(t, e.Error, tt.msg, "%v", args)
		require.Equal(t, tt.usage, strings.Contains(e.Usage, "-database-url"), "%v: %q", args, e.Usage)

		// The text form: the same exit code, not JSON.
		code, _, errOut = cli(t, schema, tt.args...)
		require.Equal(t, tt.code, code, "%v", tt.args)
		require.Regexp(t, "(^|\n)riverbpmn "+regexp.QuoteMeta(tt.verb)+": ", errOut, "%v", tt.args)
	}
	code, _, errOut := runCLI(t, "no-such-verb", "--json")
	require.Equal(t, exitUsage, code)
	require.Contains(t, decode(nil, errOut).Error, `unknown command "no-such-verb"`)
	code, _, errOut = runCLI(t, "jobs", "show", "--json=false", "-5")
	require.Equal(t, exitUsage, code)
	require.True(t, strings.HasPrefix(errOut, "riverbpmn jobs show: "), "--json=false: text: %s", errOut)

	// A password with characters JSON escapes: neither it nor its escaped
	// form shows, given as the flag or as $DATABASE_URL.
	const password = "s3cret&<Pa55>"
	dbURL := "postgres://app:" + password + "@127.0.0.1:1/app?sslmode=disable&connect_timeout=5"
	for _, run := range []func() (int, string, string){
		func() (int, string, string) { return runCLI(t, "jobs", "show", "1", "--json", "--database-url", dbURL) },
		func() (int, string, string) {
			t.Setenv("DATABASE_URL", dbURL)
			return runCLI(t, "jobs", "show", "1", "--json")
		},
		// Unparseable: pgx's message quotes the URL.
		func() (int, string, string) {
			return runCLI(t, "jobs", "show", "1", "--json", "--database-url", "postgres://app:"+password+"@127.0.0.1:notaport/app")
		},
	} {
		code, out, errOut := run()
		require.Equal(t, exitError, code, errOut)
		require.Empty(t, out)
		e := decode(nil, errOut)
		require.Equal(t, exitError, e.ExitCode)
		require.Contains(t, e.Error, "--database-url")
		for _, leak := range []string{password, "s3cret", `s3cret\u0026`} {
			require.NotContains(t, errOut, leak)
		}
	}
}
