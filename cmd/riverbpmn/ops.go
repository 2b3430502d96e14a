package main

// The operator's verbs: thin shells over the engine's management API, on the
// same connection flags as migrate, each with --json. Exit codes: 0 found or
// done, 1 error, 2 usage, 3 the id named does not exist (output.go).

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/riverqueue/river/rivertype"

	"github.com/riverbpmn/riverbpmn/exclusive"
	"github.com/riverbpmn/riverbpmn/incident"
	"github.com/riverbpmn/riverbpmn/workflow"
)

// parseID parses a job id argument.
func parseID(name, value string) (int64, error) {
	id, err := strconv.ParseInt(value, 10, 64)
	if err != nil || id <= 0 {
		return 0, fmt.Errorf("%s %q is not a job id (a positive integer)", name, value)
	}
	return id, nil
}

func formatTime(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func formatPriority(p *int64) string {
	if p == nil {
		return "-"
	}
	return strconv.FormatInt(*p, 10)
}

// ---- incidents ----

// oneLine shortens s to one line of at most n characters.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return orDash(s)
}

// ---- job ----

// jobJSON is a job as `job --json` prints it: River's columns, with args and
// metadata as JSON rather than base64.
type jobJSON struct {
	ID          int64                    `json:"id"`
	Kind        string                   `json:"kind"`
	Queue       string                   `json:"queue"`
	State       rivertype.JobState       `json:"state"`
	Attempt     int                      `json:"attempt"`
	MaxAttempts int                      `json:"max_attempts"`
	Priority    int                      `json:"river_priority"`
	CreatedAt   time.Time                `json:"created_at"`
	ScheduledAt time.Time                `json:"scheduled_at"`
	AttemptedAt *time.Time               `json:"attempted_at,omitempty"`
	FinalizedAt *time.Time               `json:"finalized_at,omitempty"`
	AttemptedBy []string                 `json:"attempted_by,omitempty"`
	Tags        []string                 `json:"tags"`
	Args        json.RawMessage          `json:"args"`
	Metadata    json.RawMessage          `json:"metadata"`
	Errors      []rivertype.AttemptError `json:"errors,omitempty"`
}

// waitJSON is a job's exclusive wait as `job --json` prints it.
type waitJSON struct {
	Scope        string          `json:"exclusive_scope"`
	Key          string          `json:"key,omitempty"`
	Holder       *exclusive.Lock `json:"holder,omitempty"`
	KeyJobsAhead int             `json:"key_jobs_ahead"`
	Waiting      bool            `json:"waiting"`
	Summary      string          `json:"summary"`
}

type jobDetailsJSON struct {
	Job              jobJSON              `json:"job"`
	JobContext       *workflow.JobContext `json:"job_context,omitempty"`
	JobContextError  string               `json:"job_context_error,omitempty"`
	RetriesLeft      int                  `json:"retries_left"`
	RetriesUnbounded bool                 `json:"retries_unbounded,omitempty"`
	RetryCycle       string               `json:"retry_cycle,omitempty"`
	NextRunAt        *time.Time           `json:"next_run_at,omitempty"`
	ExclusiveWait    *waitJSON            `json:"exclusive_wait,omitempty"`
	Incidents        []*incident.Incident `json:"incidents"`
}

// toWaitJSON returns a job's exclusive wait as the verbs print it; nil
// for none.
func toWaitJSON(w *workflow.ExclusiveWait) *waitJSON {
	if w == nil {
		return nil
	}
	out := &waitJSON{Scope: w.Scope.Name(), Key: w.Key, KeyJobsAhead: w.KeyJobsAhead, Waiting: w.Waiting, Summary: w.String()}
	out.Holder = w.Holder
	return out
}

func rawJSON(b []byte) json.RawMessage {
	if !json.Valid(b) {
		quoted, _ := json.Marshal(string(b))
		return quoted
	}
	return b
}

func toJobJSON(job *rivertype.JobRow) jobJSON {
	return jobJSON{
		ID: job.ID, Kind: job.Kind, Queue: job.Queue, State: job.State, Attempt: job.Attempt, MaxAttempts: job.MaxAttempts,
		Priority: job.Priority, CreatedAt: job.CreatedAt.UTC(), ScheduledAt: job.ScheduledAt.UTC(), AttemptedAt: job.AttemptedAt,
		FinalizedAt: job.FinalizedAt, AttemptedBy: job.AttemptedBy, Tags: job.Tags,
		Args: rawJSON(job.EncodedArgs), Metadata: rawJSON(job.Metadata), Errors: job.Errors,
	}
}

