package main

// The operator's verbs: thin shells over the engine's management API, on the
// same connection flags as migrate, each with --json. Exit codes: 0 found or
// done, 1 error, 2 usage, 3 the id named does not exist (output.go).

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/riverqueue/river/rivertype"

	"github.com/riverbpmn/riverbpmn/exclusive"
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

func runIncidents(ctx context.Context, args []string, stdout io.Writer) error {
	if len(args) > 0 && args[0] == "list" {
		return runIncidentsList(ctx, args[1:], stdout)
	}
	var (
		v     = newVerb("incidents")
		all   bool
		jobID int64
	)
	v.fs.BoolVar(&all, "all", false, "list resolved incidents too, newest first (default: open ones, oldest first)")
	v.fs.Int64Var(&jobID, "job", 0, "list every incident of this job, open or resolved")
	var page pageFlags
	page.register(v.fs, "incident id")
	if _, err := v.parse(args); err != nil {
		return err
	}
	size, after, err := page.sizeAndAfterID()
	if err != nil {
		return err
	}
	if jobID < 0 {
		return fmt.Errorf("--job %d is not a job id (a positive integer)", jobID)
	}
	if page.paged() && (all || jobID != 0) {
		return errors.New("--after and --limit page the open incidents; not with --all or --job")
	}
	engine, closeDB, err := v.engine(ctx, nil)
	if err != nil {
		return err
	}
	defer closeDB()

	var incidents []*workflow.Incident
	switch {
	case page.paged():
		incidents, err = engine.OpenIncidentsPage(ctx, after, size)
	case jobID != 0:
		// A job that does not exist is not found, rather than an empty list.
		if _, err := engine.JobDetails(ctx, jobID); err != nil {
			return err
		}
		incidents, err = engine.JobIncidents(ctx, jobID)
	case all:
		incidents, err = engine.AllIncidents(ctx)
	default:
		incidents, err = engine.OpenIncidents(ctx)
	}
	if err != nil {
		return err
	}
	return v.print(stdout, toIncidentsJSON(incidents), func(w io.Writer) error {
		if len(incidents) == 0 {
			fmt.Fprintln(w, "no incidents")
			return nil
		}
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		writeIncidentRows(tw, incidents)
		if err := tw.Flush(); err != nil {
			return err
		}
		page.printNext(w, len(incidents), size, strconv.FormatInt(incidents[len(incidents)-1].ID, 10))
		return nil
	})
}

// incidentJSON is an incident as the verbs print it with --json.
type incidentJSON struct {
	ID                int64      `json:"id"`
	Type              string     `json:"type"`
	JobID             int64      `json:"job_id"`
	JobDefinitionID   string     `json:"job_definition_id,omitempty"`
	ActivityID        string     `json:"activity_id,omitempty"`
	ProcessInstanceID string     `json:"process_instance_id,omitempty"`
	Message           string     `json:"message"`
	CreatedAt         time.Time  `json:"created_at"`
	ResolvedAt        *time.Time `json:"resolved_at"`
}

// writeIncidentRows writes incidents to tw as a table, its header first:
// the one layout of every incident listing.
func writeIncidentRows(tw *tabwriter.Writer, incidents []*workflow.Incident) {
	fmt.Fprintln(tw, "ID\tJOB\tTYPE\tJOB DEFINITION\tACTIVITY\tINSTANCE\tCREATED\tRESOLVED\tMESSAGE")
	for _, i := range incidents {
		fmt.Fprintf(tw, "%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", i.ID, i.JobID, i.Type, orDash(i.JobDefinitionID),
			orDash(i.ActivityID), orDash(i.ProcessInstanceID), formatTime(&i.CreatedAt), formatTime(i.ResolvedAt), oneLine(i.Message, 80))
	}
}

func toIncidentsJSON(incidents []*workflow.Incident) []incidentJSON {
	out := make([]incidentJSON, len(incidents))
	for i, inc := range incidents {
		out[i] = incidentJSON{inc.ID, inc.Type, inc.JobID, inc.JobDefinitionID, inc.ActivityID, inc.ProcessInstanceID, inc.Message, inc.CreatedAt, inc.ResolvedAt}
	}
	return out
}

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
	Scope        string    `json:"exclusive_scope"`
	Key          string    `json:"key,omitempty"`
	Holder       *lockJSON `json:"holder,omitempty"`
	KeyJobsAhead int       `json:"key_jobs_ahead"`
	Waiting      bool      `json:"waiting"`
	Summary      string    `json:"summary"`
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
	Incidents        []incidentJSON       `json:"incidents"`
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
	var (
		v     = newVerb("job")
		scope = scopeFlag{scope: exclusive.ProcessInstance}
	)
	v.fs.Var(&scope, "exclusive-scope", scopeFlagUsage)
	positionals, err := v.parse(args, "JOB_ID")
	if err != nil {
		return err
	}
	jobID, err := parseID("JOB_ID", positionals[0])
	if err != nil {
		return err
	}
	engine, closeDB, err := v.engine(ctx, &workflow.Config{ExclusiveScope: scope.scope})
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
		Incidents: toIncidentsJSON(d.Incidents),
	}
	if w := d.ExclusiveWait; w != nil {
		out.ExclusiveWait = &waitJSON{Scope: w.Scope.Name(), Key: w.Key, KeyJobsAhead: w.KeyJobsAhead, Waiting: w.Waiting, Summary: w.String()}
		if w.Holder != nil {
			lock := toLockJSON(w.Holder)
			out.ExclusiveWait.Holder = &lock
		}
	}
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

