package main

// The operator's search and bulk verbs: jobs and instances (package
// search), bulk-retry and bulk (package bulk). Bulk verbs print their
// progress on stderr after each batch, and their final progress as the
// result.

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/riverqueue/river/rivertype"

	"github.com/riverbpmn/riverbpmn/bulk"
	"github.com/riverbpmn/riverbpmn/search"
	"github.com/riverbpmn/riverbpmn/workflow"
)

// filterFlags are the flags of a search.Filter.
type filterFlags struct {
	states                                listFlag
	kind, jobDef, procDef, tenant, prefix string
	createdFrom, createdTo                string
	oldest                                bool
}

func (f *filterFlags) register(fs *flag.FlagSet) {
	fs.Var(&f.states, "state", "only jobs in these `STATES` (comma-separated, or the flag repeated)")
	fs.StringVar(&f.kind, "kind", "", "only jobs of this `KIND`")
	fs.StringVar(&f.jobDef, "job-definition", "", "only jobs of this job definition `ID`")
	fs.StringVar(&f.procDef, "process-definition", "", "only jobs of this process definition `KEY`")
	fs.StringVar(&f.tenant, "tenant", "", "only jobs of this tenant `ID`")
	fs.StringVar(&f.prefix, "instance-prefix", "", "only jobs whose process instance id starts with `PREFIX`")
	fs.StringVar(&f.createdFrom, "created-from", "", "only jobs created at or after this RFC 3339 `TIME`")
	fs.StringVar(&f.createdTo, "created-to", "", "only jobs created before this RFC 3339 `TIME`")
	fs.BoolVar(&f.oldest, "oldest", false, "oldest first (default: newest first)")
}

func (f *filterFlags) filter() (*search.Filter, error) {
	out := &search.Filter{Kind: f.kind, JobDefinitionID: f.jobDef, ProcessDefinitionKey: f.procDef,
		TenantID: f.tenant, InstancePrefix: f.prefix, Oldest: f.oldest}
	for _, s := range f.states {
		out.States = append(out.States, rivertype.JobState(s))
	}
	for _, t := range []struct {
		name, value string
		into        *time.Time
	}{{"--created-from", f.createdFrom, &out.CreatedFrom}, {"--created-to", f.createdTo, &out.CreatedTo}} {
		if t.value == "" {
			continue
		}
		v, err := time.Parse(time.RFC3339, t.value)
		if err != nil {
			return nil, fmt.Errorf("%s %q is not an RFC 3339 time", t.name, t.value)
		}
		*t.into = v
	}
	if err := out.Validate(); err != nil {
		return nil, err
	}
	return out, nil
}

// cursorFlags are --after and --limit of a search verb.
type cursorFlags struct {
	after int64
	limit int
}

func (c *cursorFlags) register(fs *flag.FlagSet) {
	fs.Int64Var(&c.after, "after", 0, "the page after this job `ID` (the previous page's \"next\")")
	fs.IntVar(&c.limit, "limit", defaultPageLimit, fmt.Sprintf("at most this many (1 to %d)", workflow.MaxPageSize))
}

// openSearch reads the filter and page flags of a search verb (jobs,
// instances), then opens the engine: a bad filter or limit is a usage
// error, found before the database is opened.
func openSearch(ctx context.Context, v *verb, args []string) (*workflow.Engine, func(), *search.Filter, cursorFlags, error) {
	var (
		ff filterFlags
		cf cursorFlags
	)
	ff.register(v.fs)
	cf.register(v.fs)
	if _, err := v.parse(args); err != nil {
		return nil, nil, nil, cf, err
	}
	f, err := ff.filter()
	if err != nil {
		return nil, nil, nil, cf, err
	}
	if err := checkLimit(cf.limit); err != nil {
		return nil, nil, nil, cf, err
	}
	engine, closeDB, err := v.engine(ctx, nil)
	return engine, closeDB, f, cf, err
}

