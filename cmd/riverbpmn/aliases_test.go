package main

import (
	"context"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivershared/riversharedtest"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/workflow"
)

// TestAliases: every deprecated alias (the previous release's flat verbs
// and the old forms of the nouns) still works: it runs the command of the
// tree it stands for, with the old flags and arguments, exits as that
// command does and prints what it prints (the same JSON), with a
// deprecation note on stderr in the text form; the table covers every
// alias, and none is listed by --help.
func TestAliases(t *testing.T) {
	ctx := context.Background()
	engine, schema := opsSetup(t)
	require.NoError(t, engine.SyncJobDefinitions(ctx))
	client, err := workflow.NewClient(engine, &river.Config{TestOnly: true})
	require.NoError(t, err)
	res, err := client.Insert(ctx, opsArgs{Instance: "pi-old"}, nil)
	require.NoError(t, err)
	job := strconv.FormatInt(res.Job.ID, 10)
	failed, err := client.Insert(ctx, opsArgs{Instance: "pi-failed"}, nil)
	require.NoError(t, err)
	require.NoError(t, engine.SetJobRetries(ctx, failed.Job.ID, 0))
	failedJob := strconv.FormatInt(failed.Job.ID, 10)
	stoppable, err := client.Insert(ctx, opsArgs{Instance: "pi-stop"}, nil)
	require.NoError(t, err)
	_, err = riversharedtest.DBPool(ctx, t).Exec(ctx, "INSERT INTO "+pgx.Identifier{schema, "river_queue"}.Sanitize()+" (name, created_at, metadata, updated_at) VALUES ('default', now(), '{}', now())")
	require.NoError(t, err)

	for _, tt := range []struct {
		old, tree []string
		code      int
		// same says whether both print the same JSON (no state changed in
		// between).
		same bool
	}{
		{[]string{"migrate-up"}, []string{"migrate", "up"}, exitOK, false},
		{[]string{"migrate-down", "--target-version", "999"}, []string{"migrate", "down", "--target-version", "999"}, exitError, false},
		{[]string{"incidents"}, []string{"incidents", "list", "--oldest"}, exitOK, true},
		{[]string{"incidents", "--all"}, []string{"incidents", "list", "--resolved"}, exitOK, true},
		{[]string{"incidents", "--job", failedJob}, []string{"incidents", "list", "--job", failedJob, "--resolved"}, exitOK, true},
		{[]string{"incidents", "list", "--group-by", "error"}, []string{"incidents", "groups"}, exitOK, true},
		{[]string{"job", job}, []string{"jobs", "show", job}, exitOK, true},
		{[]string{"instance", "pi-old"}, []string{"instances", "jobs", "pi-old"}, exitOK, true},
		{[]string{"instance", "--process-instance", "pi-old"}, []string{"instances", "jobs", "pi-old"}, exitOK, true},
		{[]string{"retries", failedJob, "0"}, []string{"jobs", "set-retries", failedJob, "0"}, exitOK, true},
		{[]string{"priority", "override", "task-async", "9"}, []string{"definitions", "set-priority", "task-async", "9"}, exitOK, true},
		{[]string{"priority", "clear", "task-async"}, []string{"definitions", "clear-priority", "task-async"}, exitOK, true},
		{[]string{"priority", "set", job, "3"}, []string{"jobs", "set-priority", job, "3"}, exitOK, true},
		{[]string{"definitions"}, []string{"definitions", "list"}, exitOK, true},
		{[]string{"locks"}, []string{"exclusive", "locks", "list"}, exitOK, true},
		{[]string{"exclusive-scope"}, []string{"exclusive", "scope", "show"}, exitOK, true},
		{[]string{"exclusive-scope", "--set", "everything"}, []string{"exclusive", "scope", "set", "everything"}, exitUsage, true},
		{[]string{"locks-delete-stale"}, []string{"exclusive", "locks", "delete-stale"}, exitOK, true},
		{[]string{"timers", "pi-old"}, []string{"instances", "timers", "pi-old"}, exitOK, true},
		{[]string{"timers", "--process-instance", "pi-old"}, []string{"instances", "timers", "pi-old"}, exitOK, true},
		{[]string{"timer", "987654321"}, []string{"timers", "show", "987654321"}, exitNotFound, true},
		{[]string{"timer-set-due-date", "987654321", "--due", "2030-01-01T00:00:00Z"}, []string{"timers", "set-due-date", "987654321", "--due", "2030-01-01T00:00:00Z"}, exitNotFound, true},
		{[]string{"timer-cancel", "--timer", "987654321"}, []string{"timers", "cancel", "987654321"}, exitNotFound, true},
		{[]string{"timer-prune"}, []string{"timers", "prune"}, exitOK, false},
		{[]string{"suspended"}, []string{"suspensions", "list"}, exitOK, true},
		{[]string{"client-sessions"}, []string{"sessions", "list"}, exitOK, true},
		{[]string{"queues"}, []string{"queues", "list"}, exitOK, true},
		{[]string{"queues", "--pause", "default"}, []string{"queues", "pause", "default"}, exitOK, true},
		{[]string{"queues", "--resume", "default"}, []string{"queues", "resume", "default"}, exitOK, true},
		{[]string{"progress", "--job", job}, []string{"jobs", "status", job}, exitOK, true},
		{[]string{"progress", "--instance", "pi-old"}, []string{"instances", "status", "pi-old"}, exitOK, true},
		{[]string{"stop", "--job", "987654321"}, []string{"jobs", "stop", "987654321"}, exitNotFound, true},
		{[]string{"stop", "--process-instance", "pi-unknown"}, []string{"instances", "stop", "pi-unknown"}, exitNotFound, true},
		{[]string{"events-enable"}, []string{"events", "enable"}, exitOK, true},
		{[]string{"stop", "--job", strconv.FormatInt(stoppable.Job.ID, 10)}, []string{"jobs", "stop", strconv.FormatInt(stoppable.Job.ID, 10)}, exitOK, false}, // an event
		{[]string{"suspend", "--job", job}, []string{"suspensions", "suspend", "--job", job}, exitOK, false},
		{[]string{"activate", "--job", job}, []string{"suspensions", "activate", "--job", job}, exitOK, false},
		{[]string{"events"}, []string{"events", "read"}, exitOK, true},
		{[]string{"events", "--newest", "--limit", "5"}, []string{"events", "list", "--limit", "5"}, exitOK, true},
		{[]string{"events", "--newest", "--before", "1:1"}, []string{"events", "list", "--after", "1:1"}, exitOK, true},
		{[]string{"events-disable"}, []string{"events", "disable"}, exitOK, true},
		{[]string{"events-prune"}, []string{"events", "prune"}, exitOK, false},
		{[]string{"fairness-enable"}, []string{"indexes", "enable", "fairness"}, exitOK, true},
		{[]string{"fairness-disable"}, []string{"indexes", "disable", "fairness"}, exitOK, true},
		{[]string{"fetch-index-enable", "--by-priority"}, []string{"indexes", "enable", "fetch-order", "--by-priority"}, exitOK, true},
		{[]string{"fetch-index-disable"}, []string{"indexes", "disable", "fetch-order"}, exitOK, true},
		{[]string{"head-index-enable", "--by-due-date"}, []string{"exclusive", "indexes", "enable", "--by-due-date"}, exitOK, true},
		{[]string{"head-index-disable"}, []string{"exclusive", "indexes", "disable"}, exitOK, true},
		{[]string{"queue", job}, []string{"jobs", "queue", job}, exitOK, true},
		{[]string{"queue", "--process-instance", "pi-old"}, []string{"instances", "queue", "pi-old"}, exitOK, true},
		{[]string{"deps", job}, []string{"jobs", "deps", job}, exitOK, true},
		{[]string{"execute", "987654321"}, []string{"jobs", "execute", "987654321"}, exitNotFound, true},
		{[]string{"suspension-apply", "987654321"}, []string{"suspensions", "apply", "987654321"}, exitNotFound, true},
		{[]string{"subscriptions"}, []string{"events", "subscriptions"}, exitOK, true},
		{[]string{"subscriptions", "nobody"}, []string{"events", "subscription", "nobody"}, exitNotFound, true},
		{[]string{"jobs", "--state", "available"}, []string{"jobs", "list", "--state", "available"}, exitOK, true},
		{[]string{"instances", "--instance-prefix", "pi-"}, []string{"instances", "list", "--instance-prefix", "pi-"}, exitOK, true},
		{[]string{"bulk-retry", "--job", "987654321"}, []string{"bulk", "retry", "--job", "987654321"}, exitOK, false},
		{[]string{"bulk", "priority", "--job", job, "--priority", "4"}, []string{"bulk", "set-priority", "--job", job, "--priority", "4"}, exitOK, false},
	} {
		asJSON := []string{"--json"}
		if tt.tree[0] == "migrate" {
			asJSON = nil // migrate prints text only
		}
		oldCode, oldOut, oldErr := cli(t, schema, append(tt.old, asJSON...)...)
		require.Equal(t, tt.code, oldCode, "%v: %s", tt.old, oldErr)
		treeCode, treeOut, treeErr := cli(t, schema, append(tt.tree, asJSON...)...)
		require.Equal(t, tt.code, treeCode, "%v: %s", tt.tree, treeErr)
		if tt.same {
			require.Equal(t, treeOut, oldOut, "%v prints what %v prints", tt.old, tt.tree)
			require.Equal(t, treeErr, oldErr, "%v: the same error, naming %v", tt.old, tt.tree)
		}
		if tt.code == exitOK && asJSON != nil {
			require.NotEmpty(t, oldOut, "%v", tt.old)
		}
		if cmd, _, _ := lookup(tt.old); cmd.alias == nil {
			continue // an old flag of a command of the tree (incidents list --group-by)
		}
		path := resolvedPath(t, tt.old)
		require.True(t, strings.HasPrefix(strings.Join(tt.tree, " "), path), "%v runs %q", tt.old, path)
		_, _, textErr := cli(t, schema, tt.old...)
		require.Contains(t, textErr, "riverbpmn: "+strconv.Quote(aliasPath(tt.old))+" is deprecated; use "+strconv.Quote(path), "%v: a deprecation note", tt.old)
		covered[aliasPath(tt.old)] = true
	}
	for _, a := range aliases() {
		require.True(t, covered[a.path], "TestAliases runs the alias %q", a.path)
	}
}

