package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/riverbpmn/riverbpmn/lifecycle"
	"github.com/riverbpmn/riverbpmn/workflow"
)

// queueOutput is what queue prints.
type queueOutput struct {
	Jobs []lifecycle.QueueResult `json:"jobs"`
}

// runQueue queues pending jobs: given ids (arguments), or a process
// instance's.
func runQueue(ctx context.Context, args []string, stdout io.Writer) error {
	fs := newFlagSet("queue")
	var (
		db       dbFlags
		out      outputFlag
		instance string
	)
	db.register(fs)
	out.register(fs)
	fs.StringVar(&instance, "process-instance", "", "queue every pending job of this process instance `ID`")
	positionals, err := parseVerb(fs, args, positionalNames(fs, args, "JOB_ID")...)
	if err != nil {
		return err
	}
	var ids []int64
	for _, arg := range positionals {
		id, err := parseID("JOB_ID", arg)
		if err != nil {
			return err
		}
		ids = append(ids, id)
	}
	if (len(ids) == 0) == (instance == "") {
		return errors.New("give job ids or --process-instance (not both)")
	}
	pool, err := db.connect(ctx)
	if err != nil {
		return err
	}
	defer pool.Close()
	engine, err := workflow.NewEngine(pool, &workflow.Config{Schema: db.schema})
	if err != nil {
		return err
	}
	output := &queueOutput{}
	if instance != "" {
		output.Jobs, err = engine.QueueProcessInstance(ctx, instance)
	} else {
		output.Jobs, err = engine.QueueJobs(ctx, ids...)
	}
	if err != nil {
		return err
	}
	return out.print(stdout, output, func(w io.Writer) error {
		if len(output.Jobs) == 0 {
			_, err := fmt.Fprintln(w, "no pending job")
			return err
		}
		for _, r := range output.Jobs {
			var text string
			switch r.Outcome {
			case lifecycle.Queued:
				text = "queued, now " + string(r.State)
			case lifecycle.StillHeld:
				text = "queued, still held (see `riverbpmn deps`/`job`)"
			default:
				text = "not pending (" + string(r.State) + "): nothing to do"
			}
			if _, err := fmt.Fprintf(w, "job %d: %s\n", r.JobID, text); err != nil {
				return err
			}
		}
		return nil
	})
}

// positionalNames names each positional argument of args name, for
// parseVerb with a variable number of them (the same rules: a token that
// does not start with "-", or follows a flag that takes a value, or comes
// after "--").
func positionalNames(fs *flag.FlagSet, args []string, name string) []string {
	var names []string
	for i := 0; i < len(args); i++ {
		tok := args[i]
		switch {
		case tok == "--":
			for range args[i+1:] {
				names = append(names, name)
			}
			return names
		case isNegativeNumber(tok) || !strings.HasPrefix(tok, "-") || tok == "-":
			names = append(names, name)
		default:
			flagName, _, hasValue := strings.Cut(strings.TrimLeft(tok, "-"), "=")
			if f := fs.Lookup(flagName); f != nil && !hasValue && !isBoolFlag(f) && i+1 < len(args) {
				i++
			}
		}
	}
	return names
}

// runDeps shows a job's prerequisites and dependents.
func runDeps(ctx context.Context, args []string, stdout io.Writer) error {
	fs := newFlagSet("deps")
	var (
		db  dbFlags
		out outputFlag
	)
	db.register(fs)
	out.register(fs)
	positionals, err := parseVerb(fs, args, "JOB_ID")
	if err != nil {
		return err
	}
	id, err := parseID("JOB_ID", positionals[0])
	if err != nil {
		return err
	}
	pool, err := db.connect(ctx)
	if err != nil {
		return err
	}
	defer pool.Close()
	engine, err := workflow.NewEngine(pool, &workflow.Config{Schema: db.schema})
	if err != nil {
		return err
	}
	p, err := engine.JobDependencies(ctx, id)
	if err != nil {
		return err
	}
	return out.print(stdout, p, func(w io.Writer) error {
		reasons := make([]string, len(p.Reasons))
		for i, r := range p.Reasons {
			reasons[i] = string(r)
		}
		held := ""
		if len(reasons) > 0 {
			held = ", held for " + strings.Join(reasons, ", ")
		}
		if _, err := fmt.Fprintf(w, "job %d: %s%s\nprerequisites: %d of %d done, %d blocked\n",
			p.JobID, p.State, held, p.Done, p.Total, p.Blocked); err != nil {
			return err
		}
		for _, pre := range p.Prerequisites {
			state := string(pre.State)
			if state == "" {
				state = "deleted"
			}
			line := fmt.Sprintf("  job %d: %s", pre.JobID, state)
			if pre.Blocked != "" {
				line += " (blocks this job: retry it to go on)"
			}
			if _, err := fmt.Fprintln(w, line); err != nil {
				return err
			}
		}
		_, err := fmt.Fprintf(w, "dependents: %d (%d still waiting for it)\n", p.Dependents, p.DependentsWaiting)
		return err
	})
}
