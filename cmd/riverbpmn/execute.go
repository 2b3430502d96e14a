package main

// execute: run one job now (Camunda's managementService.executeJob);
// suspension-apply: apply a delayed suspension or activation now.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/riverbpmn/riverbpmn/suspension"
)

// defaultExecuteTimeout is how long execute waits for the job's run by
// default: River's default JobTimeout (1 minute) and some.
const defaultExecuteTimeout = 2 * time.Minute

type executeJSON struct {
	JobID    int64      `json:"job_id"`
	Outcome  string     `json:"outcome"`
	State    string     `json:"state"`
	Attempt  int        `json:"attempt"`
	Error    string     `json:"error,omitempty"`
	Incident bool       `json:"incident"`
	DueAt    time.Time  `json:"due_at"`
	Started  time.Time  `json:"started"`
	Ended    time.Time  `json:"ended"`
	NextRun  *time.Time `json:"next_run_at,omitempty"`
}

// errJobRunFailed is returned (after the outcome is printed) when the run
// failed, so that the exit code says so (1).
var errJobRunFailed = errors.New("the job's run failed")

func runExecute(ctx context.Context, args []string, stdout io.Writer) error {
	v := newScopedJobVerb("jobs execute")
	timeout := v.fs.Duration("timeout", defaultExecuteTimeout, "how long to wait for a client to run the job and for its run to end")
	engine, jobID, closeDB, err := v.open(ctx, args, func() error {
		if *timeout <= 0 {
			return fmt.Errorf("--timeout must be positive, got %s", *timeout)
		}
		return nil
	})
	if err != nil {
		return err
	}
	defer closeDB()
	runCtx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	res, err := engine.ExecuteJob(runCtx, jobID)
	if err != nil {
		return err
	}
	out := executeJSON{
		JobID: jobID, Outcome: res.Outcome, State: string(res.Job.State), Attempt: res.Job.Attempt,
		Error: res.Error, Incident: res.Incident, DueAt: res.DueAt, Started: res.Started, Ended: res.Ended,
	}
	if res.Outcome == "failed" || res.Outcome == "snoozed" {
		next := res.Job.ScheduledAt.UTC()
		out.NextRun = &next
	}
	if err := v.print(stdout, out, func(w io.Writer) error {
		fmt.Fprintf(w, "job %d: %s (attempt %d, now %s)\n", jobID, out.Outcome, out.Attempt, out.State)
		fmt.Fprintf(w, "due at   %s\n", out.DueAt.Format(time.RFC3339Nano))
		fmt.Fprintf(w, "ran      %s .. %s\n", out.Started.Format(time.RFC3339Nano), out.Ended.Format(time.RFC3339Nano))
		if out.Error != "" {
			fmt.Fprintf(w, "error    %s\n", out.Error)
		}
		if out.NextRun != nil {
			fmt.Fprintf(w, "next run %s\n", out.NextRun.Format(time.RFC3339Nano))
		}
		if out.Incident {
			fmt.Fprintln(w, "incident open")
		}
		return nil
	}); err != nil {
		return err
	}
	switch res.Outcome {
	case "failed", "discarded":
		return fmt.Errorf("job %d: %w: %s", jobID, errJobRunFailed, res.Error)
	}
	return nil
}

type scheduleApplyJSON struct {
	ScheduleID int64               `json:"schedule_id"`
	Change     suspension.Change   `json:"change"`
	DueAt      time.Time           `json:"due_at"`
	Result     *suspension.Outcome `json:"result"`
}

// runSuspensionApply applies a scheduled suspension or activation now.
func runSuspensionApply(ctx context.Context, args []string, stdout io.Writer) error {
	v := newVerb("suspensions apply")
	positionals, err := v.parse(args, "SCHEDULE_ID")
	if err != nil {
		return err
	}
	id, err := strconv.ParseInt(positionals[0], 10, 64)
	if err != nil || id <= 0 {
		return fmt.Errorf("SCHEDULE_ID %q is not a schedule id (a positive integer, as `riverbpmn suspensions scheduled` lists)", positionals[0])
	}
	engine, closeDB, err := v.engine(ctx, nil)
	if err != nil {
		return err
	}
	defer closeDB()
	change, res, err := engine.Suspensions().ApplyScheduled(ctx, id)
	if err != nil {
		return err
	}
	out := scheduleApplyJSON{ScheduleID: id, Change: change.Change, DueAt: change.DueAt, Result: res}
	return v.print(stdout, out, func(w io.Writer) error {
		verb := "suspended"
		if !change.Change.Suspend {
			verb = "activated"
		}
		state := verb
		if !res.Changed {
			state = "already " + verb
		}
		_, err := fmt.Fprintf(w, "schedule %d (due %s) applied now: %s %q %s; %d existing jobs, %d timer start event jobs %s\n",
			id, change.DueAt.Format(time.RFC3339), change.Change.Type, change.Change.ID, state, res.Jobs, res.StartTimerJobs, verb)
		return err
	})
}
