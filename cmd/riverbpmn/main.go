// Command riverbpmn manages riverbpmn's database schema next to River's, and
// lets an operator look at and act on jobs, process instances, incidents,
// job definitions, timers, events, suspensions, exclusive locks, indexes,
// bulk actions, queues, client sessions and deployments.
//
//	riverbpmn <noun> <verb> [arguments] [flags]
//	riverbpmn <command> [arguments] [flags]
//
// One noun per handle of the engine (jobs, instances, incidents,
// definitions, timers, events, suspensions, exclusive, indexes, bulk,
// queues, sessions, deployments), and the top-level commands that are not
// nouns (migrate, version, why, overview, console, bench). `riverbpmn
// --help` lists the commands, `riverbpmn NOUN --help` a noun's verbs and
// `riverbpmn NOUN VERB --help` a command's flags, from the one command table
// of this command (commands, tree.go). The previous release's flat verbs
// (timer-set-due-date, locks-delete-stale, events-enable, ...) are hidden
// deprecated aliases of their commands (aliases.go). The database commands
// take the connection flags (--database-url, --schema) and, those that
// print a result, --json. Every list verb is one implementation (list.go):
// filters, --limit and --after, and a table whose columns are json keys of
// the library's items, or with --json {"items": [...], "next": "..."}.
//
// Flags follow River's CLI: --database-url defaults to $DATABASE_URL (read
// when the flag is not given; the usage text names the variable, never its
// value). One flag name per concept, in every command: --job ID,
// --process-instance ID (--instance is an alias kept for older scripts),
// --timer ID, --job-definition ID, --process-definition KEY. What is printed
// on stderr never shows a password: those of database URLs and connection
// strings are replaced by xxxxx. With --json, an error is one JSON object on
// stderr: {"error": "...", "verb": "...", "exit_code": N}, with "usage"
// after a flag error; "verb" is the command's path, such as "jobs show".
//
// Every command exits with one of:
//
//	0  found, or done (also -h / --help)
//	1  the database or the operation failed
//	2  usage: unknown noun, verb or flag, missing, extra or malformed
//	   argument (a negative id, say), no --database-url nor $DATABASE_URL:
//	   anything found wrong before the database is opened
//	3  not found: the job, process instance, timer, incident's job, job or
//	   process definition named does not exist (a process instance exists
//	   while a job belongs to it)
//
// migrate up applies River's main migration line, then riverbpmn's;
// migrate down only ever removes riverbpmn's. Both take a per-schema
// advisory lock (as workflow.MigrateUp does), so replicas may run migrate up
// at once.
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

// run executes the command line args and returns the process exit code
// (see exitCode). What it prints on stderr, errors and usage text, goes
// through redactSecrets: no password of a database URL ever shows. With
// --json, an error is one JSON object on stderr (jsonError).
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	secrets := urlPasswords(args)
	stderr = &redactingWriter{w: stderr, secrets: secrets}
	jsonErrors := wantsJSON(args)
	if len(args) == 0 || isHelp(args[0]) {
		usage(stderr, "")
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	cmd, rest, found := lookup(args)
	// A noun (or "exclusive locks") without a verb, or with -h: its verbs.
	// A noun alone runs its deprecated alias (the old verb of that name,
	// such as `jobs`), if it has one.
	if words := nounWords(args); len(words) > 0 && (!found || len(strings.Fields(cmd.path)) <= len(words)) {
		after := args[len(words):]
		switch {
		case len(after) > 0 && isHelp(after[0]):
			usage(stderr, strings.Join(words, " "))
			return exitOK
		case found && cmd.alias != nil && (len(after) == 0 || strings.HasPrefix(after[0], "-") || cmd.aliasTakesArgs):
			// The noun's deprecated alias: `timers ID`, `incidents --all`.
		default:
			msg := fmt.Sprintf("%q needs a verb", strings.Join(words, " "))
			if len(after) > 0 && !strings.HasPrefix(after[0], "-") {
				msg = fmt.Sprintf("unknown verb %q of %q", after[0], strings.Join(words, " "))
			}
			if jsonErrors {
				writeJSONError(stderr, secrets, jsonError{Error: msg + "; riverbpmn " + strings.Join(words, " ") + " --help lists the verbs", Verb: strings.Join(words, " "), ExitCode: exitUsage})
				return exitUsage
			}
			fmt.Fprintf(stderr, "riverbpmn %s: %s\n\n", strings.Join(words, " "), msg)
			usage(stderr, strings.Join(words, " "))
			return exitUsage
		}
	}
	if !found {
		if jsonErrors {
			writeJSONError(stderr, secrets, jsonError{Error: fmt.Sprintf("unknown command %q; riverbpmn --help lists the commands", args[0]), ExitCode: exitUsage})
			return exitUsage
		}
		fmt.Fprintf(stderr, "riverbpmn: unknown command %q\n\n", args[0])
		usage(stderr, "")
		return exitUsage
	}
	if cmd.alias != nil {
		old := cmd.path
		path, args := cmd.alias(rest)
		target, ok := find(path)
		if !ok {
			panic("riverbpmn: alias " + old + " names no command " + path) // TestAliases runs every alias
		}
		cmd, rest = target, args
		if !jsonErrors {
			fmt.Fprintf(stderr, "riverbpmn: %q is deprecated; use %q\n", old, path)
		}
	}
	state := &runState{}
	err := cmd.run(withRunState(withStderr(ctx, stderr), state), rest, stdout)
	code := exitCode(err, state.opened)
	var flagErr *flagError
	isFlagErr := errors.As(err, &flagErr)
	name := cmd.path
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp): // -h prints the flags, below
	case jsonErrors:
		e := jsonError{Error: err.Error(), Verb: name, ExitCode: code}
		if isFlagErr {
			var flags strings.Builder
			printFlags(&flags, flagErr.fs)
			e.Usage = flags.String()
		}
		writeJSONError(stderr, secrets, e)
		return code
	default:
		fmt.Fprintf(stderr, "riverbpmn %s: %v\n", name, err)
	}
	if isFlagErr {
		printFlags(stderr, flagErr.fs)
	}
	return code
}

// isHelp reports whether arg asks for help.
func isHelp(arg string) bool {
	return arg == "help" || arg == "-h" || arg == "-help" || arg == "--help"
}

// nounWords returns the leading words of args that name a noun of the tree
// ("jobs", or "exclusive locks"): none when args begin with no noun.
func nounWords(args []string) []string {
	n := 0
	for n < len(args) && isNoun(args[:n+1]...) {
		n++
	}
	return args[:n]
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
