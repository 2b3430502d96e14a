package main

// The command tree: `riverbpmn <noun> <verb>`, one noun per handle of the
// engine (jobs, instances, incidents, definitions, timers, events,
// suspensions, exclusive, indexes, bulk, queues, sessions, deployments),
// and the top-level commands that are not nouns (migrate, version, bench,
// console, why, overview). The table, commands, is the one list: run
// dispatches on it, usage prints it, the tests walk it.

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
)

// command is one row of the command table: a verb of a noun ("timers
// set-due-date"), a top-level command ("version"), or a deprecated alias,
// an old name that runs a command of the tree.
type command struct {
	// path is the words that name the command: noun and verb, such as
	// "exclusive locks delete-stale", or the one word of a top-level
	// command.
	path string
	// summary is the command's line in --help.
	summary string
	run     func(ctx context.Context, args []string, stdout io.Writer) error
	// alias, for a deprecated alias (aliases.go), maps its arguments to the
	// command of the tree it runs and that command's arguments. An alias is
	// hidden from --help and kept one release.
	alias func(args []string) (path string, rest []string)
	// aliasTakesArgs, for the alias of a noun's old form, says that it took
	// arguments (see argAlias); otherwise only flags, and a word after the
	// noun is an unknown verb.
	aliasTakesArgs bool
}

// noun returns the first word of the command's path.
func (c command) noun() string {
	noun, _, _ := strings.Cut(c.path, " ")
	return noun
}

// listVerbs are the list verbs of the tree (list.go, lists.go).
func listVerbs() []listVerb {
	return []listVerb{
		jobsList, instancesList, instanceJobsList, instanceTimersList,
		incidentsList, incidentGroupsList, definitionsList, timersList,
		eventsList, subscriptionsList, suspendedList, scheduledList,
		locksList, headIndexesList, indexesList, bulkList, queuesList,
		sessionsList, deploymentsList,
	}
}

