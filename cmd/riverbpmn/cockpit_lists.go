package main

// instances tree ID (the call hierarchy) and bulk show ID (one bulk
// action), each calling the engine method the console's page calls.

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/riverbpmn/riverbpmn/bulk"
	"github.com/riverbpmn/riverbpmn/instance"
	"github.com/riverbpmn/riverbpmn/workflow"
)

// instanceTreeOutput is what instances tree prints.
type instanceTreeOutput struct {
	// Root is the root process instance of the one asked for (itself when
	// it is a root).
	Root    string                 `json:"root"`
	Members []*instance.TreeMember `json:"members"`
}

// runInstancesTree prints the call hierarchy of a process instance, as the
// console's instance page shows it (Instances().Tree under the root its
// jobs record).
func runInstancesTree(ctx context.Context, args []string, stdout io.Writer) error {
	v := newVerb("instances tree")
	positionals, err := v.parse(args, "ID")
	if err != nil {
		return err
	}
	id := positionals[0]
	engine, closeDB, err := v.engine(ctx, nil)
	if err != nil {
		return err
	}
	defer closeDB()
	jobs, err := engine.Instances().Jobs(ctx, &instance.JobsParams{ProcessInstanceID: id, Limit: 1})
	if err != nil {
		return err
	}
	if len(jobs.Items) == 0 {
		return instanceNotFound(id)
	}
	out := &instanceTreeOutput{Root: id}
	if jc, err := workflow.JobContextOf(jobs.Items[0]); err == nil && jc.RootProcessInstanceID != "" {
		out.Root = jc.RootProcessInstanceID
	}
	if out.Members, err = engine.Instances().Tree(ctx, &instance.TreeParams{Root: out.Root, Limit: workflow.MaxPageSize}); err != nil {
		return err
	}
	if out.Members == nil {
		out.Members = []*instance.TreeMember{}
	}
	return v.print(stdout, out, func(w io.Writer) error {
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "INSTANCE\tUNFINISHED\tFAILED\tOPEN INCIDENTS\tWITH CALLED")
		for _, m := range out.Members {
			name := m.ProcessInstanceID
			switch {
			case name == id && name == out.Root:
				name += " (this one, root)"
			case name == id:
				name += " (this one)"
			case name == out.Root:
				name += " (root)"
			}
			fmt.Fprintf(tw, "%s%s\t%d\t%d\t%d\t%d\n", strings.Repeat("  ", m.Depth), name, m.Unfinished, m.Failed, m.OpenIncidents, m.SubtreeOpenIncidents)
		}
		return tw.Flush()
	})
}

// runBulkShow prints one bulk action (Engine.BulkOperation).
func runBulkShow(ctx context.Context, args []string, stdout io.Writer) error {
	v := newVerb("bulk show")
	positionals, err := v.parse(args, "ID")
	if err != nil {
		return err
	}
	id, err := strconv.ParseInt(positionals[0], 10, 64)
	if err != nil || id <= 0 {
		return fmt.Errorf("ID %q is not a bulk operation id (a positive integer)", positionals[0])
	}
	engine, closeDB, err := v.engine(ctx, nil)
	if err != nil {
		return err
	}
	defer closeDB()
	op, err := engine.Bulk().Get(ctx, id)
	if err != nil {
		return err
	}
	return v.print(stdout, op, func(w io.Writer) error {
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintf(tw, "id\t%d\naction\t%s\nwhat\t%s\nstate\t%s\nprogress\t%s\n", op.ID, op.Action, op.Description, op.State, progressText(op.Progress))
		if op.Error != "" {
			fmt.Fprintf(tw, "error\t%s\n", op.Error)
		}
		fmt.Fprintf(tw, "owner\t%s\nruns\t%d\ncreated\t%s\nheartbeat\t%s\nfinished\t%s\n", op.Owner, op.Runs,
			op.CreatedAt.UTC().Format(time.RFC3339), op.HeartbeatAt.UTC().Format(time.RFC3339), formatTime(op.FinishedAt))
		return tw.Flush()
	})
}

// progressText is a bulk operation's progress in a few words.
func progressText(p bulk.Progress) string {
	total := ""
	if p.Total >= 0 {
		total = fmt.Sprintf(" of %d", p.Total)
	}
	return fmt.Sprintf("%d%s done, %d changed, %d failed", p.Done, total, p.Changed, p.Failed)
}
