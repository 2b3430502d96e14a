package main

// Verbs for running jobs: status (progress), stop, and job status events.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/riverbpmn/riverbpmn/events"
	"github.com/riverbpmn/riverbpmn/jobcontrol"
	"github.com/riverbpmn/riverbpmn/workflow"
)

// runJobStatus prints a job's status and progress.
func runJobStatus(ctx context.Context, args []string, stdout io.Writer) error {
	v := newJobVerb("jobs status")
	engine, jobID, closeDB, err := v.open(ctx, args, nil)
	if err != nil {
		return err
	}
	defer closeDB()
	st, err := engine.Jobs().Status(ctx, jobID)
	if err != nil {
		return err
	}
	reports, err := progressReports(ctx, engine, []*jobcontrol.JobStatus{st})
	if err != nil {
		return err
	}
	return v.print(stdout, reports[0], func(w io.Writer) error { return printProgressReports(w, reports) })
}

// runInstanceStatus prints the status and progress of every job of a
// process instance.
func runInstanceStatus(ctx context.Context, args []string, stdout io.Writer) error {
	v := newVerb("instances status")
	engine, instance, closeDB, err := v.openInstance(ctx, args)
	if err != nil {
		return err
	}
	defer closeDB()
	statuses, err := engine.Instances().Status(ctx, instance)
	if err != nil {
		return err
	}
	if len(statuses) == 0 {
		return instanceNotFound(instance)
	}
	reports, err := progressReports(ctx, engine, statuses)
	if err != nil {
		return err
	}
	return v.print(stdout, reports, func(w io.Writer) error { return printProgressReports(w, reports) })
}

// progressReports returns the statuses with their timeout hints.
func progressReports(ctx context.Context, engine *workflow.Engine, statuses []*jobcontrol.JobStatus) ([]progressReport, error) {
	reports := make([]progressReport, len(statuses))
	for i, st := range statuses {
		reports[i] = progressReport{JobStatus: st}
		hint, err := timeoutHint(ctx, engine, st)
		if err != nil {
			return nil, err
		}
		reports[i].Hint = hint
	}
	return reports, nil
}

// printProgressReports writes one line per job, and its hint.
func printProgressReports(w io.Writer, reports []progressReport) error {
	for _, report := range reports {
		st := report.JobStatus
		progress := "no progress reported"
		if p := st.Progress; p != nil {
			progress = fmt.Sprintf("%d/%d", p.Done, p.Total)
			if p.Percent != nil {
				progress += fmt.Sprintf(" (%.2f%%)", *p.Percent)
			}
			progress += " at " + p.UpdatedAt.Format(time.RFC3339)
		}
		if _, err := fmt.Fprintf(w, "job %d %s: %s (%s, attempt %d): %s\n",
			st.JobID, st.Kind, st.Status, st.State, st.Attempt, progress); err != nil {
			return err
		}
		if report.Hint != "" {
			if _, err := fmt.Fprintf(w, "  %s\n", report.Hint); err != nil {
				return err
			}
		}
	}
	return nil
}

// progressReport is one job as progress prints it: its status, and a hint
// when its last attempt was cut short by River's job timeout.
type progressReport struct {
	*jobcontrol.JobStatus
	Hint string `json:"hint,omitempty"`
}

// timeoutHint returns, for a job that is not running and whose last attempt
// failed with "context deadline exceeded" (what work that honours its
// context returns when River's JobTimeout cancels it), what happened and
// what to do; "" otherwise. It reads the job's errors only for such jobs.
func timeoutHint(ctx context.Context, engine *workflow.Engine, st *jobcontrol.JobStatus) (string, error) {
	switch st.State {
	case "available", "retryable", "scheduled", "discarded", "cancelled":
	default:
		return "", nil
	}
	if st.Attempt == 0 {
		return "", nil
	}
	d, err := engine.JobDetails(ctx, st.JobID)
	if err != nil {
		return "", err
	}
	errs := d.Job.Errors
	if len(errs) == 0 || !strings.Contains(errs[len(errs)-1].Error, context.DeadlineExceeded.Error()) {
		return "", nil
	}
	return fmt.Sprintf("attempt %d ended with %q: River cancels a job's context after its timeout (river.Config.JobTimeout, "+
		"1 minute by default), whatever progress it reports; give a long job more with its worker's Timeout method (-1: no timeout)",
		errs[len(errs)-1].Attempt, context.DeadlineExceeded.Error()), nil
}