// commands is the command table, in the order --help prints it: the
// tree's commands, then the deprecated aliases (hidden).
func commands() []command {
	list := map[string]command{}
	for _, l := range listVerbs() {
		list[l.name()] = l.command()
	}
	cmds := []command{
		list["jobs list"],
		{path: "jobs show", summary: "one job: state, job context, retries left, retry cycle, next run, exclusive wait, incidents: jobs show JOB_ID", run: runJob},
		{path: "jobs set-retries", summary: "set a job's retries (executions left); N > 0 revives a discarded job: jobs set-retries JOB_ID N", run: runRetries},
		{path: "jobs set-priority", summary: "set one job's BPMN priority: jobs set-priority JOB_ID PRIORITY", run: runJobSetPriority},
		{path: "jobs status", summary: "a job's status and progress: jobs status JOB_ID", run: runJobStatus},
		{path: "jobs stop", summary: "ask a job to stop: jobs stop JOB_ID", run: runJobStop},
		{path: "jobs queue", summary: "queue pending jobs: jobs queue JOB_ID...", run: runJobsQueue},
		{path: "jobs deps", summary: "a job's prerequisites (done of total, blocked) and dependents: jobs deps JOB_ID", run: runDeps},
		{path: "jobs execute", summary: "run one job now, ignoring its due date, and print its outcome: jobs execute JOB_ID [--timeout 2m]", run: runExecute},

		list["instances list"],
		list["instances jobs"],
		list["instances timers"],
		{path: "instances tree", summary: "the call hierarchy of a process instance: instances tree PROCESS_INSTANCE_ID", run: runInstancesTree},
		{path: "instances status", summary: "the status and progress of every job of a process instance", run: runInstanceStatus},
		{path: "instances stop", summary: "ask every job of a process instance to stop", run: runInstanceStop},
		{path: "instances queue", summary: "queue every pending job of a process instance", run: runInstanceQueue},

		withRun(list["incidents list"], runIncidentsListVerb),
		list["incidents groups"],

		list["definitions list"],
		{path: "definitions set-priority", summary: "give a job definition an overriding priority (--cascade: its unfinished jobs too): definitions set-priority JOB_DEFINITION_ID PRIORITY", run: runDefinitionSetPriority},
		{path: "definitions clear-priority", summary: "clear a job definition's overriding priority: definitions clear-priority JOB_DEFINITION_ID", run: runDefinitionClearPriority},

		list["timers list"],
		{path: "timers show", summary: "one timer: timers show TIMER_ID", run: runTimer},
		{path: "timers set-due-date", summary: "move a timer's waiting occurrence (--cascade shifts its cycle): timers set-due-date TIMER_ID --due T", run: runTimerSetDueDate},
		{path: "timers cancel", summary: "cancel a timer and its cycle: timers cancel TIMER_ID", run: runTimerCancel},
		{path: "timers prune", summary: "delete timers that ended --older-than ago (default 24h) and whose jobs have finished", run: runTimerPrune},

		list["events list"],
		{path: "events read", summary: "print the job status events retained (--from a cursor), then stop", run: runEventsRead},
		{path: "events follow", summary: "print job status events as they happen, from any process (--subscription NAME: resume where it stopped)", run: runEventsFollow},
		{path: "events enable", summary: "switch job status events on in the schema", run: runEventsEnable},
		{path: "events disable", summary: "switch job status events off in the schema", run: runEventsDisable},
		{path: "events prune", summary: "delete job status events written --older-than ago (default 24h)", run: runEventsPrune},
		list["events subscriptions"],
		{path: "events subscription", summary: "one named event subscription: events subscription NAME", run: runSubscription},

		list["suspensions list"],
		list["suspensions scheduled"],
		{path: "suspensions suspend", summary: "suspend a job definition, process definition, process instance or job, now or --at a time", run: runSuspend},
		{path: "suspensions activate", summary: "activate a job definition, process definition, process instance or job, now or --at a time", run: runActivate},
		{path: "suspensions apply", summary: "apply a scheduled suspension or activation now: suspensions apply SCHEDULE_ID", run: runSuspensionApply},

		list["exclusive locks list"],
		{path: "exclusive locks delete-stale", summary: "delete stale exclusive locks and the rows of keys given back (fetches take stale locks over anyway)", run: runLocksDeleteStale},
		{path: "exclusive scope show", summary: "the exclusive scope in force, recorded in the schema", run: runExclusiveScopeShow},
		{path: "exclusive scope set", summary: "record another exclusive scope (refused while a client is alive; --force): exclusive scope set SCOPE", run: runExclusiveScopeSet},
		{path: "exclusive wait", summary: "a job's exclusive wait: its key, the holder, the jobs ahead: exclusive wait JOB_ID", run: runExclusiveWait},
		list["exclusive indexes list"],
		{path: "exclusive indexes enable", summary: "create the head-of-key index exclusive clients of the order flags read (--timers-first, --by-due-date)", run: runHeadIndexEnable},
		{path: "exclusive indexes disable", summary: "drop the head-of-key indexes of every order, keeping the fetch-order indexes", run: runHeadIndexDisable},

		list["indexes list"],
		{path: "indexes enable", summary: "create the fetch-order or tenant fairness index of the order flags: indexes enable fetch-order|fairness", run: runIndexesEnable},
		{path: "indexes disable", summary: "drop the fetch-order (and head-of-key) or the tenant fairness indexes of every order: indexes disable fetch-order|fairness", run: runIndexesDisable},

		list["bulk list"],
		{path: "bulk show", summary: "one bulk action with its progress, owner and runs: bulk show ID", run: runBulkShow},
		{path: "bulk suspend", summary: "suspend the jobs --job IDS or every job the jobs filter flags match, in batches", run: bulkJobsVerb("suspend")},
		{path: "bulk activate", summary: "activate the jobs --job IDS or every job the jobs filter flags match, in batches", run: bulkJobsVerb("activate")},
		{path: "bulk stop", summary: "stop the jobs --job IDS or every job the jobs filter flags match, in batches", run: bulkJobsVerb("stop")},
		{path: "bulk set-priority", summary: "set the --priority of the jobs --job IDS or every job the jobs filter flags match, in batches", run: bulkJobsVerb("set-priority")},
		{path: "bulk retry", summary: "retry open incidents in batches (--job IDS, --job-definition, --instance-prefix, --retries N); resumable", run: runBulkRetry},

		list["queues list"],
		{path: "queues pause", summary: "pause a queue (River's QueuePause): clients stop fetching from it: queues pause QUEUE", run: runQueuePause},
		{path: "queues resume", summary: "resume a paused queue (River's QueueResume): queues resume QUEUE", run: runQueueResume},

		list["sessions list"],

		{path: "deployments create", summary: "deploy BPMN models: deployments create FILE... [--name N] [--tenant T]", run: runDeploymentsCreate},
		list["deployments list"],
		{path: "deployments show", summary: "one deployment with its versions and job definitions: deployments show DEPLOYMENT_ID", run: runDeploymentsShow},
		{path: "deployments delete", summary: "delete a deployment (--cascade: its unfinished jobs too): deployments delete DEPLOYMENT_ID", run: runDeploymentsDelete},

		{path: "migrate up", summary: "apply River's main migration line, then riverbpmn's", run: runMigrateUp},
		{path: "migrate down", summary: "roll riverbpmn's migration line back (one step by default)", run: runMigrateDown},
		{path: "version", summary: "riverbpmn's and River's versions; with --database-url, the applied and missing migrations", run: runVersion},
		{path: "why", summary: "why a job is not running (key held, suspended, prerequisites, pending, expired, scheduled, queue paused) and what to do: why JOB_ID", run: runWhy},
		{path: "overview", summary: "counts per process and job definition by state, open incidents, and jobs completed and failed and incidents opened per --step over --window", run: runOverview},
		{path: "console", summary: "serve the operator web console (--listen, --read-only, --riverui-url, --prefix)", run: runConsole},
		{path: "bench", summary: "measure riverbpmn against stock River (throughput, fetch latency)", run: runBench},
	}
	return append(cmds, aliases()...)
}

