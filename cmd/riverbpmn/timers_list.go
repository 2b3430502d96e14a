package main

// timers list: every timer of every process instance and the timer start
// events, filtered as the console's Timers page filters them
// (Engine.TimersPage).

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/riverbpmn/riverbpmn/workflow"
)

// timersListOutput is what timers list prints.
type timersListOutput struct {
	Timers []*workflow.TimerInfo `json:"timers"`
	// Next is the --after of the next page; 0 on the last.
	Next int64 `json:"next,omitempty"`
}

// runTimersList lists timers across process instances: timers list
// [--definition KEY] [--job-definition ID] [--activity ID] [--due-after T]
// [--due-before T] [--start-events] [--ended] [--after ID] [--limit N].
func runTimersList(ctx context.Context, args []string, stdout io.Writer) error {
	var (
		v                    = newVerb("timers list")
		f                    workflow.TimerFilter
		dueAfter, dueBefore  string
		cf                   cursorFlags
		startEvents, withEnd bool
	)
	v.fs.StringVar(&f.ProcessDefinitionKey, "definition", "", "only timers of this process definition `KEY` (their waiting occurrence's job)")
	v.fs.StringVar(&f.JobDefinitionID, "job-definition", "", "only timers of this job definition `ID`")
	v.fs.StringVar(&f.ActivityID, "activity", "", "only timers of this activity `ID`")
	v.fs.StringVar(&dueAfter, "due-after", "", "only timers due at or after this RFC 3339 `TIME`")
	v.fs.StringVar(&dueBefore, "due-before", "", "only timers due before this RFC 3339 `TIME`")
	v.fs.BoolVar(&startEvents, "start-events", false, "only timer start events (no process instance)")
	v.fs.BoolVar(&withEnd, "ended", false, "list the ended timers too")
	v.fs.Int64Var(&cf.after, "after", 0, "the page after this timer `ID` (the previous page's \"next\")")
	v.fs.IntVar(&cf.limit, "limit", defaultPageLimit, fmt.Sprintf("at most this many (1 to %d)", workflow.MaxPageSize))
	if _, err := v.parse(args); err != nil {
		return err
	}
	f.StartEvents, f.Ended = startEvents, withEnd
	for _, t := range []struct {
		name, value string
		into        *time.Time
	}{{"--due-after", dueAfter, &f.DueFrom}, {"--due-before", dueBefore, &f.DueBefore}} {
		if t.value == "" {
			continue
		}
		at, err := time.Parse(time.RFC3339, t.value)
		if err != nil {
			return fmt.Errorf("%s %q is not an RFC 3339 time (such as 2026-05-01T08:00:00Z)", t.name, t.value)
		}
		*t.into = at
	}
	if err := checkLimit(cf.limit); err != nil {
		return err
	}
	engine, closeDB, err := v.engine(ctx, nil)
	if err != nil {
		return err
	}
	defer closeDB()
	timers, err := engine.TimersPage(ctx, &f, cf.after, cf.limit)
	if err != nil {
		return err
	}
	out := &timersListOutput{Timers: timers}
	if len(timers) == cf.limit {
		out.Next = timers[len(timers)-1].ID
	}
	return v.print(stdout, out, func(w io.Writer) error {
		tw := tabwriter.NewWriter(w, 0, 2, 2, ' ', 0)
		fmt.Fprintln(tw, "TIMER\tINSTANCE\tTYPE\tDEFINITION\tACTIVITY\tJOB DEFINITION\tJOB\tNEXT DUE\tLEFT\tENDED")
		for _, t := range timers {
			instance := t.ProcessInstanceID
			if instance == "" {
				instance = "(start event)"
			}
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\n", t.ID, instance, t.Type, t.Definition, orDash(t.ActivityID),
				orDash(t.JobDefinitionID), t.JobID, formatTimePtr(t.NextDueAt), formatLeft(t.RepetitionsLeft), formatTimerEnd(t))
		}
		if out.Next != 0 {
			fmt.Fprintf(tw, "next page: --after %d\n", out.Next)
		}
		return tw.Flush()
	})
}
