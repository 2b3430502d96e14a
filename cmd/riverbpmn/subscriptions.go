package main

// subscriptions: named event subscriptions, their saved position and how
// far behind they are.

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/riverbpmn/riverbpmn/events"
)

func runSubscriptions(ctx context.Context, args []string, stdout io.Writer) error {
	v := newVerb("subscriptions")
	name, err := v.parseOptional(args, "NAME")
	if err != nil {
		return err
	}
	engine, closeDB, err := v.engine(ctx, nil)
	if err != nil {
		return err
	}
	defer closeDB()
	var subs []events.Subscription
	if name != "" {
		sub, err := engine.EventSubscription(ctx, name)
		if err != nil {
			return err
		}
		subs = []events.Subscription{*sub}
	} else if subs, err = engine.EventSubscriptions(ctx); err != nil {
		return err
	}
	var result any = subs
	if name != "" {
		result = subs[0]
	}
	return v.print(stdout, result, func(w io.Writer) error {
		if len(subs) == 0 {
			fmt.Fprintln(w, "no named event subscriptions")
			return nil
		}
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "SUBSCRIPTION\tPOSITION\tBEHIND (EVENTS)\tLAST EVENT\tSAVED AT")
		for _, s := range subs {
			last := "-"
			if s.Last != nil {
				last = s.Last.String()
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\n", s.Name, s.Cursor, s.Behind, last, s.UpdatedAt.Format(time.RFC3339))
		}
		return tw.Flush()
	})
}
