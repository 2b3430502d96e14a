package main

// The queues verb: River's queues and the queues with jobs River has no
// record of, whether a client works each, and River's pause and resume.

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"
	"time"
)

func runQueues(ctx context.Context, args []string, stdout io.Writer) error {
	v := newVerb("queues")
	pause := v.fs.String("pause", "", "pause this queue (River's QueuePause): clients stop fetching from it")
	resume := v.fs.String("resume", "", "resume this paused queue (River's QueueResume)")
	engine, closeDB, err := v.open(ctx, args)
	if err != nil {
		return err
	}
	defer closeDB()
	if *pause != "" && *resume != "" {
		return fmt.Errorf("--pause %q and --resume %q: one at a time", *pause, *resume)
	}
	if *pause != "" {
		if err := engine.PauseQueue(ctx, *pause); err != nil {
			return err
		}
	}
	if *resume != "" {
		if err := engine.ResumeQueue(ctx, *resume); err != nil {
			return err
		}
	}
	queues, err := engine.Queues(ctx)
	if err != nil {
		return err
	}
	return v.print(stdout, queues, func(w io.Writer) error {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "QUEUE\tWORKED\tPAUSED\tAVAILABLE\tRUNNING\tWAITING\tLAST REPORT")
		for _, q := range queues {
			worked, paused, report := "yes", "-", "never"
			if !q.Worked {
				worked = "NO CLIENT WORKS IT"
			}
			if q.PausedAt != nil {
				paused = q.PausedAt.Format(time.RFC3339)
			}
			if q.ReportedAt != nil {
				report = q.ReportedAt.Format(time.RFC3339)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%s\n", q.Name, worked, paused, q.Available, q.Running, q.Waiting, report)
		}
		return tw.Flush()
	})
}