// searchJobsOutput is what jobs prints.
type searchJobsOutput struct {
	Jobs []*search.Job `json:"jobs"`
	// Next is the --after of the next page; 0 on the last.
	Next int64 `json:"next,omitempty"`
}

func runSearchJobs(ctx context.Context, args []string, stdout io.Writer) error {
	v := newVerb("jobs")
	engine, closeDB, f, cf, err := openSearch(ctx, v, args)
	if err != nil {
		return err
	}
	defer closeDB()
	jobs, err := engine.SearchJobs(ctx, f, cf.after, cf.limit)
	if err != nil {
		return err
	}
	out := &searchJobsOutput{Jobs: jobs}
	if len(jobs) == cf.limit {
		out.Next = jobs[len(jobs)-1].ID
	}
	return v.print(stdout, out, func(w io.Writer) error {
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "JOB\tSTATE\tKIND\tINSTANCE\tPROCESS DEFINITION\tJOB DEFINITION\tCREATED\tLAST ERROR")
		for _, j := range jobs {
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", j.ID, j.State, j.Kind, orDash(j.ProcessInstanceID),
				orDash(j.ProcessDefinitionKey), orDash(j.JobDefinitionID), j.CreatedAt.Format(time.RFC3339), oneLine(orDash(j.LastError), 60))
		}
		if out.Next != 0 {
			fmt.Fprintf(tw, "next page: --after %d\n", out.Next)
		}
		return tw.Flush()
	})
}

func runSearchInstances(ctx context.Context, args []string, stdout io.Writer) error {
	if len(args) > 0 && args[0] == "tree" {
		return runInstancesTree(ctx, args[1:], stdout)
	}
	v := newVerb("instances")
	engine, closeDB, f, cf, err := openSearch(ctx, v, args)
	if err != nil {
		return err
	}
	defer closeDB()
	// The page's Next is the --after of the next page, 0 on the last.
	out, err := engine.SearchProcessInstances(ctx, f, cf.after, cf.limit)
	if err != nil {
		return err
	}
	return v.print(stdout, out, func(w io.Writer) error {
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "INSTANCE\tPROCESS DEFINITION\tTENANT\tNEWEST JOB\tSTATE\tCREATED")
		for _, in := range out.Instances {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\n", in.ID, orDash(in.ProcessDefinitionKey), orDash(in.TenantID), in.JobID, in.JobState, in.JobCreatedAt.Format(time.RFC3339))
		}
		if out.Next != 0 {
			fmt.Fprintf(tw, "next page: --after %d\n", out.Next)
		}
		return tw.Flush()
	})
}

