package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/riverbpmn/riverbpmn/workflow"
)

func formatTimePtr(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.UTC().Format(time.RFC3339Nano)
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

// runTimerSetDueDate moves a timer's waiting occurrence.
func runTimerSetDueDate(ctx context.Context, args []string, stdout io.Writer) error {
	var (
		v       = newTimerVerb("timers set-due-date")
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
	shift, err := engine.Timers().SetDueDate(ctx, id, dueAt, cascade)
	if err != nil {
		return err
	}
	info, err := engine.Timers().Get(ctx, id)
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
	v := newTimerVerb("timers cancel")
	id, err := v.parseID(args)
	if err != nil {
		return err
	}
	engine, closeDB, err := v.engine(ctx, nil)
	if err != nil {
		return err
	}
	defer closeDB()
	ids, err := engine.Timers().Cancel(ctx, id)
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
	v := newTimerVerb("timers show")
	id, err := v.parseID(args)
	if err != nil {
		return err
	}
	engine, closeDB, err := v.engine(ctx, nil)
	if err != nil {
		return err
	}
	defer closeDB()
	info, err := engine.Timers().Get(ctx, id)
	if err != nil {
		return err
	}
	return v.print(stdout, info, func(w io.Writer) error {
		return timersList.printText(w, listOutput[*workflow.TimerInfo]{Items: []*workflow.TimerInfo{info}}, page{})
	})
}

// runTimerPrune deletes ended timers whose occurrences have all finished.
func runTimerPrune(ctx context.Context, args []string, stdout io.Writer) error {
	return runPrune(ctx, "timers prune", args, stdout, "timer(s)", func(e *workflow.Engine, ctx context.Context, before time.Time) (int64, error) {
		return e.Timers().Prune(ctx, before)
	})
}