// covered records the aliases TestAliases ran.
var covered = map[string]bool{}

// aliasPath returns the path of the alias args run.
func aliasPath(args []string) string {
	cmd, _, _ := lookup(args)
	return cmd.path
}

// resolvedPath returns the path of the command of the tree the alias args
// run.
func resolvedPath(t *testing.T, args []string) string {
	t.Helper()
	cmd, rest, found := lookup(args)
	require.True(t, found, "%v", args)
	require.NotNil(t, cmd.alias, "%v is an alias", args)
	path, _ := cmd.alias(rest)
	_, ok := find(path)
	require.True(t, ok, "%v runs %q, a command of the tree", args, path)
	return path
}

// TestListColumns: the columns of every list verb name json keys of the
// item type it lists, so the text form shows what --json prints.
func TestListColumns(t *testing.T) {
	for _, l := range listVerbs() {
		keys := l.jsonKeys()
		require.NotEmpty(t, keys, l.name())
		for _, key := range l.columnKeys() {
			require.True(t, keys[key], "%s: column %q is a json key of its items (%v)", l.name(), key, reflect.ValueOf(keys).MapKeys())
		}
		cmd, ok := find(l.name())
		require.True(t, ok, "%s is a command of the tree", l.name())
		require.NotEmpty(t, cmd.summary, l.name())
	}
}
