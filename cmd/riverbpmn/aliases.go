package main

// The deprecated aliases: the flat verbs of the previous release
// (`timer-set-due-date`, `locks-delete-stale`, `events-enable`, ...) and
// the old forms of the nouns (`timers ID`, `incidents --all`), each kept
// one release as a hidden command that runs its command of the tree.
// docs/operating/cli.md lists them; TestAliases runs each one.

import "strings"

// alias is a hidden command of the table: old is its path, resolve maps
// its arguments to the command of the tree it runs and that command's
// arguments.
func alias(old string, resolve func(args []string) (path string, rest []string)) command {
	return command{path: old, alias: resolve}
}

// argAlias is an alias of a noun's old form that took an argument, not
// only flags (`timers PROCESS_INSTANCE_ID`): a word after the noun that is
// no verb of it runs the alias rather than being an unknown verb.
func argAlias(old string, resolve func(args []string) (path string, rest []string)) command {
	return command{path: old, alias: resolve, aliasTakesArgs: true}
}

// to is the resolve of an alias that runs path with its arguments as they
// are, after prefix.
func to(path string, prefix ...string) func([]string) (string, []string) {
	return func(args []string) (string, []string) { return path, append(prefix, args...) }
}

// aliases are the deprecated aliases, in the order of the previous
// release's verb table.
func aliases() []command {
	return []command{
		alias("migrate-up", to("migrate up")),
		alias("migrate-down", to("migrate down")),
		alias("incidents", oldIncidents),
		alias("job", to("jobs show")),
		alias("instance", instanceFlagAsArg("instances jobs")),
		alias("retries", to("jobs set-retries")),
		alias("priority", oldPriority),
		alias("definitions", to("definitions list")),
		alias("locks", to("exclusive locks list")),
		alias("exclusive-scope", oldExclusiveScope),
		alias("locks-delete-stale", to("exclusive locks delete-stale")),
		argAlias("timers", instanceFlagAsArg("instances timers")),
		alias("timer", to("timers show")),
		alias("timer-set-due-date", to("timers set-due-date")),
		alias("timer-cancel", to("timers cancel")),
		alias("timer-prune", to("timers prune")),
		alias("suspend", to("suspensions suspend")),
		alias("activate", to("suspensions activate")),
		alias("suspended", to("suspensions list")),
		alias("client-sessions", to("sessions list")),
		alias("queues", oldQueues),
		alias("progress", jobOrInstance("jobs status", "instances status")),
		alias("stop", jobOrInstance("jobs stop", "instances stop")),
		alias("events", oldEvents),
		alias("events-enable", to("events enable")),
		alias("events-disable", to("events disable")),
		alias("events-prune", to("events prune")),
		alias("fairness-enable", to("indexes enable", "fairness")),
		alias("fairness-disable", to("indexes disable", "fairness")),
		alias("fetch-index-enable", to("indexes enable", "fetch-order")),
		alias("fetch-index-disable", to("indexes disable", "fetch-order")),
		alias("head-index-enable", to("exclusive indexes enable")),
		alias("head-index-disable", to("exclusive indexes disable")),
		alias("queue", oldQueue),
		alias("deps", to("jobs deps")),
		alias("execute", to("jobs execute")),
		alias("suspension-apply", to("suspensions apply")),
		alias("subscriptions", oldSubscriptions),
		alias("jobs", to("jobs list")),
		alias("instances", to("instances list")),
		alias("bulk-retry", to("bulk retry")),
		alias("bulk priority", to("bulk set-priority")),
	}
}

// takeFlag removes the first of the flags names (without dashes) from
// args, given as --name VALUE or --name=VALUE (one dash too), and returns
// its value; found is false when none is there. A bool flag (isBool) takes
// no separate value.
func takeFlag(args []string, isBool bool, names ...string) (value string, found bool, rest []string) {
	for i := 0; i < len(args); i++ {
		tok := args[i]
		if tok == "--" {
			break
		}
		if !strings.HasPrefix(tok, "-") {
			continue
		}
		name, v, hasValue := strings.Cut(strings.TrimLeft(tok, "-"), "=")
		if !containsString(names, name) {
			continue
		}
		rest = append(append(rest, args[:i]...), args[i+1:]...)
		switch {
		case hasValue:
			return v, true, rest
		case isBool:
			return "true", true, rest
		case i+1 < len(args):
			rest = append(append([]string{}, args[:i]...), args[i+2:]...)
			return args[i+1], true, rest
		}
		return "", true, rest
	}
	return "", false, args
}