// scopeFlagUsage is the help of --exclusive-scope, for the verbs that judge
// a job's key.
const scopeFlagUsage = "the scope to judge the job's key by when the schema records none (no client has started on it yet): process-instance, root-process-instance or none; the scope recorded in the schema always wins"

// scopeFlag parses --exclusive-scope.
type scopeFlag struct {
	scope exclusive.Scope
	set   bool // the flag was given
}

func (f *scopeFlag) String() string { return f.scope.Name() }

func (f *scopeFlag) Set(s string) error {
	scope, err := exclusive.ParseScope(s)
	if err != nil {
		return fmt.Errorf("%q is not one of process-instance, root-process-instance, none", s)
	}
	f.scope, f.set = scope, true
	return nil
}

func runJob(ctx context.Context, args []string, stdout io.Writer) error {
	v := newScopedJobVerb("jobs show")
	engine, jobID, closeDB, err := v.open(ctx, args, nil)
	if err != nil {
		return err
	}
	defer closeDB()
	d, err := engine.JobDetails(ctx, jobID)
	if err != nil {
		return err
	}
	out := jobDetailsJSON{
		Job: toJobJSON(d.Job), JobContext: d.Context, JobContextError: d.ContextError, RetriesLeft: d.RetriesLeft,
		RetriesUnbounded: d.RetriesUnbounded, RetryCycle: d.RetryCycle, NextRunAt: d.NextRunAt,
		Incidents: d.Incidents,
	}
	out.ExclusiveWait = toWaitJSON(d.ExclusiveWait)
	return v.print(stdout, out, func(w io.Writer) error {
		job := d.Job
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintf(tw, "job\t%d (%s, queue %s)\n", job.ID, job.Kind, job.Queue)
		fmt.Fprintf(tw, "state\t%s\n", job.State)
		fmt.Fprintf(tw, "attempt\t%d of %d\n", job.Attempt, job.MaxAttempts)
		retries := strconv.Itoa(d.RetriesLeft)
		if d.RetriesUnbounded {
			retries = "unbounded"
		}
		fmt.Fprintf(tw, "retries left\t%s\n", retries)
		fmt.Fprintf(tw, "retry cycle\t%s\n", orDash(d.RetryCycle))
		fmt.Fprintf(tw, "next run\t%s\n", formatTime(d.NextRunAt))
		switch {
		case d.Context != nil:
			jc := d.Context
			fmt.Fprintf(tw, "priority\t%s (BPMN; River's own priority column: %d)\n", formatPriority(jc.Priority), job.Priority)
			fmt.Fprintf(tw, "process instance\t%s (root %s)\n", orDash(jc.ProcessInstanceID), orDash(jc.RootProcessInstanceID))
			fmt.Fprintf(tw, "process definition\t%s\n", orDash(jc.ProcessDefinitionKey))
			fmt.Fprintf(tw, "activity\t%s\n", orDash(jc.ActivityID))
			fmt.Fprintf(tw, "job definition\t%s\n", orDash(jc.JobDefinitionID))
			fmt.Fprintf(tw, "deployment\t%s\n", orDash(jc.DeploymentID))
			fmt.Fprintf(tw, "tenant\t%s\n", orDash(jc.TenantID))
			exclusive := "-"
			if jc.Exclusive != nil {
				exclusive = strconv.FormatBool(*jc.Exclusive)
			}
			fmt.Fprintf(tw, "exclusive\t%s\n", exclusive)
		case d.ContextError != "":
			fmt.Fprintf(tw, "job context\tunreadable: %s\n", d.ContextError)
		default:
			fmt.Fprintf(tw, "job context\tnone (a plain River job)\n")
		}
		if d.ExclusiveWait != nil {
			fmt.Fprintf(tw, "exclusive wait\t%s\n", d.ExclusiveWait)
		}
		if len(job.Errors) > 0 {
			last := job.Errors[len(job.Errors)-1]
			fmt.Fprintf(tw, "last error\tattempt %d at %s: %s\n", last.Attempt, formatTime(&last.At), oneLine(last.Error, 120))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		if len(d.Incidents) == 0 {
			fmt.Fprintln(w, "incidents: none")
			return nil
		}
		fmt.Fprintln(w, "incidents:")
		for _, i := range d.Incidents {
			state := "open"
			if i.ResolvedAt != nil {
				state = "resolved " + formatTime(i.ResolvedAt)
			}
			fmt.Fprintf(w, "  %d %s created %s, %s: %s\n", i.ID, i.Type, formatTime(&i.CreatedAt), state, oneLine(i.Message, 100))
		}
		return nil
	})
}

// ---- retries ----

// doneJSON is what a verb that changes something prints with --json.
type doneJSON struct {
	Done   string `json:"done"`
	Detail any    `json:"detail,omitempty"`
}

func runRetries(ctx context.Context, args []string, stdout io.Writer) error {
	v := newVerb("jobs set-retries")
	positionals, err := v.parse(args, "JOB_ID", "N")
	if err != nil {
		return err
	}
	jobID, err := parseID("JOB_ID", positionals[0])
	if err != nil {
		return err
	}
	n, err := strconv.Atoi(positionals[1])
	if err != nil || n < 0 {
		return fmt.Errorf("N %q is not a number of retries (an integer >= 0)", positionals[1])
	}
	engine, closeDB, err := v.engine(ctx, nil)
	if err != nil {
		return err
	}
	defer closeDB()
	if err := engine.Jobs().SetRetries(ctx, jobID, n); err != nil {
		return err
	}
	d, err := engine.JobDetails(ctx, jobID)
	if err != nil {
		return err
	}
	msg := fmt.Sprintf("job %d has %d retries left; it is %s", jobID, d.RetriesLeft, d.Job.State)
	return v.println(stdout, doneJSON{Done: msg, Detail: map[string]any{"job_id": jobID, "retries_left": d.RetriesLeft, "state": d.Job.State}}, msg)
}

// ---- priority ----

// parsePriority parses a PRIORITY argument.
func parsePriority(value string) (int64, error) {
	p, err := strconv.ParseInt(value, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("PRIORITY %q is not an integer (int64)", value)
	}
	return p, nil
}

// runJobSetPriority sets one job's BPMN priority.
func runJobSetPriority(ctx context.Context, args []string, stdout io.Writer) error {
	v := newVerb("jobs set-priority")
	positionals, err := v.parse(args, "JOB_ID", "PRIORITY")
	if err != nil {
		return err
	}
	jobID, err := parseID("JOB_ID", positionals[0])
	if err != nil {
		return err
	}
	p, err := parsePriority(positionals[1])
	if err != nil {
		return err
	}
	engine, closeDB, err := v.engine(ctx, nil)
	if err != nil {
		return err
	}
	defer closeDB()
	if err := engine.Jobs().SetPriority(ctx, jobID, p); err != nil {
		return err
	}
	msg := fmt.Sprintf("job %d has priority %d", jobID, p)
	return v.println(stdout, doneJSON{Done: msg}, msg)
}

// runDefinitionSetPriority gives a job definition an overriding priority.
func runDefinitionSetPriority(ctx context.Context, args []string, stdout io.Writer) error {
	v := newVerb("definitions set-priority")
	cascade := v.fs.Bool("cascade", false, "also rewrite every unfinished job of the definition to the priority")
	positionals, err := v.parse(args, "JOB_DEFINITION_ID", "PRIORITY")
	if err != nil {
		return err
	}
	p, err := parsePriority(positionals[1])
	if err != nil {
		return err
	}
	engine, closeDB, err := v.engine(ctx, nil)
	if err != nil {
		return err
	}
	defer closeDB()
	res, err := engine.Definitions().SetOverridingPriority(ctx, positionals[0], p, *cascade)
	if err != nil {
		return err
	}
	msg := fmt.Sprintf("job definition %q has overriding priority %d", positionals[0], p)
	var detail any
	if *cascade {
		msg += "; its unfinished jobs were rewritten to it"
		detail = res
	}
	return v.println(stdout, doneJSON{Done: msg, Detail: detail}, msg)
}

// runDefinitionClearPriority clears a job definition's overriding priority.
func runDefinitionClearPriority(ctx context.Context, args []string, stdout io.Writer) error {
	v := newVerb("definitions clear-priority")
	positionals, err := v.parse(args, "JOB_DEFINITION_ID")
	if err != nil {
		return err
	}
	engine, closeDB, err := v.engine(ctx, nil)
	if err != nil {
		return err
	}
	defer closeDB()
	if err := engine.Definitions().ClearOverridingPriority(ctx, positionals[0]); err != nil {
		return err
	}
	msg := fmt.Sprintf("job definition %q has no overriding priority", positionals[0])
	return v.println(stdout, doneJSON{Done: msg}, msg)
}

// ---- locks ----

// runLocksDeleteStale deletes every stale exclusive lock, and the rows kept
// for keys given back (Exclusive().DeleteStaleLocks).
func runLocksDeleteStale(ctx context.Context, args []string, stdout io.Writer) error {
	v := newVerb("exclusive locks delete-stale")
	engine, closeDB, err := v.open(ctx, args)
	if err != nil {
		return err
	}
	defer closeDB()
	n, err := engine.Exclusive().DeleteStaleLocks(ctx)
	if err != nil {
		return err
	}
	return v.print(stdout, struct {
		Deleted int `json:"deleted"`
	}{n}, func(w io.Writer) error {
		_, err := fmt.Fprintf(w, "deleted %d stale or given-back exclusive lock row(s); locks held by running jobs are kept\n", n)
		return err
	})
}

// ---- exclusive-scope ----

// scopeJSON is the exclusive scope in force as `exclusive-scope --json`
// prints it.
type scopeJSON struct {
	Scope      string     `json:"exclusive_scope,omitempty"`
	Recorded   bool       `json:"recorded"`
	RecordedAt *time.Time `json:"recorded_at,omitempty"`
	RecordedBy string     `json:"recorded_by,omitempty"`
	// Previous is the scope --set replaced, if any.
	Previous string `json:"previous,omitempty"`
}

// describeRecordedScope says in one line which exclusive scope is in force.
func describeRecordedScope(r *exclusive.RecordedScope) string {
	if r == nil {
		return "exclusive scope in force: none recorded yet (the first client to start records its engine's; engines enforce process instance unless configured otherwise)"
	}
	by := "by hand"
	if r.RecordedBy != "" {
		by = "by client " + r.RecordedBy
	}
	what := r.Scope.String()
	if !r.Scope.Enabled() {
		what = "none (exclusivity not enforced)"
	}
	return fmt.Sprintf("exclusive scope in force: %s (recorded %s, %s)", what, by, formatTime(&r.RecordedAt))
}

// runExclusiveScopeShow shows the exclusive scope recorded in the schema
// (Exclusive().RecordedScope).
func runExclusiveScopeShow(ctx context.Context, args []string, stdout io.Writer) error {
	v := newVerb("exclusive scope show")
	engine, closeDB, err := v.open(ctx, args)
	if err != nil {
		return err
	}
	defer closeDB()
	return printScope(ctx, v, engine, stdout, nil, "")
}

// runExclusiveScopeSet records another exclusive scope
// (Exclusive().SetScope, Exclusive().ForceScope).
func runExclusiveScopeSet(ctx context.Context, args []string, stdout io.Writer) error {
	v := newVerb("exclusive scope set")
	force := v.fs.Bool("force", false, "record it even while clients of the schema are alive (they keep their scope until they restart, then refuse to start)")
	positionals, err := v.parse(args, "SCOPE")
	if err != nil {
		return err
	}
	scope, err := exclusive.ParseScope(positionals[0])
	if err != nil {
		return fmt.Errorf("SCOPE: %w", err)
	}
	engine, closeDB, err := v.engine(ctx, nil)
	if err != nil {
		return err
	}
	defer closeDB()
	set := engine.Exclusive().SetScope
	if *force {
		set = engine.Exclusive().ForceScope
	}
	previous, err := set(ctx, scope)
	if err != nil {
		return err
	}
	prev := ""
	if previous != nil {
		prev = previous.Name()
	}
	return printScope(ctx, v, engine, stdout, &scope, prev)
}

// printScope prints the exclusive scope in force, after recording set (if
// not nil) in place of previous.
func printScope(ctx context.Context, v *verb, engine *workflow.Engine, stdout io.Writer, set *exclusive.Scope, previous string) error {
	out := scopeJSON{Previous: previous}
	recorded, err := engine.Exclusive().RecordedScope(ctx)
	if err != nil {
		return err
	}
	if recorded != nil {
		at := recorded.RecordedAt.UTC()
		out.Scope, out.Recorded, out.RecordedAt, out.RecordedBy = recorded.Scope.Name(), true, &at, recorded.RecordedBy
	}
	return v.print(stdout, out, func(w io.Writer) error {
		if set != nil {
			prev := "none recorded"
			if out.Previous != "" {
				prev = out.Previous
			}
			fmt.Fprintf(w, "recorded exclusive scope %s (was: %s)\n", set.Name(), prev)
		}
		_, err := fmt.Fprintln(w, describeRecordedScope(recorded))
		return err
	})
}

// runExclusiveWait prints a job's exclusive wait (Exclusive().Wait),
// judged by the scope in force: its key, the job holding it, the jobs of
// the key ahead of it.
func runExclusiveWait(ctx context.Context, args []string, stdout io.Writer) error {
	v := newJobVerb("exclusive wait")
	engine, jobID, closeDB, err := v.open(ctx, args, nil)
	if err != nil {
		return err
	}
	defer closeDB()
	wait, err := engine.Exclusive().Wait(ctx, jobID)
	if err != nil {
		return err
	}
	out := toWaitJSON(wait)
	return v.print(stdout, out, func(w io.Writer) error {
		if out == nil {
			_, err := fmt.Fprintf(w, "job %d: no exclusive wait\n", jobID)
			return err
		}
		_, err := fmt.Fprintf(w, "job %d: %s\n", jobID, out.Summary)
		return err
	})
}
