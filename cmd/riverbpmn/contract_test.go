package main

// What every verb promises a script: the exit codes of the package doc, one
// flag name per concept, and no secret in any output.

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivershared/riversharedtest"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/workflow"
)

// TestEveryVerbRejectsAnUnknownFlagAsUsage: every verb of the verb table,
// given a flag it does not have, exits 2 and prints its flags, whose
// --database-url names $DATABASE_URL.
func TestEveryVerbRejectsAnUnknownFlagAsUsage(t *testing.T) {
	for _, cmd := range commands() {
		code, out, errOut := runCLI(t, cmd.name, "--no-such-flag")
		require.Equal(t, exitUsage, code, "%s: %s", cmd.name, errOut)
		require.Empty(t, out, cmd.name)
		require.Contains(t, errOut, "flag provided but not defined: -no-such-flag", cmd.name)
		require.Contains(t, errOut, "Usage of riverbpmn "+cmd.name+":", cmd.name)
		require.Contains(t, errOut, "$DATABASE_URL", cmd.name)

		code, _, errOut = runCLI(t, cmd.name, "--help")
		require.Equal(t, exitOK, code, cmd.name)
		require.NotContains(t, errOut, "flag provided but not defined", cmd.name)
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
		{[]string{"job", "-5"}, exitUsage},
		{[]string{"job", "abc"}, exitUsage},
		{[]string{"job"}, exitUsage},
		{[]string{"job", "1", "2"}, exitUsage},
		{[]string{"incidents", "--job", "-1"}, exitUsage},
		{[]string{"retries", "-5", "1"}, exitUsage},
		{[]string{"deps", "-5"}, exitUsage},
		{[]string{"queue", "-5"}, exitUsage},
		{[]string{"progress", "--job", "-5"}, exitUsage},
		{[]string{"stop", "--job", "-5"}, exitUsage},
		{[]string{"stop"}, exitUsage},
		{[]string{"progress", "--job", "1", "--process-instance", "pi"}, exitUsage},
		{[]string{"timer", "-5"}, exitUsage},
		{[]string{"timers"}, exitUsage},
		{[]string{"instance"}, exitUsage},
		{[]string{"instance", "a", "--process-instance", "b"}, exitUsage},
		{[]string{"suspend"}, exitUsage},
		{[]string{"priority", "bump"}, exitUsage},
		{[]string{"fetch-index-enable"}, exitUsage},
		{[]string{"timer-prune", "--older-than", "-1h"}, exitUsage},
		{[]string{"events", "--before", "1:1"}, exitUsage},
		// Not found: unknown ids, and a process instance no job belongs
		// to, however the verb is asked.
		{[]string{"job", "987654321"}, exitNotFound},
		{[]string{"incidents", "--job", "987654321"}, exitNotFound},
		{[]string{"retries", "987654321", "1"}, exitNotFound},
		{[]string{"deps", "987654321"}, exitNotFound},
		{[]string{"queue", "987654321"}, exitNotFound},
		{[]string{"progress", "--job", "987654321"}, exitNotFound},
		{[]string{"stop", "--job", "987654321"}, exitNotFound},
		{[]string{"timer", "987654321"}, exitNotFound},
		{[]string{"timer-cancel", "987654321"}, exitNotFound},
		{[]string{"suspend", "--job", "987654321"}, exitNotFound},
		{[]string{"instance", "pi-unknown"}, exitNotFound},
		{[]string{"instance", "--process-instance", "pi-unknown"}, exitNotFound},
		{[]string{"timers", "pi-unknown"}, exitNotFound},
		{[]string{"timers", "--process-instance", "pi-unknown"}, exitNotFound},
		{[]string{"progress", "--process-instance", "pi-unknown"}, exitNotFound},
		{[]string{"progress", "--instance", "pi-unknown"}, exitNotFound},
		{[]string{"stop", "--process-instance", "pi-unknown"}, exitNotFound},
		{[]string{"suspend", "--process-instance", "pi-unknown"}, exitNotFound},
		{[]string{"queue", "--process-instance", "pi-unknown"}, exitNotFound},
		// Found: the same verbs on what exists.
		{[]string{"job", jobID}, exitOK},
		{[]string{"incidents", "--job", jobID}, exitOK},
		{[]string{"instance", "pi-known"}, exitOK},
		{[]string{"instance", "--process-instance", "pi-known"}, exitOK},
		{[]string{"timers", "pi-known"}, exitOK}, // jobs, no timer: an empty list
		{[]string{"progress", "--process-instance", "pi-known"}, exitOK},
		{[]string{"progress", "--job", jobID}, exitOK},
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
	for _, cmd := range commands() {
		for _, args := range [][]string{{cmd.name, "--no-such-flag"}, {cmd.name, "-h"}} {
			code, out, errOut := runCLI(t, args...)
			requireClean(args, code, out, errOut)
			require.Contains(t, errOut, "$DATABASE_URL", "%v", args)
		}
	}
	for _, tt := range []struct {
		args []string
		want int
	}{
		{[]string{"job", "1"}, exitError},   // $DATABASE_URL, refused
		{[]string{"migrate-up"}, exitError}, // the same
		{[]string{"job", "1", "--database-url", "postgres://app:" + password + "@127.0.0.1:1/app"}, exitError},            // the flag
		{[]string{"job", "1", "--database-url=postgres://app:" + password + "@127.0.0.1:notaport/app"}, exitError},        // unparseable
		{[]string{"job", "1", "--database-url", "host=127.0.0.1 port=1 user=app password=" + password}, exitError},        // key/value
		{[]string{"job", "1", "--database-url", "host=127.0.0.1 port=1 user=app password='" + password + "'"}, exitError}, // quoted
		{[]string{"job", "-1"}, exitUsage},
		{[]string{"job", "--database-url", "postgres://app:" + password + "@127.0.0.1:1/app", "--bogus"}, exitUsage},
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
	secrets := urlPasswords([]string{"job", "--database-url", "postgres://u:p%40w@h/db"})
	require.Contains(t, secrets, "p@w")
	require.Contains(t, secrets, "p%40w")
	secrets = urlPasswords([]string{"job", "--database-url=postgres://u:pw2@h/db"})
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
			codes[i], _, errOuts[i] = runCLI(t, "migrate-up", "--database-url", url, "--schema", schema)
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
		{[]string{"job", "999999"}, exitNotFound, "job", "job 999999: not found", false},
		{[]string{"why", "abc"}, exitUsage, "why", `JOB_ID "abc" is not a job id`, false},
		{[]string{"timers", "--no-such-flag"}, exitUsage, "timers", "flag provided but not defined: -no-such-flag", true},
		{[]string{"instances", "--state", "stuck"}, exitUsage, "instances", `state "stuck" is not a job state`, false},
		{[]string{"retries", "999999", "2"}, exitNotFound, "retries", "not found", false},
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
		require.True(t, strings.HasPrefix(errOut, "riverbpmn "+tt.verb+": "), "%v: %s", tt.args, errOut)
	}
	code, _, errOut := runCLI(t, "no-such-verb", "--json")
	require.Equal(t, exitUsage, code)
	require.Contains(t, decode(nil, errOut).Error, `unknown command "no-such-verb"`)
	code, _, errOut = runCLI(t, "job", "--json=false", "-5")
	require.Equal(t, exitUsage, code)
	require.True(t, strings.HasPrefix(errOut, "riverbpmn job: "), "--json=false: text: %s", errOut)

	// A password with characters JSON escapes: neither it nor its escaped
	// form shows, given as the flag or as $DATABASE_URL.
	const password = "s3cret&<Pa55>"
	dbURL := "postgres://app:" + password + "@127.0.0.1:1/app?sslmode=disable&connect_timeout=5"
	for _, run := range []func() (int, string, string){
		func() (int, string, string) { return runCLI(t, "job", "1", "--json", "--database-url", dbURL) },
		func() (int, string, string) {
			t.Setenv("DATABASE_URL", dbURL)
			return runCLI(t, "job", "1", "--json")
		},
		// Unparseable: pgx's message quotes the URL.
		func() (int, string, string) {
			return runCLI(t, "job", "1", "--json", "--database-url", "postgres://app:"+password+"@127.0.0.1:notaport/app")
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