// withRun returns cmd running run instead.
func withRun(cmd command, run func(ctx context.Context, args []string, stdout io.Writer) error) command {
	cmd.run = run
	return cmd
}

// visibleCommands returns the commands --help lists: the table without the
// deprecated aliases.
func visibleCommands() []command {
	return slices.DeleteFunc(commands(), func(c command) bool { return c.alias != nil })
}

// lookup finds the command args name: the longest path that the first
// words of args spell. It returns the command and the arguments after its
// path.
func lookup(args []string) (command, []string, bool) {
	var best command
	n := 0
	for _, cmd := range commands() {
		words := strings.Fields(cmd.path)
		if len(words) > n && len(words) <= len(args) && slices.Equal(words, args[:len(words)]) {
			best, n = cmd, len(words)
		}
	}
	return best, args[n:], n > 0
}

// isNoun reports whether word begins the path of a visible command of more
// than one word (jobs, exclusive, ...), or words do (exclusive locks).
func isNoun(words ...string) bool {
	prefix := strings.Join(words, " ") + " "
	for _, cmd := range visibleCommands() {
		if strings.HasPrefix(cmd.path, prefix) {
			return true
		}
	}
	return false
}

// find returns the command of the tree at path (not an alias).
func find(path string) (command, bool) {
	for _, cmd := range visibleCommands() {
		if cmd.path == path {
			return cmd, true
		}
	}
	return command{}, false
}

// usageWidth is the width usage lays the command table out in.
const usageWidth = 80

// usage prints the commands whose path begins with prefix ("": every
// visible command): each path, then its summary in a column after the
// longest path, wrapped within usageWidth columns.
func usage(w io.Writer, prefix string) {
	var cmds []command
	for _, cmd := range visibleCommands() {
		if prefix == "" || strings.HasPrefix(cmd.path, prefix+" ") {
			cmds = append(cmds, cmd)
		}
	}
	width := 0
	for _, cmd := range cmds {
		width = max(width, len(cmd.path))
	}
	indent := 2 + width + 2
	if prefix == "" {
		fmt.Fprintln(w, "Usage: riverbpmn <noun> <verb> [arguments] [flags]")
		fmt.Fprintln(w, "or:    riverbpmn <command> [arguments] [flags]")
	} else {
		fmt.Fprintf(w, "Usage: riverbpmn %s <verb> [arguments] [flags]\n", prefix)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Commands:")
	noun := ""
	for _, cmd := range cmds {
		if prefix == "" && cmd.noun() != noun && noun != "" && strings.Contains(cmd.path, " ") {
			fmt.Fprintln(w)
		}
		noun = cmd.noun()
		for i, line := range wrapWords(cmd.summary, usageWidth-indent) {
			name := ""
			if i == 0 {
				name = cmd.path
			}
			fmt.Fprintf(w, "  %-*s  %s\n", width, name, line)
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Run 'riverbpmn <noun> <verb> --help' for a command's flags.")
}
