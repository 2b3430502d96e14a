package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/riverbpmn/riverbpmn/suspension"
)

// suspensionTarget is the target flags of suspend and activate: exactly one.
type suspensionTarget struct {
	jobDefinition     string
	processDefinition string
	processInstance   string
	job               string
	includeJobs       bool
	at                string
}

func (f *suspensionTarget) register(fs *flag.FlagSet) {
	fs.StringVar(&f.jobDefinition, "job-definition", "", "the job definition `ID`")
	fs.StringVar(&f.processDefinition, "process-definition", "", "the process definition `KEY` (and its job definitions)")
	fs.StringVar(&f.processInstance, "process-instance", "", "the process instance `ID` (all its jobs, present and future)")
	fs.StringVar(&f.job, "job", "", "one job `ID`")
	fs.BoolVar(&f.includeJobs, "include-jobs", false, "with --job-definition or --process-definition: also the existing jobs")
	fs.StringVar(&f.at, "at", "", "with --job-definition or --process-definition: apply at this RFC 3339 `TIME` instead of now")
}

// suspensionOutput is what suspend and activate print.
type suspensionOutput struct {
	Action string              `json:"action"`
	Target string              `json:"target"`
	ID     string              `json:"id"`
	Result *suspension.Outcome `json:"result,omitempty"`
	// Changed is set for a single job.
	Changed *bool `json:"changed,omitempty"`
}

func runSuspend(ctx context.Context, args []string, stdout io.Writer) error {
	return runSuspension(ctx, "suspend", args, stdout)
}

func runActivate(ctx context.Context, args []string, stdout io.Writer) error {
	return runSuspension(ctx, "activate", args, stdout)
}

func runSuspension(ctx context.Context, action string, args []string, stdout io.Writer) error {
	var (
		v      = newVerb("suspensions " + action)
		target suspensionTarget
	)
	target.register(v.fs)
	if _, err := v.parse(args); err != nil {
		return err
	}
	var named []string
	for name, value := range map[string]string{
		"--job-definition": target.jobDefinition, "--process-definition": target.processDefinition,
		"--process-instance": target.processInstance, "--job": target.job,
	} {
		if value != "" {
			named = append(named, name)
		}
	}
	if len(named) != 1 {
		return fmt.Errorf("give exactly one of --job-definition, --process-definition, --process-instance, --job (got %d)", len(named))
	}
	opts := &suspension.Opts{IncludeJobs: target.includeJobs}
	if target.at != "" {
		at, err := time.Parse(time.RFC3339Nano, target.at)
		if err != nil {
			return fmt.Errorf("--at %q: not an RFC 3339 time: %w", target.at, err)
		}
		opts.At = at
	}
	if (target.includeJobs || target.at != "") && (target.processInstance != "" || target.job != "") {
		return errors.New("--include-jobs and --at apply to --job-definition and --process-definition only")
	}
	var jobID int64
	if target.job != "" {
		var err error
		if jobID, err = strconv.ParseInt(target.job, 10, 64); err != nil {
			return fmt.Errorf("--job %q: not a job id", target.job)
		}
	}

	engine, closeDB, err := v.engine(ctx, nil)
	if err != nil {
		return err
	}
	defer closeDB()
	suspensions := engine.Suspensions()
	suspend := action == "suspend"
	output := &suspensionOutput{Action: action}
	switch {
	case target.jobDefinition != "":
		output.Target, output.ID = string(suspension.JobDefinition), target.jobDefinition
		if suspend {
			output.Result, err = suspensions.SuspendJobDefinition(ctx, target.jobDefinition, opts)
		} else {
			output.Result, err = suspensions.ActivateJobDefinition(ctx, target.jobDefinition, opts)
		}
	case target.processDefinition != "":
		output.Target, output.ID = string(suspension.ProcessDefinition), target.processDefinition
		if suspend {
			output.Result, err = suspensions.SuspendProcessDefinition(ctx, target.processDefinition, opts)
		} else {
			output.Result, err = suspensions.ActivateProcessDefinition(ctx, target.processDefinition, opts)
		}
	case target.processInstance != "":
		output.Target, output.ID = string(suspension.ProcessInstance), target.processInstance
		if suspend {
			output.Result, err = suspensions.SuspendProcessInstance(ctx, target.processInstance)
		} else {
			output.Result, err = suspensions.ActivateProcessInstance(ctx, target.processInstance)
		}
	default:
		output.Target, output.ID = "job", target.job
		var changed bool
		if suspend {
			changed, err = suspensions.SuspendJob(ctx, jobID)
		} else {
			changed, err = suspensions.ActivateJob(ctx, jobID)
		}
		output.Changed = &changed
	}
	if err != nil {
		return err
	}
	return v.print(stdout, output, func(w io.Writer) error {
		past := map[string]string{"suspend": "suspended", "activate": "activated"}[action]
		switch {
		case output.Changed != nil && *output.Changed:
			_, err := fmt.Fprintf(w, "%s job %s\n", past, output.ID)
			return err
		case output.Changed != nil:
			_, err := fmt.Fprintf(w, "job %s was already %s (or is finished): nothing to do\n", output.ID, past)
			return err
		case output.Result.ScheduledID != 0:
			_, err := fmt.Fprintf(w, "scheduled: %s %s %q at %s (schedule %d)\n", action, output.Target, output.ID,
				output.Result.ScheduledAt.Format(time.RFC3339Nano), output.Result.ScheduledID)
			return err
		}
		res := output.Result
		state := past
		if !res.Changed {
			state = "already " + past
		}
		if _, err := fmt.Fprintf(w, "%s %q: %s\n", output.Target, output.ID, state); err != nil {
			return err
		}
		for _, id := range res.JobDefinitions {
			if id == output.ID {
				continue // the target itself
			}
			if _, err := fmt.Fprintf(w, "  job definition %q\n", id); err != nil {
				return err
			}
		}
		if res.StartTimerJobs > 0 {
			if _, err := fmt.Fprintf(w, "  %s %d timer start event jobs\n", past, res.StartTimerJobs); err != nil {
				return err
			}
		}
		if res.Batches > 0 {
			_, err := fmt.Fprintf(w, "  %s %d jobs in %d batches (%s, longest batch %s)\n", past, res.Jobs, res.Batches,
				res.Duration.Round(time.Millisecond), res.LongestBatch.Round(time.Millisecond))
			return err
		}
		return nil
	})
}
