// Command riverbpmn manages riverbpmn's database schema next to River's, and
// lets an operator look at and act on jobs, incidents, job definitions and
// exclusive locks.
//
//	riverbpmn <verb> [arguments] [flags]
//
// `riverbpmn --help` lists the verbs, from the one verb table of this
// command (commands), and `riverbpmn VERB --help` a verb's flags. The
// database verbs take the connection flags (--database-url, --schema) and,
// those that print a result, --json.
//
// Flags follow River's CLI: --database-url defaults to $DATABASE_URL (read
// when the flag is not given; the usage text names the variable, never its
// value). One flag name per concept, in every verb: --job ID,
// --process-instance ID (--instance is an alias kept for older scripts),
// --timer ID, --job-definition ID, --process-definition KEY. What is printed
// on stderr never shows a password: those of database URLs and connection
// strings are replaced by xxxxx. With --json, an error is one JSON object on
// stderr: {"error": "...", "verb": "...", "exit_code": N}, with "usage"
// after a flag error.
//
// Every verb exits with one of:
//
//	0  found, or done (also -h / --help)
//	1  the database or the operation failed
//	2  usage: unknown verb or flag, missing, extra or malformed argument (a
//	   negative id, say), no --database-url nor $DATABASE_URL: anything found
//	   wrong before the database is opened
//	3  not found: the job, process instance, timer, incident's job, job or
//	   process definition named does not exist (a process instance exists
//	   while a job belongs to it)
//
// migrate-up applies River's main migration line, then riverbpmn's;
// migrate-down only ever removes riverbpmn's. Both take a per-schema advisory
// lock (as workflow.MigrateUp does), so replicas may run migrate-up at once.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// command is one riverbpmn subcommand: a row of the verb table.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, stdout io.Writer) error
}

// commands is the verb table, the one list of verbs: run dispatches on it
// and usage prints it.
func commands() []command {
	return []command{
		{"migrate-up", "apply River's main migration line, then riverbpmn's", runMigrateUp},
		{"migrate-down", "roll riverbpmn's migration line back (one step by default)", runMigrateDown},
		{"version", "print riverbpmn's and River's versions; with --database-url, the applied and missing migrations", runVersion},
		{"bench", "measure riverbpmn against stock River (throughput, fetch latency)", runBench},
		{"incidents", "list open incidents (--all: resolved too; --job ID: one job's); incidents list: filtered (--definition, --activity, --error, --older-than, --tenant, --resolved) or --group-by error", runIncidents},
		{"job", "show one job: state, job context, retries left, retry cycle, next run, exclusive wait, incidents", runJob},
		{"instance", "list a process instance's jobs", runInstance},
		{"retries", "set a job's retries (executions left); N > 0 revives a discarded job", runRetries},
		{"priority", "override|clear a job definition's priority, or set one job's", runPriority},
		{"definitions", "list job definitions with their overriding priority, unfinished jobs, open incidents", runDefinitions},
		{"locks", "list held exclusive locks, stale ones marked", runLocks},
		{"exclusive-scope", "show the exclusive scope in force (recorded in the schema), or record another with --set", runExclusiveScope},
		{"locks-delete-stale", "delete stale exclusive locks and the rows of keys given back (fetches take stale locks over anyway)", runLocksDeleteStale},
		{"timers", "list the timers of a process instance (next due date, repetitions left); timers list: every timer (--definition, --due-after, --due-before, ...)", runTimers},
		{"timer", "show one timer", runTimer},
		{"timer-set-due-date", "move a timer's waiting occurrence (--cascade shifts its cycle)", runTimerSetDueDate},
		{"timer-cancel", "cancel a timer and its cycle", runTimerCancel},
		{"timer-prune", "delete timers that ended --older-than ago (default 24h) and whose jobs have finished", runTimerPrune},
		{"suspend", "suspend a job definition, process definition, process instance or job", runSuspend},
		{"activate", "activate a job definition, process definition, process instance or job", runActivate},
		{"suspended", "list suspended targets and scheduled suspensions", runSuspended},
		{"client-sessions", "list the liveness sessions of clients (alive, or dead until taken over)", runClientSessions},
		{"overview", "counts per process and job definition by state, open incidents, and jobs completed and failed and incidents opened per --step over --window", runOverview},
		{"queues", "list queues: jobs, paused, whether a client works each (--pause Q, --resume Q: River's)", runQueues},
		{"progress", "show the status and progress of a job (--job) or of every job of a process instance (--process-instance)", runProgress},
		{"stop", "ask a job (--job) or every job of a process instance (--process-instance) to stop", runStop},
		{"events", "print job status events (--follow: as they happen, from any process)", runEvents},
		{"events-enable", "switch job status events on in the schema", runEventsEnable},
		{"events-disable", "switch job status events off in the schema", runEventsDisable},
		{"events-prune", "delete job status events written --older-than ago (default 24h)", runEventsPrune},
		{"fairness-enable", "create the tenant index a fair client of the order flags reads (River's order without; a fair client's start does it for its own)", runFairnessEnable},
		{"fairness-disable", "drop the tenant indexes of every order", runFairnessDisable},
		{"fetch-index-enable", "create the fetch-order index clients of the order flags read (a client's start does it for its own)", runFetchIndexEnable},
		{"fetch-index-disable", "drop the fetch-order indexes (and the head-of-key indexes) of every order", runFetchIndexDisable},
		{"head-index-enable", "create the exclusive head-of-key index exclusive clients of the order flags read (--timers-first, --by-due-date; a client's start does it for its own)", runHeadIndexEnable},
		{"head-index-disable", "drop the exclusive head-of-key indexes of every order, keeping the fetch-order indexes", runHeadIndexDisable},
		{"console", "serve the operator web console (--listen, --read-only, --riverui-url, --prefix)", runConsole},
		{"queue", "queue pending jobs: JOB... or --process-instance ID", runQueue},
		{"deps", "show a job's prerequisites (done of total, blocked) and dependents: deps JOB", runDeps},
		{"execute", "run one job now, ignoring its due date, and print its outcome: execute JOB_ID [--timeout 2m]", runExecute},
		{"suspension-apply", "apply a scheduled suspension or activation now, before it is due: suspension-apply SCHEDULE_ID", runSuspensionApply},
		{"subscriptions", "list named event subscriptions: position, events behind, last event (or one: subscriptions NAME)", runSubscriptions},
		{"jobs", "search jobs: --state, --kind, --job-definition, --process-definition, --tenant, --instance-prefix, --created-from/-to, --oldest; paged (--after, --limit)", runSearchJobs},
		{"instances", "search process instances that have jobs matching the jobs filters, each at its newest matching job; paged; instances tree ID: the call hierarchy", runSearchInstances},
		{"bulk-retry", "retry open incidents in batches (--job IDS, --job-definition, --instance-prefix, --retries N): idempotent, resumable by running it again", runBulkRetry},
		{"bulk", "suspend|activate|stop|priority the jobs --job IDS or every job the jobs filter flags match, in batches, with progress; bulk list|show ID: the bulk actions' history", runBulk},
		{"deployments", "deploy BPMN models and manage deployments: create FILE... | list | show ID | delete ID [--cascade]", runDeployments},
		{"why", "say why a job is not running (key held, suspended, prerequisites, pending, expired, scheduled, queue paused) and what to do: why JOB_ID", runWhy},
	}
}

