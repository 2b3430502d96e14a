package main

// The console's listings as verbs: incidents list (filters, grouping by
// error, resolved ones), instances tree ID (the call hierarchy) and bulk
// list|show (the bulk actions' history). Each calls the engine method the
// console's page calls.

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/riverbpmn/riverbpmn/bulk"
	"github.com/riverbpmn/riverbpmn/workflow"
)

// incidentsListOutput is what incidents list prints: the page of incidents,
// or with --group-by error the groups.
type incidentsListOutput struct {
	Incidents []incidentJSON      `json:"incidents,omitempty"`
	Groups    []incidentGroupJSON `json:"groups,omitempty"`
	// Next is the --after of the next page; 0 on the last.
	Next int64 `json:"next,omitempty"`
}

// incidentGroupJSON is one group of incidents of incidents list --group-by
// error.
type incidentGroupJSON struct {
	Error string    `json:"error"`
	Count int64     `json:"count"`
	First time.Time `json:"first"`
	Last  time.Time `json:"last"`
}

// runIncidentsList lists incidents as the console's Incidents page does
// (Engine.SearchIncidents, Engine.IncidentGroups).
func runIncidentsList(ctx context.Context, args []string, stdout io.Writer) error {
	var (
		v         = newVerb("incidents list")
		s         workflow.IncidentSearch
		olderThan time.Duration
		groupBy   string
		cf        cursorFlags
	)
	v.fs.StringVar(&s.ProcessDefinitionKey, "definition", "", "only incidents of this process definition `KEY`")
	v.fs.StringVar(&s.ActivityID, "activity", "", "only incidents of this activity `ID`")
	v.fs.StringVar(&s.JobDefinitionID, "job-definition", "", "only incidents of this job definition `ID`")
	v.fs.StringVar(&s.ErrorContains, "error", "", "only incidents whose error contains this `TEXT` (case-insensitive)")
	v.fs.DurationVar(&olderThan, "older-than", 0, "only incidents opened longer than this `DURATION` ago")
	v.fs.StringVar(&s.TenantID, "tenant", "", "only incidents of this tenant `ID`")
	v.fs.StringVar(&s.InstancePrefix, "instance-prefix", "", "only incidents whose process instance id starts with `PREFIX`")
	v.fs.BoolVar(&s.Resolved, "resolved", false, "list the resolved incidents too")
	v.fs.BoolVar(&s.Oldest, "oldest", false, "oldest first (default: newest first)")
	v.fs.StringVar(&groupBy, "group-by", "", "group by `error` (the first line of the error), the largest group first")
	v.fs.Int64Var(&cf.after, "after", 0, "the page after this incident `ID` (the previous page's \"next\")")
	v.fs.IntVar(&cf.limit, "limit", defaultPageLimit, fmt.Sprintf("at most this many (1 to %d)", workflow.MaxPageSize))
	if _, err := v.parse(args); err != nil {
		return err
	}
	if groupBy != "" && groupBy != "error" {
		return fmt.Errorf("--group-by %q: only error is known", groupBy)
	}
	if olderThan < 0 {
		return fmt.Errorf("--older-than %s is negative", olderThan)
	}
	if olderThan > 0 {
		s.OpenedBefore = time.Now().Add(-olderThan)
	}
	if err := checkLimit(cf.limit); err != nil {
		return err
	}
	engine, closeDB, err := v.engine(ctx, nil)
	if err != nil {
		return err
	}
	defer closeDB()
	out := &incidentsListOutput{}
	if groupBy == "error" {
		groups, err := engine.IncidentGroups(ctx, &s)
		if err != nil {
			return err
		}
		out.Groups = []incidentGroupJSON{}
		for _, g := range groups {
			out.Groups = append(out.Groups, incidentGroupJSON{Error: g.Error, Count: g.Count, First: g.First, Last: g.Last})
		}
		return v.print(stdout, out, func(w io.Writer) error {
			tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "COUNT\tFIRST\tLAST\tERROR")
			for _, g := range out.Groups {
				fmt.Fprintf(tw, "%d\t%s\t%s\t%s\n", g.Count, g.First.UTC().Format(time.RFC3339), g.Last.UTC().Format(time.RFC3339), oneLine(g.Error, 100))
			}
			return tw.Flush()
		})
	}
	incidents, err := engine.SearchIncidents(ctx, &s, cf.after, cf.limit)
	if err != nil {
		return err
	}
	out.Incidents = toIncidentsJSON(incidents)
	if len(incidents) == cf.limit {
		out.Next = incidents[len(incidents)-1].ID
	}
	return v.print(stdout, out, func(w io.Writer) error {
		if len(incidents) == 0 {
			fmt.Fprintln(w, "no incidents")
			return nil
		}
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		writeIncidentRows(tw, incidents)
		if out.Next != 0 {
			fmt.Fprintf(tw, "next page: --after %d\n", out.Next)
		}
		return tw.Flush()
	})
}

