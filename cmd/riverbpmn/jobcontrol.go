package main

// Verbs for running jobs: progress, stop, and job status events.

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/riverbpmn/riverbpmn/events"
	"github.com/riverbpmn/riverbpmn/jobcontrol"
	"github.com/riverbpmn/riverbpmn/workflow"
)

// jobTarget is the --job / --process-instance pair of progress and stop.
type jobTarget struct {
	jobID    int64
	instance string
}

func (t *jobTarget) register(fs *flag.FlagSet) {
	fs.Int64Var(&t.jobID, "job", 0, "job id")
	processInstanceFlag(fs, &t.instance, "process instance `ID` (every job of the instance)")
}

func (t *jobTarget) validate() error {
	switch {
	case t.jobID == 0 && t.instance == "":
		return errors.New("give --job ID or --process-instance ID")
	case t.jobID != 0 && t.instance != "":
		return errors.New("give --job or --process-instance, not both")
	case t.jobID < 0:
		return fmt.Errorf("--job must be a positive job id, got %d", t.jobID)
	}
	return nil
}

func runProgress(ctx context.Context, args []string, stdout io.Writer) error {
	var (
		v      = newVerb("progress")
		target jobTarget
	)
	target.register(v.fs)
	if _, err := v.parse(args); err != nil {
		return err
	}
	if err := target.validate(); err != nil {
		return err
	}
	engine, closeDB, err := v.engine(ctx, nil)
	if err != nil {
		return err
	}
	defer closeDB()

	var statuses []*jobcontrol.JobStatus
	if target.jobID != 0 {
		st, err := engine.JobStatus(ctx, target.jobID)
		if err != nil {
			return err
		}
		statuses = []*jobcontrol.JobStatus{st}
	} else if statuses, err = engine.ProcessInstanceStatus(ctx, target.instance); err != nil {
		return err
	} else if len(statuses) == 0 {
		return instanceNotFound(target.instance)
	}
	reports := make([]progressReport, len(statuses))
	for i, st := range statuses {
		reports[i] = progressReport{JobStatus: st}
		if reports[i].Hint, err = timeoutHint(ctx, engine, st); err != nil {
			return err
		}
	}
	var result any = reports
	if target.jobID != 0 {
		result = reports[0]
	}
	return v.print(stdout, result, func(w io.Writer) error {
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
	})
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

func runStop(ctx context.Context, args []string, stdout io.Writer) error {
	var (
		v      = newVerb("stop")
		target jobTarget
	)
	target.register(v.fs)
	if _, err := v.parse(args); err != nil {
		return err
	}
	if err := target.validate(); err != nil {
		return err
	}
	engine, closeDB, err := v.engine(ctx, nil)
	if err != nil {
		return err
	}
	defer closeDB()

	var results []jobcontrol.StopResult
	if target.jobID != 0 {
		res, err := engine.StopJob(ctx, target.jobID)
		if err != nil {
			return err
		}
		results = []jobcontrol.StopResult{*res}
	} else if results, err = engine.StopProcessInstance(ctx, target.instance); err != nil {
		return err
	} else if len(results) == 0 {
		return instanceNotFound(target.instance)
	}
	var result any = results
	if target.jobID != 0 {
		result = results[0]
	}
	return v.print(stdout, result, func(w io.Writer) error {
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
	})
}

func runEvents(ctx context.Context, args []string, stdout io.Writer) error {
	var (
		v            = newVerb("events")
		fs           = v.fs
		follow       bool
		instance     string
		subscription string
		from         string
		pollInterval time.Duration
		skipPruned   bool
		newest       bool
		before       string
		limit        int
	)
	fs.BoolVar(&follow, "follow", false, "keep printing events as they happen (until interrupted)")
	processInstanceFlag(fs, &instance, "only events of jobs of this process instance `ID`")
	fs.StringVar(&subscription, "subscription", "", "durable subscription name: resume where the last run with this name stopped")
	fs.StringVar(&from, "from", "", `where to start: "beginning", "now", or a cursor txid:id (default: beginning, or now with --follow)`)
	fs.DurationVar(&pollInterval, "poll-interval", events.DefaultPollInterval, "how often to look without a notification (--follow)")
	fs.BoolVar(&skipPruned, "skip-pruned", false, "when events after the position were pruned before they were read, say so on stderr and go on after them (default: fail, exit 1)")
	fs.BoolVar(&newest, "newest", false, "one page of events, newest first (what the console's Events page shows); --before and --limit page on")
	fs.StringVar(&before, "before", "", "with --newest: the page's events come before this cursor txid:id (the previous page's \"older\")")
	fs.IntVar(&limit, "limit", 50, fmt.Sprintf("with --newest: events per page (1 to %d)", workflow.MaxPageSize))
	if _, err := v.parse(args); err != nil {
		return err
	}
	if newest {
		if follow || subscription != "" || from != "" {
			return errors.New("--newest lists one page newest first; it takes --before, --limit and --instance, not --follow, --subscription or --from")
		}
		return runEventsNewest(ctx, v, stdout, instance, before, limit)
	}
	if before != "" {
		return errors.New("--before needs --newest")
	}
	if subscription != "" && !follow {
		return errors.New("--subscription needs --follow (without it, events prints what is retained and keeps no position)")
	}
	var start *events.Cursor
	switch {
	case from == "beginning", from == "" && !follow:
		start = &events.Cursor{}
	case from == "now", from == "":
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
		err := engine.SubscribeEvents(ctx, cfg, print)
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
	} else if cursor, err = engine.EventsNow(ctx); err != nil {
		return err
	}
	end, any, err := engine.LastEvent(ctx)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(listWait)
	for {
		// Read even when there is nothing to print: the read is what finds
		// out that events after the position were pruned.
		batch, err := engine.ReadEvents(ctx, cursor, events.DefaultBatchSize)
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

// runEventsNewest prints one page of events newest first
// (Engine.EventsPage), and where the next, older page starts.
func runEventsNewest(ctx context.Context, v *verb, stdout io.Writer, instance, before string, limit int) error {
	if err := checkLimit(limit); err != nil {
		return err
	}
	var cursor *events.Cursor
	if before != "" {
		c, err := events.ParseCursor(before)
		if err != nil {
			return fmt.Errorf("--before: %w", err)
		}
		cursor = &c
	}
	engine, closeDB, err := v.engine(ctx, nil)
	if err != nil {
		return err
	}
	defer closeDB()
	page, err := engine.EventsPage(ctx, cursor, instance, limit)
	if err != nil {
		return err
	}
	out := struct {
		Events []events.Event `json:"events"`
		Older  string         `json:"older,omitempty"`
		More   bool           `json:"more"`
	}{Events: page.Events, More: page.More}
	if out.Events == nil {
		out.Events = []events.Event{}
	}
	if page.More {
		out.Older = page.Older.String()
	}
	return v.print(stdout, out, func(w io.Writer) error {
		if len(page.Events) == 0 && !page.More {
			fmt.Fprintln(w, "no events")
			return nil
		}
		for i := range page.Events {
			fmt.Fprintln(w, formatEvent(&page.Events[i]))
		}
		if page.More {
			fmt.Fprintf(w, "older: --before %s\n", page.Older)
		}
		return nil
	})
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
	return runSwitch(ctx, "events-enable", args, stdout, (*workflow.Engine).EnableEvents, eventsSwitch)
}

func runEventsDisable(ctx context.Context, args []string, stdout io.Writer) error {
	return runSwitch(ctx, "events-disable", args, stdout, (*workflow.Engine).DisableEvents, eventsSwitch)
}

// eventsSwitch reports whether job status events are on.
var eventsSwitch = switchState{
	read: (*workflow.Engine).EventsEnabled, jsonKey: "events_enabled",
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
	return runSwitchVerb(ctx, newVerb(name), args, stdout, change, state)
}

// runSwitchVerb is runSwitch for a verb that adds flags of its own to v.
func runSwitchVerb(ctx context.Context, v *verb, args []string, stdout io.Writer, change func(*workflow.Engine, context.Context) error, state switchState) error {
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
	return runPrune(ctx, "events-prune", args, stdout, "event(s)", (*workflow.Engine).PruneEvents)
}
