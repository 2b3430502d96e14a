package main

// The overview verb: the console's overview in a terminal (package
// overview, Engine.Overview).

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"
	"time"
)

func runOverview(ctx context.Context, args []string, stdout io.Writer) error {
	v := newVerb("overview")
	window := v.fs.Duration("window", 24*time.Hour, "how far back the throughput and incident figures go")
	step := v.fs.Duration("step", time.Hour, "the width of one bucket of those figures")
	engine, closeDB, err := v.open(ctx, args)
	if err != nil {
		return err
	}
	defer closeDB()
	if *window <= 0 || *step <= 0 || *step > *window {
		return fmt.Errorf("--window %s and --step %s: both positive, the step at most the window", *window, *step)
	}
	if *window / *step > 1000 {
		return fmt.Errorf("--window %s / --step %s is more than 1000 buckets", *window, *step)
	}
	o, err := engine.Overviews().Read(ctx, *window, *step)
	if err != nil {
		return err
	}
	return v.print(stdout, o, func(w io.Writer) error {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "PROCESS DEFINITION\tJOB DEFINITION\tRUNNING\tAVAILABLE\tWAITING ON KEY\tSCHEDULED\tRETRYING\tPENDING\tSUSPENDED\tFAILED\tINCIDENTS\tHELD BY")
		rows := append(o.Rows, &o.Total)
		for i, r := range rows {
			def, jobDef := orDash(r.ProcessDefinition), orDash(r.JobDefinition)
			if i == len(rows)-1 {
				def, jobDef = "TOTAL", ""
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s\n", def, jobDef, r.Running, r.Available, r.WaitingOnKey,
				r.Scheduled, r.Retryable, r.Pending, r.Suspended, r.Failed, r.Incidents, orDash(r.HeldText()))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		fmt.Fprintln(w)
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "SINCE\tCOMPLETED\tFAILED\tINCIDENTS OPENED")
		for _, b := range o.Buckets {
			fmt.Fprintf(tw, "%s\t%d\t%d\t%d\n", b.Start.Format(time.RFC3339), b.Completed, b.Failed, b.IncidentsOpened)
		}
		return tw.Flush()
	})
}