// run executes the command line args and returns the process exit code
// (see exitCode). What it prints on stderr, errors and usage text, goes
// through redactSecrets: no password of a database URL ever shows. With
// --json, an error is one JSON object on stderr (jsonError).
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	secrets := urlPasswords(args)
	stderr = &redactingWriter{w: stderr, secrets: secrets}
	jsonErrors := wantsJSON(args)
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage(stderr)
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	for _, cmd := range commands() {
		if cmd.name != args[0] {
			continue
		}
		state := &runState{}
		err := cmd.run(withRunState(withStderr(ctx, stderr), state), args[1:], stdout)
		code := exitCode(err, state.opened)
		var flagErr *flagError
		isFlagErr := errors.As(err, &flagErr)
		switch {
		case err == nil, errors.Is(err, flag.ErrHelp): // -h prints the flags, below
		case jsonErrors:
			e := jsonError{Error: err.Error(), Verb: cmd.name, ExitCode: code}
			if isFlagErr {
				var flags strings.Builder
				printFlags(&flags, flagErr.fs)
				e.Usage = flags.String()
			}
			writeJSONError(stderr, secrets, e)
			return code
		default:
			fmt.Fprintf(stderr, "riverbpmn %s: %v\n", cmd.name, err)
		}
		if isFlagErr {
			printFlags(stderr, flagErr.fs)
		}
		return code
	}
	if jsonErrors {
		writeJSONError(stderr, secrets, jsonError{Error: fmt.Sprintf("unknown command %q; riverbpmn --help lists the verbs", args[0]), ExitCode: exitUsage})
		return exitUsage
	}
	fmt.Fprintf(stderr, "riverbpmn: unknown command %q\n\n", args[0])
	usage(stderr)
	return exitUsage
}

// runState is what run learns of a verb while it runs.
type runState struct {
	// opened is set when the verb starts opening the database
	// (dbFlags.connect): an error before it came from the command line.
	opened bool
}

type runStateKey struct{}