// parseJobIDs reads a list of job ids.
func parseJobIDs(values []string) ([]int64, error) {
	var ids []int64
	for _, s := range values {
		id, err := parseID("--job", s)
		if err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// progressPrinter prints a bulk action's progress on stderr.
func progressPrinter(ctx context.Context) func(bulk.Progress) {
	w := stderrOf(ctx)
	return func(p bulk.Progress) {
		total := "?"
		if p.Total >= 0 {
			total = strconv.Itoa(p.Total)
		}
		fmt.Fprintf(w, "%s: %d of %s done, %d changed, %d failed (batch %d, cursor %d)\n", p.Action, p.Done, total, p.Changed, p.Failed, p.Batches, p.Cursor)
	}
}

func printProgress(v *verb, w io.Writer, p *bulk.Progress) error {
	return v.print(w, p, func(w io.Writer) error {
		fmt.Fprintf(w, "%s: %d done, %d changed, %d failed, in %d batch(es)\n", p.Action, p.Done, p.Changed, p.Failed, p.Batches)
		for _, e := range p.Errors {
			fmt.Fprintf(w, "  %s\n", e)
		}
		return nil
	})
}

func runBulkRetry(ctx context.Context, args []string, stdout io.Writer) error {
	v := newVerb("bulk-retry")
	var (
		jobs            listFlag
		jobDef, prefix  string
		retries, batchN int
	)
	v.fs.Var(&jobs, "job", "retry the incidents of these job `IDS` (comma-separated, or the flag repeated); default: every open incident")
	v.fs.StringVar(&jobDef, "job-definition", "", "only incidents of this job definition `ID`")
	v.fs.StringVar(&prefix, "instance-prefix", "", "only incidents of process instances whose id starts with `PREFIX`")
	v.fs.IntVar(&retries, "retries", 1, "retries each job gets (1 to 32767)")
	v.fs.IntVar(&batchN, "batch", bulk.DefaultBatchSize, fmt.Sprintf("incidents per transaction (1 to %d)", bulk.MaxBatchSize))
	engine, closeDB, err := v.open(ctx, args)
	if err != nil {
		return err
	}
	defer closeDB()
	ids, err := parseJobIDs(jobs)
	if err != nil {
		return err
	}
	p, err := engine.BulkRetryIncidents(ctx, &bulk.Incidents{JobIDs: ids, JobDefinitionID: jobDef, InstancePrefix: prefix},
		&bulk.RetryOpts{Retries: retries, BatchSize: batchN, OnProgress: progressPrinter(ctx)})
	if err != nil {
		if p != nil {
			_ = printProgress(v, stdout, p)
		}
		return err
	}
	return printProgress(v, stdout, p)
}

func runBulk(ctx context.Context, args []string, stdout io.Writer) error {
	if len(args) > 0 && (args[0] == "list" || args[0] == "show") {
		if args[0] == "list" {
			return runBulkList(ctx, args[1:], stdout)
		}
		return runBulkShow(ctx, args[1:], stdout)
	}
	v := newVerb("bulk")
	var (
		jobs   listFlag
		ff     filterFlags
		prio   int64
		batchN int
	)
	v.fs.Var(&jobs, "job", "act on these job `IDS` (comma-separated, or the flag repeated) instead of a filter")
	ff.register(v.fs)
	v.fs.Int64Var(&prio, "priority", 0, "with priority: the BPMN priority to set")
	v.fs.IntVar(&batchN, "batch", bulk.DefaultBatchSize, fmt.Sprintf("jobs per batch (1 to %d)", bulk.MaxBatchSize))
	positionals, err := v.parse(args, "ACTION")
	if err != nil {
		return err
	}
	ids, err := parseJobIDs(jobs)
	if err != nil {
		return err
	}
	f, err := ff.filter()
	if err != nil {
		return err
	}
	sel := &bulk.Jobs{JobIDs: ids, Filter: *f}
	if len(ids) == 0 && f.Kind == "" && f.JobDefinitionID == "" && f.ProcessDefinitionKey == "" && f.TenantID == "" &&
		f.InstancePrefix == "" && len(f.States) == 0 && f.CreatedFrom.IsZero() && f.CreatedTo.IsZero() {
		return fmt.Errorf("give --job ids or at least one filter flag (bulk never acts on every job by default)")
	}
	engine, closeDB, err := v.engine(ctx, nil)
	if err != nil {
		return err
	}
	defer closeDB()
	opts := &bulk.JobOpts{BatchSize: batchN, OnProgress: progressPrinter(ctx)}
	var p *bulk.Progress
	switch action := positionals[0]; action {
	case "suspend":
		p, err = engine.BulkSuspendJobs(ctx, sel, opts)
	case "activate":
		p, err = engine.BulkActivateJobs(ctx, sel, opts)
	case "stop":
		p, err = engine.BulkStopJobs(ctx, sel, opts)
	case "priority":
		p, err = engine.BulkSetJobPriority(ctx, sel, prio, opts)
	default:
		return fmt.Errorf("ACTION %q is not suspend, activate, stop or priority", action)
	}
	if err != nil {
		if p != nil {
			_ = printProgress(v, stdout, p)
		}
		return err
	}
	return printProgress(v, stdout, p)
}
