package main

// The scaffolding every database verb shares: a flag set with the connection
// flags and --json, parsing that lets flags and positionals mix, an engine on
// the schema of the flags, and printing as text or JSON.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/riverbpmn/riverbpmn/exclusive"
	"github.com/riverbpmn/riverbpmn/workflow"
)

// verb is one database verb's flag set with the flags every such verb takes:
// the connection flags and, unless made by newDBVerb, --json. The verb adds
// its own flags to fs before it parses.
type verb struct {
	fs  *flag.FlagSet
	db  dbFlags
	out outputFlag
}

// newVerb returns the flag set of verb name with the connection flags and
// --json.
func newVerb(name string) *verb {
	v := newDBVerb(name)
	v.out.register(v.fs)
	return v
}

// newDBVerb returns the flag set of verb name with the connection flags only,
// for a verb that prints no result (console).
func newDBVerb(name string) *verb {
	v := &verb{fs: newFlagSet(name)}
	v.db.register(v.fs)
	return v
}

// parse parses args, flags anywhere among the positionals, and returns
// exactly the positionals named in names (see parseVerb).
func (v *verb) parse(args []string, names ...string) ([]string, error) {
	return parseVerb(v.fs, args, names...)
}

// parseOptional is parse for a verb whose one positional, name, may be
// omitted (because a flag can give it instead): it returns "" when it is.
func (v *verb) parseOptional(args []string, name string) (string, error) {
	positionals, err := splitVerbArgs(v.fs, args)
	if err != nil {
		return "", err
	}
	switch len(positionals) {
	case 0:
		return "", nil
	case 1:
		return positionals[0], nil
	default:
		return "", fmt.Errorf("unexpected argument %q (usage: %s [%s])", positionals[1], v.fs.Name(), name)
	}
}

// open parses args, a verb's flags and no positional, then connects and
// builds an engine with the defaults on the schema of the flags: what most
// verbs do first. The caller calls close when done.
func (v *verb) open(ctx context.Context, args []string) (engine *workflow.Engine, close func(), err error) {
	if _, err := v.parse(args); err != nil {
		return nil, nil, err
	}
	return v.engine(ctx, nil)
}

// engine connects and builds an engine on the schema of the flags, with the
// rest of config (nil: the defaults). The caller calls close when done.
func (v *verb) engine(ctx context.Context, config *workflow.Config) (engine *workflow.Engine, close func(), err error) {
	pool, err := v.db.connect(ctx)
	if err != nil {
		return nil, nil, err
	}
	if config == nil {
		config = &workflow.Config{}
	}
	config.Schema = v.db.schema
	engine, err = workflow.NewEngine(pool, config)
	if err != nil {
		pool.Close()
		return nil, nil, err
	}
	return engine, pool.Close, nil
}

// print writes result as indented JSON with --json, otherwise calls text.
func (v *verb) print(w io.Writer, result any, text func(io.Writer) error) error {
	return v.out.print(w, result, text)
}

// println writes result as JSON with --json, otherwise the line msg.
func (v *verb) println(w io.Writer, result any, msg string) error {
	return v.out.print(w, result, func(w io.Writer) error { _, err := fmt.Fprintln(w, msg); return err })
}

// parseVerb parses flags placed anywhere among the positional arguments
// (`job 42 --json` as well as `job --json 42`; a negative number such as a
// priority of -7 is an argument, not a flag) and returns exactly the
// positionals named in names, or an error naming the missing or extra one.
func parseVerb(fs *flag.FlagSet, args []string, names ...string) ([]string, error) {
	positionals, err := splitVerbArgs(fs, args)
	if err != nil {
		return nil, err
	}
	if len(positionals) < len(names) {
		return nil, fmt.Errorf("missing %s (usage: %s %s)", names[len(positionals)], fs.Name(), strings.Join(names, " "))
	}
	if len(positionals) > len(names) {
		return nil, fmt.Errorf("unexpected argument %q", positionals[len(names)])
	}
	return positionals, nil
}

// splitVerbArgs parses the flags among args into fs and returns the
// positionals in their order.
func splitVerbArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var flagArgs, positionals []string
	for i := 0; i < len(args); i++ {
		tok := args[i]
		switch {
		case tok == "--":
			positionals = append(positionals, args[i+1:]...)
			i = len(args)
		case isNegativeNumber(tok) || !strings.HasPrefix(tok, "-") || tok == "-":
			positionals = append(positionals, tok)
		default:
			flagArgs = append(flagArgs, tok)
			name, _, hasValue := strings.Cut(strings.TrimLeft(tok, "-"), "=")
			if f := fs.Lookup(name); f != nil && !hasValue && !isBoolFlag(f) && i+1 < len(args) {
				i++
				flagArgs = append(flagArgs, args[i])
			}
		}
	}
	if err := parseFS(fs, flagArgs); err != nil {
		return nil, err
	}
	return positionals, nil
}