func withRunState(ctx context.Context, state *runState) context.Context {
	return context.WithValue(ctx, runStateKey{}, state)
}

// markOpened records in ctx's runState that the verb is opening the
// database.
func markOpened(ctx context.Context) {
	if state, ok := ctx.Value(runStateKey{}).(*runState); ok {
		state.opened = true
	}
}

// stderrKey is the context key of the stderr writer run hands its verbs,
// for what a verb says beside its output (warnings), not in it.
type stderrKey struct{}

func withStderr(ctx context.Context, w io.Writer) context.Context {
	return context.WithValue(ctx, stderrKey{}, w)
}

// stderrOf returns the stderr writer of run, os.Stderr when none was set.
func stderrOf(ctx context.Context) io.Writer {
	if w, ok := ctx.Value(stderrKey{}).(io.Writer); ok {
		return w
	}
	return os.Stderr
}

// usageWidth is the width usage lays the verb table out in.
const usageWidth = 80

// usage prints the verb table: each verb, then its summary in a column after
// the longest verb, wrapped within usageWidth columns.
func usage(w io.Writer) {
	cmds := commands()
	width := 0
	for _, cmd := range cmds {
		width = max(width, len(cmd.name))
	}
	indent := 2 + width + 2
	fmt.Fprintln(w, "Usage: riverbpmn <command> [flags]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Commands:")
	for _, cmd := range cmds {
		for i, line := range wrapWords(cmd.summary, usageWidth-indent) {
			name := ""
			if i == 0 {
				name = cmd.name
			}
			fmt.Fprintf(w, "  %-*s  %s\n", width, name, line)
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Run 'riverbpmn <command> --help' for a command's flags.")
}

// wrapWords splits text into lines of at most width characters, breaking
// between words (a word longer than width has a line of its own).
func wrapWords(text string, width int) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(text) {
		switch {
		case line == "":
			line = word
		case len(line)+1+len(word) <= width:
			line += " " + word
		default:
			lines = append(lines, line)
			line = word
		}
	}
	return append(lines, line)
}

// dbFlags are the connection flags every database command takes.
type dbFlags struct {
	databaseURL string
	schema      string

	// maxConns, if positive, is the pool size used unless the URL sets
	// pool_max_conns.
	maxConns int32
}

// register adds --database-url and --schema to fs. The flag's default is
// empty, not $DATABASE_URL's value, so that the usage text, which prints
// defaults, never shows a password: url reads the variable when the flag is
// not given.
func (f *dbFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.databaseURL, "database-url", "", "PostgreSQL `URL` (default: the value of $DATABASE_URL)")
	fs.StringVar(&f.schema, "schema", "", "schema holding River's tables (default: the connection's search_path)")
}

// url returns --database-url, or $DATABASE_URL when the flag is not given.
func (f *dbFlags) url() string {
	if f.databaseURL != "" {
		return f.databaseURL
	}
	return os.Getenv("DATABASE_URL")
}

func (f *dbFlags) connect(ctx context.Context) (*pgxpool.Pool, error) {
	databaseURL := f.url()
	if strings.TrimSpace(databaseURL) == "" {
		return nil, errors.New("--database-url is required (or set DATABASE_URL)")
	}
	markOpened(ctx)
	config, err := pgxpool.ParseConfig(databaseURL)
	if err != nil {
		return nil, fmt.Errorf("--database-url: %w", err)
	}
	if f.maxConns > 0 && !strings.Contains(databaseURL, "pool_max_conns") {
		config.MaxConns = f.maxConns
	}
	pool, err := pgxpool.NewWithConfig(ctx, config)
	if err != nil {
		return nil, fmt.Errorf("connecting to --database-url: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("connecting to --database-url: %w", err)
	}
	return pool, nil
}

// newFlagSet returns the flag set of verb name. It prints nothing itself: a
// parse error (or -h) comes back as a flagError, and run prints the message
// and the flags on its own stderr.
func newFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet("riverbpmn "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// flagError is an error of the flag package parsing fs (flag.ErrHelp for
// -h): run prints fs's flags after it.
type flagError struct {
	fs  *flag.FlagSet
	err error
}

func (e *flagError) Error() string { return e.err.Error() }
func (e *flagError) Unwrap() error { return e.err }

// printFlags prints fs's usage: its name and its flags with their defaults.
func printFlags(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprintf(w, "Usage of %s:\n", fs.Name())
	fs.SetOutput(w)
	fs.PrintDefaults()
	fs.SetOutput(io.Discard)
}

// parseFS parses args into fs, as a flagError on failure.
func parseFS(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		return &flagError{fs: fs, err: err}
	}
	return nil
}

func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := parseFS(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	return nil
}