// instanceTreeOutput is what instances tree prints.
type instanceTreeOutput struct {
	// Root is the root process instance of the one asked for (itself when
	// it is a root).
	Root    string               `json:"root"`
	Members []instanceMemberJSON `json:"members"`
}

// instanceMemberJSON is one process instance under the root, in tree order.
type instanceMemberJSON struct {
	ProcessInstanceID string `json:"process_instance_id"`
	// Parent is the instance that called it (empty for the root, or when
	// its jobs name none).
	Parent        string `json:"parent_process_instance_id,omitempty"`
	Depth         int    `json:"depth"`
	Unfinished    int64  `json:"unfinished_jobs"`
	Failed        int64  `json:"failed_jobs"`
	OpenIncidents int64  `json:"open_incidents"`
	// SubtreeOpenIncidents counts the open incidents of the instance and of
	// every instance under it.
	SubtreeOpenIncidents int64 `json:"subtree_open_incidents"`
}

// runInstancesTree prints the call hierarchy of a process instance, as the
// console's instance page shows it (Engine.ProcessInstanceTree under the
// root its jobs record).
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
	jobs, err := engine.ProcessInstanceJobsPage(ctx, id, 0, 1)
	if err != nil {
		return err
	}
	if len(jobs) == 0 {
		return instanceNotFound(id)
	}
	out := &instanceTreeOutput{Root: id, Members: []instanceMemberJSON{}}
	if jc, err := workflow.JobContextOf(jobs[0]); err == nil && jc.RootProcessInstanceID != "" {
		out.Root = jc.RootProcessInstanceID
	}
	members, err := engine.ProcessInstanceTree(ctx, out.Root, workflow.MaxPageSize)
	if err != nil {
		return err
	}
	for _, m := range members {
		out.Members = append(out.Members, instanceMemberJSON{
			ProcessInstanceID: m.ProcessInstanceID, Parent: m.ParentProcessInstanceID, Depth: m.Depth,
			Unfinished: m.Unfinished, Failed: m.Failed, OpenIncidents: m.OpenIncidents, SubtreeOpenIncidents: m.SubtreeOpenIncidents,
		})
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

// bulkListOutput is what bulk list prints.
type bulkListOutput struct {
	Operations []*bulk.Operation `json:"operations"`
	// Next is the --before of the next (older) page; 0 on the last.
	Next int64 `json:"next,omitempty"`
}

// runBulkList lists bulk actions, newest first, as the console's Bulk
// actions page does (Engine.BulkOperations).
func runBulkList(ctx context.Context, args []string, stdout io.Writer) error {
	var (
		v      = newVerb("bulk list")
		before int64
		limit  int
	)
	v.fs.Int64Var(&before, "before", 0, "the page before this operation `ID` (the previous page's \"next\")")
	v.fs.IntVar(&limit, "limit", defaultPageLimit, fmt.Sprintf("at most this many (1 to %d)", workflow.MaxPageSize))
	if _, err := v.parse(args); err != nil {
		return err
	}
	if err := checkLimit(limit); err != nil {
		return err
	}
	if before < 0 {
		return fmt.Errorf("--before %d is not an operation id (a positive integer)", before)
	}
	engine, closeDB, err := v.engine(ctx, nil)
	if err != nil {
		return err
	}
	defer closeDB()
	ops, err := engine.BulkOperations(ctx, before, limit)
	if err != nil {
		return err
	}
	out := &bulkListOutput{Operations: ops}
	if out.Operations == nil {
		out.Operations = []*bulk.Operation{}
	}
	if len(ops) == limit {
		out.Next = ops[len(ops)-1].ID
	}
	return v.print(stdout, out, func(w io.Writer) error {
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tACTION\tSTATE\tPROGRESS\tRUNS\tCREATED\tWHAT")
		for _, op := range ops {
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d\t%s\t%s\n", op.ID, op.Action, op.State, progressText(op.Progress), op.Runs,
				op.CreatedAt.UTC().Format(time.RFC3339), oneLine(op.Description, 60))
		}
		if out.Next != 0 {
			fmt.Fprintf(tw, "next page: --before %d\n", out.Next)
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
	op, err := engine.BulkOperation(ctx, id)
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
