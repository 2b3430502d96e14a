package main

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"
	"time"
)

// runClientSessions lists the liveness sessions of the schema.
func runClientSessions(ctx context.Context, args []string, stdout io.Writer) error {
	v := newVerb("client-sessions")
	engine, closeDB, err := v.open(ctx, args)
	if err != nil {
		return err
	}
	defer closeDB()
	sessions, err := engine.ClientSessions(ctx)
	if err != nil {
		return err
	}
	return v.print(stdout, sessions, func(w io.Writer) error {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "SESSION\tCLIENT\tPID\tSTARTED\tALIVE\tDEAD SINCE")
		for _, s := range sessions {
			dead := "-"
			if s.DeadSince != nil {
				dead = s.DeadSince.Format(time.RFC3339)
			}
			fmt.Fprintf(tw, "%d\t%s\t%d\t%s\t%t\t%s\n", s.ID, s.ClientID, s.PID, s.Started.Format(time.RFC3339), s.Alive, dead)
		}
		return tw.Flush()
	})
}
