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
//	riverbpmn instance     PROCESS_INSTANCE_ID
//	riverbpmn retries      JOB_ID N
//	riverbpmn priority     override JOB_DEFINITION_ID P [--cascade] | clear JOB_DEFINITION_ID | set JOB_ID P
//	riverbpmn definitions
//	riverbpmn locks
//
// The operator verbs (incidents to locks) take the connection flags and
// --json; they exit 0 when found or done, 1 on error, 3 when the id named does
// not exist.
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
//	riverbpmn progress     --database-url URL [--schema S] (--job ID | --instance ID) [--json]
//	riverbpmn stop         --database-url URL [--schema S] (--job ID | --instance ID) [--json]
//	riverbpmn events       --database-url URL [--schema S] [--follow] [--instance ID] [--subscription NAME] [--from F] [--json]
//	riverbpmn events-enable | events-disable --database-url URL [--schema S] [--json]
//	riverbpmn events-prune --database-url URL [--schema S] [--older-than 24h] [--json]
//	riverbpmn fairness-enable [--by-priority] [--timers-first] [--by-due-date] | fairness-disable --database-url URL [--schema S] [--json]
//	riverbpmn fetch-index-enable [--by-priority] [--timers-first] [--by-due-date] | fetch-index-disable --database-url URL [--schema S] [--json]
//
// Flags follow River's CLI: --database-url defaults to $DATABASE_URL.
// migrate-up applies River's main migration line, then riverbpmn's;
// migrate-down only ever removes riverbpmn's.
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
		{"incidents", "list open incidents (--all: resolved too; --job ID: one job's)", runIncidents},
		{"job", "show one job: state, job context, retries left, retry cycle, next run, exclusive wait, incidents", runJob},
		{"instance", "list a process instance's jobs", runInstance},
		{"retries", "set a job's retries (executions left); N > 0 revives a discarded job", runRetries},
		{"priority", "override|clear a job definition's priority, or set one job's", runPriority},
		{"definitions", "list job definitions with their overriding priority, unfinished jobs, open incidents", runDefinitions},
		{"locks", "list held exclusive locks, stale ones marked", runLocks},
		{"locks-delete-stale", "delete stale exclusive locks and the rows of keys given back (fetches take stale locks over anyway)", runLocksDeleteStale},
		{"timers", "list the timers of a process instance (next due date, repetitions left)", runTimers},
		{"timer", "show one timer", runTimer},
		{"timer-set-due-date", "move a timer's waiting occurrence (--cascade shifts its cycle)", runTimerSetDueDate},
		{"timer-cancel", "cancel a timer and its cycle", runTimerCancel},
		{"timer-prune", "delete timers that ended --older-than ago (default 24h) and whose jobs have finished", runTimerPrune},
		{"suspend", "suspend a job definition, process definition, process instance or job", runSuspend},
		{"activate", "activate a job definition, process definition, process instance or job", runActivate},
		{"suspended", "list suspended targets and scheduled suspensions", runSuspended},
		{"client-sessions", "list the liveness sessions of clients (alive, or dead until taken over)", runClientSessions},
		{"progress", "show the status and progress of a job (--job) or of every job of a process instance (--instance)", runProgress},
		{"stop", "ask a job (--job) or every job of a process instance (--instance) to stop", runStop},
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
		{"jobs", "search jobs: --state, --kind, --job-definition, --process-definition, --tenant, --instance-prefix, --created-from/-to, --oldest; paged (--after, --limit)", runSearchJobs},
		{"instances", "search process instances that have jobs matching the jobs filters, each at its newest matching job; paged", runSearchInstances},
		{"bulk-retry", "retry open incidents in batches (--job IDS, --job-definition, --instance-prefix, --retries N): idempotent, resumable by running it again", runBulkRetry},
		{"bulk", "suspend|activate|stop|priority the jobs --job IDS or every job the jobs filter flags match, in batches, with progress", runBulk},
		{"why", "say why a job is not running (key held, suspended, prerequisites, pending, expired, scheduled, queue paused) and what to do: why JOB_ID", runWhy},
	}
}

// run executes the command line args and returns the process exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
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
		err := cmd.run(withStderr(ctx, stderr), args[1:], stdout)
		if err != nil && !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(stderr, "riverbpmn %s: %v\n", cmd.name, err)
		}
		return exitCode(err)
	}
	fmt.Fprintf(stderr, "riverbpmn: unknown command %q\n\n", args[0])
	usage(stderr)
	return exitUsage
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

func (f *dbFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.databaseURL, "database-url", os.Getenv("DATABASE_URL"), "PostgreSQL URL (default $DATABASE_URL)")
	fs.StringVar(&f.schema, "schema", "", "schema holding River's tables (default: the connection's search_path)")
}

func (f *dbFlags) connect(ctx context.Context) (*pgxpool.Pool, error) {
	if strings.TrimSpace(f.databaseURL) == "" {
		return nil, errors.New("--database-url is required (or set DATABASE_URL)")
	}
	config, err := pgxpool.ParseConfig(f.databaseURL)
	if err != nil {
		return nil, fmt.Errorf("--database-url: %w", err)
	}
	if f.maxConns > 0 && !strings.Contains(f.databaseURL, "pool_max_conns") {
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

func newFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet("riverbpmn "+name, flag.ContinueOnError)
	fs.SetOutput(os.Stderr)
	return fs
}

func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	return nil
}
