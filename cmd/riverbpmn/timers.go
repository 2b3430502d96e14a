package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/riverbpmn/riverbpmn/workflow"
)

// timerEngine connects and builds an engine for the schema of db.
func timerEngine(ctx context.Context, db *dbFlags) (*workflow.Engine, *pgxpool.Pool, error) {
	pool, err := db.connect(ctx)
	if err != nil {
		return nil, nil, err
	}
	engine, err := workflow.NewEngine(pool, &workflow.Config{Schema: db.schema})
	if err != nil {
		pool.Close()
		return nil, nil, err
	}
	return engine, pool, nil
}

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
		ended := "-"
		if t.EndedAt != nil {
			ended = t.EndReason + " " + t.EndedAt.UTC().Format(time.RFC3339)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\n", t.ID, t.Type, t.Definition, t.Occurrence, t.JobID,
			t.JobState, formatTimePtr(t.NextDueAt), formatLeft(t.RepetitionsLeft), t.RepeatOffset, ended)
	}
	return tw.Flush()
}

// runTimers lists the timers of a process instance.
func runTimers(ctx context.Context, args []string, stdout io.Writer) error {
	var (
		db       dbFlags
		out      outputFlag
		instance string
		fs       = newFlagSet("timers")
	)
	db.register(fs)
	out.register(fs)
	fs.StringVar(&instance, "process-instance", "", "process instance id (required)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if instance == "" {
		return errors.New("--process-instance is required")
	}
	engine, pool, err := timerEngine(ctx, &db)
	if err != nil {
		return err
	}
	defer pool.Close()
	timers, err := engine.ProcessInstanceTimers(ctx, instance)
	if err != nil {
		return err
	}
	if timers == nil {
		timers = []*workflow.TimerInfo{}
	}
	return out.print(stdout, timers, func(w io.Writer) error { return printTimers(w, timers) })
}

// runTimerSetDueDate moves a timer's waiting occurrence.
func runTimerSetDueDate(ctx context.Context, args []string, stdout io.Writer) error {
	var (
		db      dbFlags
		out     outputFlag
		id      int64
		due     string
		cascade bool
		fs      = newFlagSet("timer-set-due-date")
	)
	db.register(fs)
	out.register(fs)
	fs.Int64Var(&id, "timer", 0, "timer id (required)")
	fs.StringVar(&due, "due", "", "new due date, RFC 3339 such as 2026-03-01T09:00:00Z (required)")
	fs.BoolVar(&cascade, "cascade", false, "shift the later occurrences of an ISO-8601 cycle by the same offset")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if id <= 0 {
		return errors.New("--timer is required (a positive timer id)")
	}
	dueAt, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(due))
	if err != nil {
		return fmt.Errorf("--due %q: expected RFC 3339 such as 2026-03-01T09:00:00Z", due)
	}
	engine, pool, err := timerEngine(ctx, &db)
	if err != nil {
		return err
	}
	defer pool.Close()
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
	return out.print(stdout, result, func(w io.Writer) error {
		fmt.Fprintf(w, "timer %d: occurrence %d due %s (offset added %s, repeat offset %s)\n",
			id, info.Occurrence, formatTimePtr(info.NextDueAt), shift, info.RepeatOffset)
		return nil
	})
}

// runTimerCancel cancels a timer and its cycle.
func runTimerCancel(ctx context.Context, args []string, stdout io.Writer) error {
	var (
		db  dbFlags
		out outputFlag
		id  int64
		fs  = newFlagSet("timer-cancel")
	)
	db.register(fs)
	out.register(fs)
	fs.Int64Var(&id, "timer", 0, "timer id (required)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if id <= 0 {
		return errors.New("--timer is required (a positive timer id)")
	}
	engine, pool, err := timerEngine(ctx, &db)
	if err != nil {
		return err
	}
	defer pool.Close()
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
	return out.print(stdout, result, func(w io.Writer) error {
		fmt.Fprintf(w, "timer %d cancelled; cancelled jobs: %v\n", id, ids)
		return nil
	})
}

// runTimer shows one timer.
func runTimer(ctx context.Context, args []string, stdout io.Writer) error {
	var (
		db  dbFlags
		out outputFlag
		id  int64
		fs  = newFlagSet("timer")
	)
	db.register(fs)
	out.register(fs)
	fs.Int64Var(&id, "timer", 0, "timer id (required)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if id <= 0 {
		return errors.New("--timer is required (a positive timer id)")
	}
	engine, pool, err := timerEngine(ctx, &db)
	if err != nil {
		return err
	}
	defer pool.Close()
	info, err := engine.Timer(ctx, id)
	if err != nil {
		return err
	}
	return out.print(stdout, info, func(w io.Writer) error { return printTimers(w, []*workflow.TimerInfo{info}) })
}
