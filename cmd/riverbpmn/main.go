// Command riverbpmn manages riverbpmn's database schema next to River's, and
// lets an operator look at and act on jobs, incidents, job definitions and
// exclusive locks.
//
//	riverbpmn migrate-up   --database-url URL [--schema S] [--skip-main] [--max-steps N] [--target-version V]
//	riverbpmn migrate-down --database-url URL [--schema S] [--max-steps N] [--target-version V]
//	riverbpmn version      [--database-url URL] [--schema S] [--json]
//	riverbpmn bench        --database-url URL [--schema S] [--mode M]... [--json] [--fetch-latency] (see --help)
//	riverbpmn incidents    [--all] [--job ID]
//	riverbpmn job          JOB_ID [--exclusive-scope S]
//	riverbpmn instance     PROCESS_INSTANCE_ID | --process-instance ID
//	riverbpmn retries      JOB_ID N
//	riverbpmn priority     override JOB_DEFINITION_ID P [--cascade] | clear JOB_DEFINITION_ID | set JOB_ID P
//	riverbpmn definitions
//	riverbpmn locks
//	riverbpmn exclusive-scope [--set process-instance|root-process-instance|none [--force]]
//
// The operator verbs (incidents to locks) take the connection flags and
// --json.
//
//	riverbpmn timers       PROCESS_INSTANCE_ID --database-url URL [--schema S] [--json]
//	riverbpmn timer        TIMER_ID --database-url URL [--schema S] [--json]
//	riverbpmn timer-set-due-date TIMER_ID --due RFC3339 --database-url URL [--schema S] [--cascade] [--json]
//	riverbpmn timer-cancel TIMER_ID --database-url URL [--schema S] [--json]
//	riverbpmn timer-prune  --database-url URL [--schema S] [--older-than 24h] [--json]
//
// The timer verbs also take their id as --process-instance ID or --timer N.
//
//	riverbpmn suspend      --database-url URL [--schema S] (--job-definition ID | --process-definition KEY | --process-instance ID | --job ID) [--include-jobs] [--at TIME] [--json]
//	riverbpmn activate     (same flags as suspend)
//	riverbpmn suspended    --database-url URL [--schema S] [--json]
//	riverbpmn client-sessions --database-url URL [--schema S] [--json]
//	riverbpmn queues       --database-url URL [--schema S] [--pause Q | --resume Q] [--json]
//	riverbpmn overview     --database-url URL [--schema S] [--window 24h] [--step 1h] [--json]
//	riverbpmn progress     --database-url URL [--schema S] (--job ID | --process-instance ID) [--json]
//	riverbpmn stop         --database-url URL [--schema S] (--job ID | --process-instance ID) [--json]
//	riverbpmn events       --database-url URL [--schema S] [--follow] [--process-instance ID] [--subscription NAME] [--from F] [--json]
//	riverbpmn subscriptions [NAME] --database-url URL [--schema S] [--json]
//	riverbpmn suspension-apply SCHEDULE_ID --database-url URL [--schema S] [--json]
//	riverbpmn execute      JOB_ID --database-url URL [--schema S] [--timeout 2m] [--exclusive-scope S] [--json]
//	riverbpmn why          JOB_ID --database-url URL [--schema S] [--exclusive-scope S] [--json]
//	riverbpmn jobs | instances --database-url URL [--schema S] [--state S] [--kind K] [--job-definition ID] [--process-definition KEY] [--tenant T] [--instance-prefix P] [--created-from T] [--created-to T] [--oldest] [--after ID] [--limit N] [--json]
//	riverbpmn bulk-retry   --database-url URL [--schema S] [--job IDS] [--job-definition ID] [--instance-prefix P] [--retries N] [--batch N] [--json]
//	riverbpmn bulk         suspend|activate|stop|priority --database-url URL [--schema S] (--job IDS | the jobs filter flags) [--priority P] [--batch N] [--json]
//	riverbpmn queue        JOB... | --process-instance ID --database-url URL [--schema S] [--json]
//	riverbpmn deps         JOB_ID --database-url URL [--schema S] [--json]
//	riverbpmn events-enable | events-disable --database-url URL [--schema S] [--json]
//	riverbpmn events-prune --database-url URL [--schema S] [--older-than 24h] [--json]
//	riverbpmn fairness-enable [--by-priority] [--timers-first] [--by-due-date] | fairness-disable --database-url URL [--schema S] [--json]
//	riverbpmn fetch-index-enable [--by-priority] [--timers-first] [--by-due-date] | fetch-index-disable --database-url URL [--schema S] [--json]
//	riverbpmn deployments  create FILE... [--name N] [--tenant T] | list [--after ID] [--limit N] | show DEPLOYMENT_ID | delete DEPLOYMENT_ID [--cascade] --database-url URL [--schema S] [--json]
//
// Flags follow River's CLI: --database-url defaults to $DATABASE_URL (read
// when the flag is not given; the usage text names the variable, never its
// value). One flag name per concept, in every verb: --job ID,
// --process-instance ID (--instance is an alias kept for older scripts),
// --timer ID, --job-definition ID, --process-definition KEY. What is printed
// on stderr never shows a password: those of database URLs and connection
// strings are replaced by xxxxx.
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

// command is one riverbpmn subcommand.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, stdout io.Writer) error
}

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
		{"fetch-index-disable", "drop the fetch-order indexes of every order", runFetchIndexDisable},
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
// through redactSecrets: no password of a database URL ever shows.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	stderr = &redactingWriter{w: stderr, secrets: urlPasswords(args)}
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
		if err != nil && !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(stderr, "riverbpmn %s: %v\n", cmd.name, err)
		}
		var flagErr *flagError
		if errors.As(err, &flagErr) {
			printFlags(stderr, flagErr.fs)
		}
		return exitCode(err, state.opened)
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

func usage(w io.Writer) {
	fmt.Fprintln(w, "Usage: riverbpmn <command> [flags]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Commands:")
	for _, cmd := range commands() {
		fmt.Fprintf(w, "  %-13s %s\n", cmd.name, cmd.summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Run 'riverbpmn <command> --help' for a command's flags.")
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