// runJobStop asks a job to stop.
func runJobStop(ctx context.Context, args []string, stdout io.Writer) error {
	v := newJobVerb("jobs stop")
	engine, jobID, closeDB, err := v.open(ctx, args, nil)
	if err != nil {
		return err
	}
	defer closeDB()
	res, err := engine.Jobs().Stop(ctx, jobID)
	if err != nil {
		return err
	}
	return v.print(stdout, res, func(w io.Writer) error { return printStopResults(w, []jobcontrol.StopResult{*res}) })
}

// runInstanceStop asks every job of a process instance to stop.
func runInstanceStop(ctx context.Context, args []string, stdout io.Writer) error {
	v := newVerb("instances stop")
	engine, instance, closeDB, err := v.openInstance(ctx, args)
	if err != nil {
		return err
	}
	defer closeDB()
	results, err := engine.Jobs().StopProcessInstance(ctx, instance)
	if err != nil {
		return err
	}
	if len(results) == 0 {
		return instanceNotFound(instance)
	}
	return v.print(stdout, results, func(w io.Writer) error { return printStopResults(w, results) })
}

// printStopResults writes what stopping did to each job.
func printStopResults(w io.Writer, results []jobcontrol.StopResult) error {
	for _, res := range results {
		var what string
		switch res.Outcome {
		case jobcontrol.StopAborted:
			what = "was waiting; aborted, it will not run"
		case jobcontrol.StopRequested:
			what = "is running; stop requested, it ends ABORTED when its work returns"
		default:
			what = "had already finished (" + res.State + "); left as it is"
		}
		if _, err := fmt.Fprintf(w, "job %d %s\n", res.JobID, what); err != nil {
			return err
		}
	}
	return nil
}

// runEventsRead prints the job status events retained, then stops.
func runEventsRead(ctx context.Context, args []string, stdout io.Writer) error {
	return runEvents(ctx, "events read", false, args, stdout)
}

// runEventsFollow prints job status events as they happen.
func runEventsFollow(ctx context.Context, args []string, stdout io.Writer) error {
	return runEvents(ctx, "events follow", true, args, stdout)
}

// runEvents is events read (follow false) and events follow: one event per
// line, or with --json one JSON object per line (JSON Lines).
func runEvents(ctx context.Context, name string, follow bool, args []string, stdout io.Writer) error {
	var (
		v            = newVerb(name)
		fs           = v.fs
		instance     string
		subscription string
		from         string
		pollInterval time.Duration
		skipPruned   bool
	)
	processInstanceFlag(fs, &instance, "only events of jobs of this process instance `ID`")
	if follow {
		fs.StringVar(&subscription, "subscription", "", "durable subscription name: resume where the last run with this name stopped")
		fs.StringVar(&from, "from", "", `where to start: "beginning", "now", or a cursor txid:id (default: now)`)
		fs.DurationVar(&pollInterval, "poll-interval", events.DefaultPollInterval, "how often to look without a notification")
	} else {
		fs.StringVar(&from, "from", "", `where to start: "beginning" or a cursor txid:id (default: beginning)`)
	}
	fs.BoolVar(&skipPruned, "skip-pruned", false, "when events after the position were pruned before they were read, say so on stderr and go on after them (default: fail, exit 1)")
	if _, err := v.parse(args); err != nil {
		return err
	}
	var start *events.Cursor
	switch {
	case from == "beginning", from == "" && !follow:
		start = &events.Cursor{}
	case from == "now" && follow, from == "":
	default:
		c, err := events.ParseCursor(from)
		if err != nil {
			return fmt.Errorf("--from: %w", err)
		}
		start = &c
	}
	engine, closeDB, err := v.engine(ctx, nil)
	if err != nil {
		return err
	}
	defer closeDB()

	// One event per line; with --json, one JSON object per line (JSON Lines).
	enc := json.NewEncoder(stdout)
	print := func(_ context.Context, batch []events.Event) error {
		for i := range batch {
			ev := &batch[i]
			if v.out.json {
				if err := enc.Encode(ev); err != nil {
					return err
				}
				continue
			}
			if _, err := fmt.Fprintln(stdout, formatEvent(ev)); err != nil {
				return err
			}
		}
		return nil
	}
	cfg := &events.SubscribeConfig{
		Name: subscription, From: start, ProcessInstanceID: instance, PollInterval: pollInterval,
		SkipPruned: skipPruned, Logger: slog.New(slog.NewTextHandler(stderrOf(ctx), &slog.HandlerOptions{Level: slog.LevelWarn})),
	}
	if follow {
		err := engine.Events().Subscribe(ctx, cfg, print)
		if errors.Is(err, context.Canceled) {
			return nil // interrupted: the normal end of --follow
		}
		return err
	}
	// Without --follow: every event written before now, then stop. Events
	// of transactions that were still running are waited for (a while).
	cursor := events.Cursor{}
	if start != nil {
		cursor = *start
	} else if cursor, err = engine.Events().Now(ctx); err != nil {
		return err
	}
	end, any, err := engine.Events().Last(ctx)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(listWait)
	for {
		// Read even when there is nothing to print: the read is what finds
		// out that events after the position were pruned.
		batch, err := engine.Events().Read(ctx, cursor, events.DefaultBatchSize)
		var gap *events.GapError
		if errors.As(err, &gap) && skipPruned {
			fmt.Fprintf(stderrOf(ctx), "riverbpmn events: %s; skipping them (--skip-pruned)\n", gap)
			cursor = gap.Through
			continue
		}
		if err != nil {
			return err
		}
		if !any || !cursor.Less(end) {
			return nil
		}
		if len(batch) == 0 {
			if time.Now().After(deadline) {
				return fmt.Errorf("events up to %s are held back by a transaction still running on the server; try again, or use --follow", end)
			}
			time.Sleep(50 * time.Millisecond)
			continue
		}
		cursor = batch[len(batch)-1].Cursor
		matching := batch[:0:0]
		for _, ev := range batch {
			if (instance == "" || ev.ProcessInstanceID == instance) && !end.Less(ev.Cursor) {
				matching = append(matching, ev)
			}
		}
		if err := print(ctx, matching); err != nil {
			return err
		}
	}
}

