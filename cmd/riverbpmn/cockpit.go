package main

// The search filter flags (jobs list, instances list, bulk) and the bulk
// verbs (package bulk). Bulk verbs print their progress on stderr after
// each batch, and their final progress as the result.

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/riverqueue/river/rivertype"

	"github.com/riverbpmn/riverbpmn/bulk"
	"github.com/riverbpmn/riverbpmn/search"
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
	v := newVerb("bulk retry")
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
	p, err := engine.Bulk().RetryIncidents(ctx, &bulk.Incidents{JobIDs: ids, JobDefinitionID: jobDef, InstancePrefix: prefix},
		&bulk.RetryOpts{Retries: retries, BatchSize: batchN, OnProgress: progressPrinter(ctx)})
	if err != nil {
		if p != nil {
			_ = printProgress(v, stdout, p)
		}
		return err
	}
	return printProgress(v, stdout, p)
}

// bulkJobsVerb returns the bulk verb of action (suspend, activate, stop,
// set-priority): the jobs --job IDS or every job the jobs list filter flags
// match, in batches, with progress on stderr.
func bulkJobsVerb(action string) func(ctx context.Context, args []string, stdout io.Writer) error {
	return func(ctx context.Context, args []string, stdout io.Writer) error {
		v := newVerb("bulk " + action)
		var (
			jobs   listFlag
			ff     filterFlags
			prio   int64
			batchN int
		)
		v.fs.Var(&jobs, "job", "act on these job `IDS` (comma-separated, or the flag repeated) instead of a filter")
		ff.register(v.fs)
		if action == "set-priority" {
			v.fs.Int64Var(&prio, "priority", 0, "the BPMN priority to set")
		}
		v.fs.IntVar(&batchN, "batch", bulk.DefaultBatchSize, fmt.Sprintf("jobs per batch (1 to %d)", bulk.MaxBatchSize))
		if _, err := v.parse(args); err != nil {
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
		switch action {
		case "suspend":
			p, err = engine.Bulk().SuspendJobs(ctx, sel, opts)
		case "activate":
			p, err = engine.Bulk().ActivateJobs(ctx, sel, opts)
		case "stop":
			p, err = engine.Bulk().StopJobs(ctx, sel, opts)
		case "set-priority":
			p, err = engine.Bulk().SetJobPriority(ctx, sel, prio, opts)
		}
		if err != nil {
			if p != nil {
				_ = printProgress(v, stdout, p)
			}
			return err
		}
		return printProgress(v, stdout, p)
	}
}
