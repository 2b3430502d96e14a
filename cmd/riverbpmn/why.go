package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"
)

// runWhy says why a job is not running (Engine.WhyWaiting): every reason,
// with what to do about it.
func runWhy(ctx context.Context, args []string, stdout io.Writer) error {
	v := newScopedJobVerb("why")
	engine, jobID, closeDB, err := v.open(ctx, args, nil)
	if err != nil {
		return err
	}
	defer closeDB()
	d, err := engine.WhyWaiting(ctx, jobID)
	if err != nil {
		return err
	}
	return v.print(stdout, d, func(w io.Writer) error {
		fmt.Fprintf(w, "job %d (%s, queue %s) is %s", d.JobID, d.Kind, d.Queue, d.State)
		if d.ProcessInstanceID != "" {
			fmt.Fprintf(w, ", process instance %s", d.ProcessInstanceID)
		}
		fmt.Fprintf(w, "; exclusive scope in force: %s\n", d.ExclusiveScope)
		for _, r := range d.Reasons {
			fmt.Fprintf(w, "- [%s] %s\n", r.Code, r.Text)
			if r.Since != nil {
				fmt.Fprintf(w, "    since %s\n", r.Since.UTC().Format(time.RFC3339))
			}
			if r.Fix != "" {
				fmt.Fprintf(w, "    fix: %s\n", r.Fix)
			}
		}
		if d.Waiting && len(d.Unknown) > 0 {
			fmt.Fprintf(w, "not checked (not in the database): %s\n", strings.Join(d.Unknown, "; "))
			var p string
			if d.Priority != nil {
				p = fmt.Sprint(*d.Priority)
			}
			fmt.Fprintf(w, "  job priority %s, deployment %s\n", orDash(p), orDash(d.DeploymentID))
		}
		return nil
	})
}
