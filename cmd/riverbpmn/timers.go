package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/riverbpmn/riverbpmn/workflow"
)

func formatTimePtr(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.UTC().Format(time.RFC3339Nano)
}

func formatLeft(n *int64) string {
	if n == nil {
		return "unbounded"
	}
	return fmt.Sprint(*n)
}

func printTimers(w io.Writer, timers []*workflow.TimerInfo) error {
	tw := tabwriter.NewWriter(w, 0, 2, 2, ' ', 0)
	fmt.Fprintln(tw, "TIMER\tTYPE\tDEFINITION\tOCCURRENCE\tJOB\tSTATE\tNEXT DUE\tLEFT\tOFFSET\tENDED")
	for _, t := range timers {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\n", t.ID, t.Type, t.Definition, t.Occurrence, t.JobID,
			t.JobState, formatTimePtr(t.NextDueAt), formatLeft(t.RepetitionsLeft), t.RepeatOffset, formatTimerEnd(t))
	}
	return tw.Flush()
}

// formatTimerEnd is how and when a timer ended, "-" while it runs.
func formatTimerEnd(t *workflow.TimerInfo) string {
	if t.EndedAt == nil {
		return "-"
	}
	return t.EndReason + " " + t.EndedAt.UTC().Format(time.RFC3339)
}

// timerID returns the timer id given either as the positional TIMER_ID or
// as --timer (flagID), not both.
func timerID(positional string, flagID int64) (int64, error) {
	switch {
	case positional != "" && flagID != 0:
		return 0, fmt.Errorf("give the timer id once: TIMER_ID %q or --timer %d, not both", positional, flagID)
	case positional != "":
		id, err := strconv.ParseInt(positional, 10, 64)
		if err != nil || id <= 0 {
			return 0, fmt.Errorf("TIMER_ID %q is not a timer id (a positive integer)", positional)
		}
		return id, nil
	case flagID <= 0:
		return 0, errors.New("TIMER_ID or --timer is required (a positive timer id)")
	}
	return flagID, nil
}

// timerVerb is the flag set of a verb on one timer: the timer id as the
// positional TIMER_ID or --timer.
type timerVerb struct {
	*verb
	flagID int64
}

func newTimerVerb(name string) *timerVerb {
	v := &timerVerb{verb: newVerb(name)}
	v.fs.Int64Var(&v.flagID, "timer", 0, "timer id (instead of the positional TIMER_ID)")
	return v
}

// parseID parses args and returns the timer id.
func (v *timerVerb) parseID(args []string) (int64, error) {
	positional, err := v.parseOptional(args, "TIMER_ID")
	if err != nil {
		return 0, err
	}
	return timerID(positional, v.flagID)
}

// runTimers lists the timers of a process instance.
func runTimers(ctx context.Context, args []string, stdout io.Writer) error {
	if len(args) > 0 && args[0] == "list" {
		return runTimersList(ctx, args[1:], stdout)
	}
	var (
		v           = newVerb("timers")
		instanceArg processInstanceArg
		page        pageFlags
	)
	instanceArg.register(v.fs)
	page.register(v.fs, "timer id")
	instance, err := instanceArg.parse(v, args)
	if err != nil {
		return err
	}
	size, after, err := page.sizeAndAfterID()
	if err != nil {
		return err
	}
	engine, closeDB, err := v.engine(ctx, nil)
	if err != nil {
		return err
	}
	defer closeDB()
	var timers []*workflow.TimerInfo
	if page.paged() {
		timers, err = engine.ProcessInstanceTimersPage(ctx, instance, after, size)
	} else {
		timers, err = engine.ProcessInstanceTimers(ctx, instance)
	}
	if err != nil {
		return err
	}
	if len(timers) == 0 && after == 0 {
		// No timer: an instance no job belongs to is not found; one with
		// jobs but no timer lists none.
		jobs, err := engine.ProcessInstanceJobsPage(ctx, instance, 0, 1)
		if err != nil {
			return err
		}
		if len(jobs) == 0 {
			return instanceNotFound(instance)
		}
	}
	if timers == nil {
		timers = []*workflow.TimerInfo{}
	}
	return v.print(stdout, timers, func(w io.Writer) error {
		if err := printTimers(w, timers); err != nil {
			return err
		}
		if len(timers) > 0 {
			page.printNext(w, len(timers), size, strconv.FormatInt(timers[len(timers)-1].ID, 10))
		}
		return nil
	})
}

// runTimerSetDueDate moves a timer's waiting occurrence.
func runTimerSetDueDate(ctx context.Context, args []string, stdout io.Writer) error {
	var (
		v       = newTimerVerb("timer-set-due-date")
		due     string
		cascade bool
	)
	v.fs.StringVar(&due, "due", "", "new due date, RFC 3339 such as 2026-03-01T09:00:00Z (required)")
	v.fs.BoolVar(&cascade, "cascade", false, "shift the later occurrences of an ISO-8601 cycle by the same offset")
	id, err := v.parseID(args)
	if err != nil {
		return err
	}
	dueAt, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(due))
	if err != nil {
		return fmt.Errorf("--due %q: expected RFC 3339 such as 2026-03-01T09:00:00Z", due)
	}
	engine, closeDB, err := v.engine(ctx, nil)
	if err != nil {
		return err
	}
	defer closeDB()
	shift, err := engine.SetTimerDueDate(ctx, id, dueAt, cascade)
	if err != nil {
		return err
	}
	info, err := engine.Timer(ctx, id)
	if err != nil {
		return err
	}
	result := struct {
		OffsetAdded time.Duration       `json:"offset_added_ns"`
		Timer       *workflow.TimerInfo `json:"timer"`
	}{shift, info}
	return v.print(stdout, result, func(w io.Writer) error {
		fmt.Fprintf(w, "timer %d: occurrence %d due %s (offset added %s, repeat offset %s)\n",
			id, info.Occurrence, formatTimePtr(info.NextDueAt), shift, info.RepeatOffset)
		return nil
	})
}

// runTimerCancel cancels a timer and its cycle.
func runTimerCancel(ctx context.Context, args []string, stdout io.Writer) error {
	v := newTimerVerb("timer-cancel")
	id, err := v.parseID(args)
	if err != nil {
		return err
	}
	engine, closeDB, err := v.engine(ctx, nil)
	if err != nil {
		return err
	}
	defer closeDB()
	ids, err := engine.CancelTimer(ctx, id)
	if err != nil {
		return err
	}
	if ids == nil {
		ids = []int64{}
	}
	result := struct {
		TimerID       int64   `json:"timer_id"`
		CancelledJobs []int64 `json:"cancelled_jobs"`
	}{id, ids}
	return v.print(stdout, result, func(w io.Writer) error {
		fmt.Fprintf(w, "timer %d cancelled; cancelled jobs: %v\n", id, ids)
		return nil
	})
}

// runTimer shows one timer.
func runTimer(ctx context.Context, args []string, stdout io.Writer) error {
	v := newTimerVerb("timer")
	id, err := v.parseID(args)
	if err != nil {
		return err
	}
	engine, closeDB, err := v.engine(ctx, nil)
	if err != nil {
		return err
	}
	defer closeDB()
	info, err := engine.Timer(ctx, id)
	if err != nil {
		return err
	}
	return v.print(stdout, info, func(w io.Writer) error { return printTimers(w, []*workflow.TimerInfo{info}) })
}

// runTimerPrune deletes ended timers whose occurrences have all finished.
func runTimerPrune(ctx context.Context, args []string, stdout io.Writer) error {
	return runPrune(ctx, "timer-prune", args, stdout, "timer(s)", (*workflow.Engine).PruneTimers)
}