// ---- instance ----

func runInstance(ctx context.Context, args []string, stdout io.Writer) error {
	var (
		v           = newVerb("instance")
		instanceArg processInstanceArg
		page        pageFlags
	)
	instanceArg.register(v.fs)
	page.register(v.fs, "job id")
	instance, err := instanceArg.parse(v, args)
	if err != nil {
		return err
	}
	size, after, err := page.sizeAndAfterID()
	if err != nil {
		return err
	}
	engine, closeDB, err := v.engine(ctx, nil)
	if err != nil {
		return err
	}
	defer closeDB()
	var jobs []*rivertype.JobRow
	if page.paged() {
		jobs, err = engine.ProcessInstanceJobsPage(ctx, instance, after, size)
	} else {
		jobs, err = engine.ProcessInstanceJobs(ctx, instance)
	}
	if err != nil {
		return err
	}
	if len(jobs) == 0 && after > 0 {
		return v.println(stdout, []jobJSON{}, "no more jobs")
	}
	if len(jobs) == 0 {
		return instanceNotFound(instance)
	}
	out := make([]jobJSON, len(jobs))
	for i, job := range jobs {
		out[i] = toJobJSON(job)
	}
	return v.print(stdout, out, func(w io.Writer) error {
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "JOB\tKIND\tSTATE\tATTEMPT\tACTIVITY\tJOB DEFINITION\tPRIORITY\tSCHEDULED")
		for _, job := range jobs {
			var activity, jobDef, prio string = "-", "-", "-"
			if jc, err := workflow.JobContextOf(job); err == nil {
				activity, jobDef, prio = orDash(jc.ActivityID), orDash(jc.JobDefinitionID), formatPriority(jc.Priority)
			}
			fmt.Fprintf(tw, "%d\t%s\t%s\t%d/%d\t%s\t%s\t%s\t%s\n", job.ID, job.Kind, job.State, job.Attempt, job.MaxAttempts,
				activity, jobDef, prio, formatTime(&job.ScheduledAt))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		page.printNext(w, len(jobs), size, strconv.FormatInt(jobs[len(jobs)-1].ID, 10))
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
	v := newVerb("retries")
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
	if err := engine.SetJobRetries(ctx, jobID, n); err != nil {
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

// splitSubcommand returns the subcommand of a verb that has some (priority
// override, deployments create): the first argument that is neither a flag
// nor the value of a connection flag, and the other arguments. With -h it
// prints usage and all's flags; without a subcommand it parses the rest
// into all, for a clear error about a mistyped flag, then names the usage.
func splitSubcommand(ctx context.Context, args []string, usage string, all *verb) (sub string, rest []string, err error) {
	rest = args
	for i := 0; i < len(args); i++ {
		tok := args[i]
		switch {
		case tok == "-h" || tok == "-help" || tok == "--help":
			fmt.Fprintln(stderrOf(ctx), usage)
			printFlags(stderrOf(ctx), all.fs)
			return "", nil, flag.ErrHelp
		case tok == "--database-url" || tok == "-database-url" || tok == "--schema" || tok == "-schema":
			i++
		case strings.HasPrefix(tok, "-"):
		default:
			return tok, append(slices.Clone(args[:i]), args[i+1:]...), nil
		}
	}
	if _, err := all.parse(rest); err != nil {
		return "", nil, err
	}
	return "", nil, errors.New("missing subcommand; " + usage)
}

func runPriority(ctx context.Context, args []string, stdout io.Writer) error {
	const usage = "usage: priority override JOB_DEFINITION_ID PRIORITY [--cascade] | priority clear JOB_DEFINITION_ID | priority set JOB_ID PRIORITY"
	sub, rest, err := splitSubcommand(ctx, args, usage, newVerb("priority"))
	if err != nil {
		return err
	}
	var (
		v       = newVerb("priority " + sub)
		cascade bool
	)
	var names []string
	switch sub {
	case "override":
		v.fs.BoolVar(&cascade, "cascade", false, "also rewrite every unfinished job of the definition to the priority")
		names = []string{"JOB_DEFINITION_ID", "PRIORITY"}
	case "clear":
		names = []string{"JOB_DEFINITION_ID"}
	case "set":
		names = []string{"JOB_ID", "PRIORITY"}
	default:
		return fmt.Errorf("unknown subcommand %q; %s", sub, usage)
	}
	positionals, err := v.parse(rest, names...)
	if err != nil {
		return err
	}
	var p int64
	if len(positionals) == 2 {
		if p, err = strconv.ParseInt(positionals[1], 10, 64); err != nil {
			return fmt.Errorf("PRIORITY %q is not an integer (int64)", positionals[1])
		}
	}
	var jobID int64
	if sub == "set" {
		if jobID, err = parseID("JOB_ID", positionals[0]); err != nil {
			return err
		}
	}
	engine, closeDB, err := v.engine(ctx, nil)
	if err != nil {
		return err
	}
	defer closeDB()

	var msg string
	switch sub {
	case "override":
		if err := engine.SetOverridingJobPriority(ctx, positionals[0], p, cascade); err != nil {
			return err
		}
		msg = fmt.Sprintf("job definition %q has overriding priority %d", positionals[0], p)
		if cascade {
			msg += "; its unfinished jobs were rewritten to it"
		}
	case "clear":
		if err := engine.ClearOverridingJobPriority(ctx, positionals[0]); err != nil {
			return err
		}
		msg = fmt.Sprintf("job definition %q has no overriding priority", positionals[0])
	case "set":
		if err := engine.SetJobPriority(ctx, jobID, p); err != nil {
			return err
		}
		msg = fmt.Sprintf("job %d has priority %d", jobID, p)
	}
	return v.println(stdout, doneJSON{Done: msg}, msg)
}

// ---- definitions ----

type definitionJSON struct {
	ID                   string     `json:"id"`
	ProcessDefinitionKey string     `json:"process_definition_key"`
	ActivityID           string     `json:"activity_id"`
	Kind                 string     `json:"kind"`
	OverridingPriority   *int64     `json:"overriding_priority"`
	UnfinishedJobs       int64      `json:"unfinished_jobs"`
	OpenIncidents        int64      `json:"open_incidents"`
	Suspended            bool       `json:"suspended"`
	SuspendedSince       *time.Time `json:"suspended_since,omitempty"`
}

func runDefinitions(ctx context.Context, args []string, stdout io.Writer) error {
	v := newVerb("definitions")
	var page pageFlags
	page.register(v.fs, "job definition id")
	if _, err := v.parse(args); err != nil {
		return err
	}
	size, err := page.size()
	if err != nil {
		return err
	}
	engine, closeDB, err := v.engine(ctx, nil)
	if err != nil {
		return err
	}
	defer closeDB()
	var defs []*workflow.JobDefinitionSummary
	if page.paged() {
		defs, err = engine.JobDefinitionsPage(ctx, page.after, size)
	} else {
		defs, err = engine.JobDefinitions(ctx)
	}
	if err != nil {
		return err
	}
	out := make([]definitionJSON, len(defs))
	for i, d := range defs {
		out[i] = definitionJSON{d.ID, d.ProcessDefinitionKey, d.ActivityID, d.Kind, d.OverridingPriority, d.UnfinishedJobs, d.OpenIncidents, d.Suspended, d.SuspendedSince}
	}
	return v.print(stdout, out, func(w io.Writer) error {
		if len(defs) == 0 {
			fmt.Fprintln(w, "no job definitions stored (they are stored when a client with declarations starts)")
			return nil
		}
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "JOB DEFINITION\tPROCESS\tACTIVITY\tKIND\tOVERRIDING PRIORITY\tUNFINISHED JOBS\tOPEN INCIDENTS\tSTATE")
		for _, d := range out {
			state := "active"
			if d.Suspended {
				state = "suspended"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%d\t%s\n", d.ID, d.ProcessDefinitionKey, d.ActivityID, d.Kind,
				formatPriority(d.OverridingPriority), d.UnfinishedJobs, d.OpenIncidents, state)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		page.printNext(w, len(defs), size, defs[len(defs)-1].ID)
		return nil
	})
}

// ---- locks ----

type lockJSON struct {
	Key           string             `json:"key"`
	JobID         int64              `json:"job_id"`
	Attempt       int                `json:"attempt"`
	ClientID      string             `json:"client_id"`
	Queue         string             `json:"queue"`
	LockedAt      time.Time          `json:"locked_at"`
	HolderState   rivertype.JobState `json:"holder_state,omitempty"`
	HolderAttempt int                `json:"holder_attempt,omitempty"`
	Stale         bool               `json:"stale"`
	ClientGone    bool               `json:"client_gone,omitempty"`
}

func toLockJSON(l *workflow.ExclusiveLock) lockJSON {
	return lockJSON{l.Key, l.JobID, l.Attempt, l.ClientID, l.Queue, l.LockedAt, l.HolderState, l.HolderAttempt, l.Stale, l.ClientGone}
}

func runLocks(ctx context.Context, args []string, stdout io.Writer) error {
	v := newVerb("locks")
	var page pageFlags
	page.register(v.fs, "key")
	if _, err := v.parse(args); err != nil {
		return err
	}
	size, err := page.size()
	if err != nil {
		return err
	}
	engine, closeDB, err := v.engine(ctx, nil)
	if err != nil {
		return err
	}
	defer closeDB()
	var locks []*workflow.ExclusiveLock
	if page.paged() {
		locks, err = engine.ExclusiveLocksPage(ctx, page.after, size)
	} else {
		locks, err = engine.ExclusiveLocks(ctx)
	}
	if err != nil {
		return err
	}
	out := make([]lockJSON, len(locks))
	for i, l := range locks {
		out[i] = toLockJSON(l)
	}
	scope, err := engine.RecordedExclusiveScope(ctx)
	if err != nil {
		return err
	}
	return v.print(stdout, out, func(w io.Writer) error {
		fmt.Fprintln(w, describeRecordedScope(scope))
		if len(locks) == 0 {
			fmt.Fprintln(w, "no exclusive locks held")
			return nil
		}
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "KEY\tJOB\tATTEMPT\tCLIENT\tQUEUE\tLOCKED AT\tHOLDER NOW\tSTALE")
		for _, l := range locks {
			holder := "gone"
			if l.HolderState != "" {
				holder = fmt.Sprintf("%s (attempt %d)", l.HolderState, l.HolderAttempt)
			}
			stale := ""
			switch {
			case l.Stale:
				stale = "STALE (free; the next fetch takes it over)"
			case l.ClientGone:
				stale = "CLIENT GONE (liveness gives it back within seconds)"
			}
			fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\n", l.Key, l.JobID, l.Attempt, l.ClientID, l.Queue, formatTime(&l.LockedAt), holder, stale)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		page.printNext(w, len(locks), size, locks[len(locks)-1].Key)
		return nil
	})
}

// runLocksDeleteStale deletes every stale exclusive lock, and the rows kept
// for keys given back (Engine.DeleteStaleExclusiveLocks).
func runLocksDeleteStale(ctx context.Context, args []string, stdout io.Writer) error {
	v := newVerb("locks-delete-stale")
	engine, closeDB, err := v.open(ctx, args)
	if err != nil {
		return err
	}
	defer closeDB()
	n, err := engine.DeleteStaleExclusiveLocks(ctx)
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

// runExclusiveScope shows the exclusive scope recorded in the schema, or
// with --set records another one (Engine.RecordedExclusiveScope,
// Engine.SetExclusiveScope).
func runExclusiveScope(ctx context.Context, args []string, stdout io.Writer) error {
	v := newVerb("exclusive-scope")
	set := v.fs.String("set", "", "record this scope as the one in force (process-instance, root-process-instance or none); refused while a client of the schema is alive")
	force := v.fs.Bool("force", false, "with --set: record it even while clients of the schema are alive (they keep their scope until they restart, then refuse to start)")
	if _, err := v.parse(args); err != nil {
		return err
	}
	var setScope *exclusive.Scope
	if *set != "" {
		scope, err := exclusive.ParseScope(*set)
		if err != nil {
			return fmt.Errorf("--set: %w", err)
		}
		setScope = &scope
	}
	engine, closeDB, err := v.engine(ctx, nil)
	if err != nil {
		return err
	}
	defer closeDB()
	var out scopeJSON
	if setScope != nil {
		set := engine.SetExclusiveScope
		if *force {
			set = engine.ForceExclusiveScope
		}
		previous, err := set(ctx, *setScope)
		if err != nil {
			return err
		}
		if previous != nil {
			out.Previous = previous.Name()
		}
	}
	recorded, err := engine.RecordedExclusiveScope(ctx)
	if err != nil {
		return err
	}
	if recorded != nil {
		at := recorded.RecordedAt.UTC()
		out.Scope, out.Recorded, out.RecordedAt, out.RecordedBy = recorded.Scope.Name(), true, &at, recorded.RecordedBy
	}
	return v.print(stdout, out, func(w io.Writer) error {
		if setScope != nil {
			prev := "none recorded"
			if out.Previous != "" {
				prev = out.Previous
			}
			fmt.Fprintf(w, "recorded exclusive scope %s (was: %s)\n", setScope.Name(), prev)
		}
		_, err := fmt.Fprintln(w, describeRecordedScope(recorded))
		return err
	})
}