func containsString(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

// instanceFlagAsArg is the resolve of an old verb that took the process
// instance as --process-instance (or --instance) or as an argument: path
// takes it as the argument PROCESS_INSTANCE_ID.
func instanceFlagAsArg(path string) func([]string) (string, []string) {
	return func(args []string) (string, []string) {
		if id, found, rest := takeFlag(args, false, "process-instance", "instance"); found {
			return path, append(rest, id)
		}
		return path, args
	}
}

// jobOrInstance is the resolve of progress and stop: --job ID runs
// jobPath ID; --process-instance ID (or --instance) instancePath ID.
func jobOrInstance(jobPath, instancePath string) func([]string) (string, []string) {
	return func(args []string) (string, []string) {
		if id, found, rest := takeFlag(args, false, "job"); found {
			return jobPath, append(rest, id)
		}
		if id, found, rest := takeFlag(args, false, "process-instance", "instance"); found {
			return instancePath, append(rest, id)
		}
		return jobPath, args
	}
}

// oldIncidents is the resolve of the old incidents verb: open incidents
// oldest first; --all resolved ones too (newest first); --job ID every
// incident of the job.
func oldIncidents(args []string) (string, []string) {
	if _, found, rest := takeFlag(args, true, "all"); found {
		return "incidents list", append(rest, "--resolved")
	}
	if _, found, _ := takeFlag(args, false, "job"); found {
		return "incidents list", append(args, "--resolved")
	}
	return "incidents list", append(args, "--oldest")
}

// oldPriority is the resolve of priority override|clear|set.
func oldPriority(args []string) (string, []string) {
	for i, arg := range args {
		path := map[string]string{"override": "definitions set-priority", "clear": "definitions clear-priority", "set": "jobs set-priority"}[arg]
		if path != "" {
			return path, append(append([]string{}, args[:i]...), args[i+1:]...)
		}
	}
	return "definitions set-priority", args
}

// oldExclusiveScope is the resolve of exclusive-scope [--set SCOPE
// [--force]].
func oldExclusiveScope(args []string) (string, []string) {
	if scope, found, rest := takeFlag(args, false, "set"); found {
		return "exclusive scope set", append(rest, scope)
	}
	return "exclusive scope show", args
}

// oldQueues is the resolve of queues [--pause Q | --resume Q].
func oldQueues(args []string) (string, []string) {
	if q, found, rest := takeFlag(args, false, "pause"); found {
		return "queues pause", append(rest, q)
	}
	if q, found, rest := takeFlag(args, false, "resume"); found {
		return "queues resume", append(rest, q)
	}
	return "queues list", args
}

// oldEvents is the resolve of the old events verb: --newest (with
// --before) is events list, --follow events follow, otherwise events read.
func oldEvents(args []string) (string, []string) {
	if _, found, rest := takeFlag(args, true, "newest"); found {
		if before, found, rest := takeFlag(rest, false, "before"); found {
			return "events list", append(rest, "--after", before)
		}
		return "events list", rest
	}
	if _, found, rest := takeFlag(args, true, "follow"); found {
		return "events follow", rest
	}
	return "events read", args
}

// oldQueue is the resolve of queue JOB... | queue --process-instance ID.
func oldQueue(args []string) (string, []string) {
	if id, found, rest := takeFlag(args, false, "process-instance", "instance"); found {
		return "instances queue", append(rest, id)
	}
	return "jobs queue", args
}

// oldSubscriptions is the resolve of subscriptions [NAME].
func oldSubscriptions(args []string) (string, []string) {
	rest := args
	for _, name := range []string{"database-url", "schema"} {
		for found := true; found; {
			_, found, rest = takeFlag(rest, false, name)
		}
	}
	for _, arg := range rest {
		if !strings.HasPrefix(arg, "-") {
			return "events subscription", args
		}
	}
	return "events subscriptions", args
}
