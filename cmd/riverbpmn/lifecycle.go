package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/riverbpmn/riverbpmn/lifecycle"
)

// queueOutput is what queue prints.
type queueOutput struct {
	Jobs []lifecycle.QueueResult `json:"jobs"`
}

// runJobsQueue queues pending jobs, given by id.
func runJobsQueue(ctx context.Context, args []string, stdout io.Writer) error {
	v := newVerb("jobs queue")
	positionals, err := v.parse(args, positionalNames(v.fs, args, "JOB_ID")...)
	if err != nil {
		return err
	}
	if len(positionals) == 0 {
		return errors.New("missing JOB_ID (usage: riverbpmn jobs queue JOB_ID...)")
	}
	ids, err := parseJobIDs(positionals)
	if err != nil {
		return err
	}
	engine, closeDB, err := v.engine(ctx, nil)
	if err != nil {
		return err
	}
	defer closeDB()
	results, err := engine.Lifecycle().Queue(ctx, ids...)
	if err != nil {
		return err
	}
	return printQueued(v, stdout, results)
}

// runInstanceQueue queues every pending job of a process instance.
func runInstanceQueue(ctx context.Context, args []string, stdout io.Writer) error {
	v := newVerb("instances queue")
	engine, instance, closeDB, err := v.openInstance(ctx, args)
	if err != nil {
		return err
	}
	defer closeDB()
	results, err := engine.Lifecycle().QueueProcessInstance(ctx, instance)
	if err != nil {
		return err
	}
	return printQueued(v, stdout, results)
}

// printQueued prints what queueing did to each job.
func printQueued(v *verb, stdout io.Writer, results []lifecycle.QueueResult) error {
	output := &queueOutput{Jobs: results}
	return v.print(stdout, output, func(w io.Writer) error {
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
				text = "queued, still held (see `riverbpmn jobs deps`/`jobs show`)"
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
	v := newJobVerb("jobs deps")
	engine, id, closeDB, err := v.open(ctx, args, nil)
	if err != nil {
		return err
	}
	defer closeDB()
	p, err := engine.Lifecycle().Dependencies(ctx, id)
	if err != nil {
		return err
	}
	return v.print(stdout, p, func(w io.Writer) error {
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