func isNegativeNumber(s string) bool {
	_, err := strconv.ParseInt(s, 10, 64)
	return err == nil && strings.HasPrefix(s, "-")
}

func isBoolFlag(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// jobVerb is a verb on one job, named by the positional JOB_ID; with
// newScopedJobVerb, it also takes --exclusive-scope, the scope to judge the
// job's key by when the schema records none.
type jobVerb struct {
	*verb
	scope *scopeFlag
}

func newJobVerb(name string) *jobVerb { return &jobVerb{verb: newVerb(name)} }

func newScopedJobVerb(name string) *jobVerb {
	v := &jobVerb{verb: newVerb(name), scope: &scopeFlag{scope: exclusive.ProcessInstance}}
	v.fs.Var(v.scope, "exclusive-scope", scopeFlagUsage)
	return v
}

// open parses args (JOB_ID and the verb's flags), runs check on the flags
// (nil: none) and opens the engine. The caller calls close when done.
func (v *jobVerb) open(ctx context.Context, args []string, check func() error) (engine *workflow.Engine, jobID int64, close func(), err error) {
	positionals, err := v.parse(args, "JOB_ID")
	if err != nil {
		return nil, 0, nil, err
	}
	if jobID, err = parseID("JOB_ID", positionals[0]); err != nil {
		return nil, 0, nil, err
	}
	if check != nil {
		if err := check(); err != nil {
			return nil, 0, nil, err
		}
	}
	var config *workflow.Config
	if v.scope != nil {
		config = &workflow.Config{ExclusiveScope: v.scope.scope}
	}
	engine, close, err = v.engine(ctx, config)
	return engine, jobID, close, err
}

// openInstance parses the args of a verb on one process instance (the
// positional PROCESS_INSTANCE_ID or --process-instance) and opens the
// engine. The caller calls close when done.
func (v *verb) openInstance(ctx context.Context, args []string) (engine *workflow.Engine, instance string, close func(), err error) {
	var arg processInstanceArg
	arg.register(v.fs)
	if instance, err = arg.parse(v, args); err != nil {
		return nil, "", nil, err
	}
	engine, close, err = v.engine(ctx, nil)
	return engine, instance, close, err
}

// processInstanceFlag adds a verb's process instance flag to fs:
// --process-instance, the name every verb uses, and --instance, an alias
// older versions of some verbs took.
func processInstanceFlag(fs *flag.FlagSet, p *string, usage string) {
	fs.StringVar(p, "process-instance", "", usage)
	fs.StringVar(p, "instance", "", "alias of --process-instance")
}

// processInstanceArg is the process instance of a verb that names one,
// given as the positional PROCESS_INSTANCE_ID or as --process-instance.
type processInstanceArg struct{ flag string }

func (a *processInstanceArg) register(fs *flag.FlagSet) {
	processInstanceFlag(fs, &a.flag, "process instance `ID` (instead of the positional PROCESS_INSTANCE_ID)")
}

// parse parses v's args and returns the process instance, given once.
func (a *processInstanceArg) parse(v *verb, args []string) (string, error) {
	positional, err := v.parseOptional(args, "PROCESS_INSTANCE_ID")
	if err != nil {
		return "", err
	}
	switch {
	case positional != "" && a.flag != "":
		return "", fmt.Errorf("give the process instance once: PROCESS_INSTANCE_ID %q or --process-instance %q, not both", positional, a.flag)
	case positional != "":
		return positional, nil
	case a.flag == "":
		return "", errors.New("PROCESS_INSTANCE_ID or --process-instance is required")
	}
	return a.flag, nil
}

// runPrune is a verb that deletes what ended more than --older-than ago:
// prune does it and names what it deleted.
func runPrune(ctx context.Context, name string, args []string, stdout io.Writer, what string, prune func(*workflow.Engine, context.Context, time.Time) (int64, error)) error {
	v := newVerb(name)
	olderThan := v.fs.Duration("older-than", 24*time.Hour, "delete what ended at least this long ago")
	if _, err := v.parse(args); err != nil {
		return err
	}
	if *olderThan < 0 {
		return fmt.Errorf("--older-than %s must not be negative", *olderThan)
	}
	engine, closeDB, err := v.engine(ctx, nil)
	if err != nil {
		return err
	}
	defer closeDB()
	before := time.Now().Add(-*olderThan).UTC()
	n, err := prune(engine, ctx, before)
	if err != nil {
		return err
	}
	result := struct {
		Deleted int64     `json:"deleted"`
		Before  time.Time `json:"before"`
	}{n, before}
	return v.print(stdout, result, func(w io.Writer) error {
		fmt.Fprintf(w, "deleted %d %s that ended before %s\n", n, what, before.Format(time.RFC3339))
		return nil
	})
}