// listWait is how long `events` without --follow waits for events held back
// by transactions still running.
const listWait = 30 * time.Second

func formatEvent(ev *events.Event) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %-9s job %d %s attempt %d", ev.At.Format(time.RFC3339Nano), ev.Status, ev.JobID, ev.Kind, ev.Attempt)
	if ev.ProcessInstanceID != "" {
		fmt.Fprintf(&b, " instance %s", ev.ProcessInstanceID)
	}
	if ev.RetriesLeft != nil {
		if *ev.RetriesLeft {
			b.WriteString(" (will retry)")
		} else {
			b.WriteString(" (no retries left)")
		}
	}
	if ev.Error != "" {
		fmt.Fprintf(&b, ": %s", ev.Error)
	}
	fmt.Fprintf(&b, " [%s]", ev.Cursor)
	return b.String()
}

func runEventsEnable(ctx context.Context, args []string, stdout io.Writer) error {
	return runSwitch(ctx, "events enable", args, stdout, func(e *workflow.Engine, ctx context.Context) error { return e.Events().Enable(ctx) }, eventsSwitch)
}

func runEventsDisable(ctx context.Context, args []string, stdout io.Writer) error {
	return runSwitch(ctx, "events disable", args, stdout, func(e *workflow.Engine, ctx context.Context) error { return e.Events().Disable(ctx) }, eventsSwitch)
}

// eventsSwitch reports whether job status events are on.
var eventsSwitch = switchState{
	read: func(e *workflow.Engine, ctx context.Context) (bool, error) { return e.Events().Enabled(ctx) }, jsonKey: "events_enabled",
	label: "job status events", on: "on", off: "off",
}

// switchState is how a verb that switches a schema feature on or off reads
// and prints the feature's state afterwards.
type switchState struct {
	read           func(*workflow.Engine, context.Context) (bool, error)
	jsonKey, label string
	on, off        string
}

// runSwitch runs a verb that changes a schema feature (change), then prints
// its state as state says.
func runSwitch(ctx context.Context, name string, args []string, stdout io.Writer, change func(*workflow.Engine, context.Context) error, state switchState) error {
	v := newVerb(name)
	engine, closeDB, err := v.open(ctx, args)
	if err != nil {
		return err
	}
	defer closeDB()
	if err := change(engine, ctx); err != nil {
		return err
	}
	on, err := state.read(engine, ctx)
	if err != nil {
		return err
	}
	return v.print(stdout, map[string]bool{state.jsonKey: on}, func(w io.Writer) error {
		word := state.off
		if on {
			word = state.on
		}
		_, err := fmt.Fprintf(w, "%s: %s\n", state.label, word)
		return err
	})
}

// runEventsPrune deletes job status events written more than --older-than
// ago (what the leader does with Config.Events.Retention).
func runEventsPrune(ctx context.Context, args []string, stdout io.Writer) error {
	return runPrune(ctx, "events prune", args, stdout, "event(s)", func(e *workflow.Engine, ctx context.Context, before time.Time) (int64, error) {
		return e.Events().Prune(ctx, before)
	})
}
