package main

// The list verbs of the tree, one listSpec each (list.go runs them): the
// filter flags, the engine call that lists a page, and the columns, named
// by the json keys of the item the engine returns.

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/riverqueue/river/rivertype"

	"github.com/riverbpmn/riverbpmn/bulk"
	"github.com/riverbpmn/riverbpmn/definition"
	"github.com/riverbpmn/riverbpmn/deployment"
	"github.com/riverbpmn/riverbpmn/events"
	"github.com/riverbpmn/riverbpmn/exclusive"
	"github.com/riverbpmn/riverbpmn/incident"
	"github.com/riverbpmn/riverbpmn/index"
	"github.com/riverbpmn/riverbpmn/instance"
	"github.com/riverbpmn/riverbpmn/job"
	"github.com/riverbpmn/riverbpmn/liveness"
	"github.com/riverbpmn/riverbpmn/overview"
	"github.com/riverbpmn/riverbpmn/queue"
	"github.com/riverbpmn/riverbpmn/search"
	"github.com/riverbpmn/riverbpmn/session"
	"github.com/riverbpmn/riverbpmn/suspension"
	"github.com/riverbpmn/riverbpmn/timer"
	"github.com/riverbpmn/riverbpmn/workflow"
)

// whole is the lister of a listing the engine returns whole: pageOf pages
// it by key.
func whole[I any](list func(engine *workflow.Engine, ctx context.Context) ([]I, error), key func(I) string) lister[I] {
	return func(engine *workflow.Engine, ctx context.Context, p page) ([]I, string, error) {
		all, err := list(engine, ctx)
		if err != nil {
			return nil, "", err
		}
		return pageOf(all, p, key)
	}
}

// fromHandle returns a handle's page: its items and the cursor of the
// next page, or err.
func fromHandle[I any](items func() ([]I, string), err error) ([]I, string, error) {
	if err != nil {
		return nil, "", err
	}
	list, next := items()
	return list, next, nil
}

// noFilters is the filters of a list verb without any.
func noFilters[I any](list lister[I]) func(*flag.FlagSet) func([]string) (lister[I], error) {
	return func(*flag.FlagSet) func([]string) (lister[I], error) {
		return func([]string) (lister[I], error) { return list, nil }
	}
}

// searchFilters are the filters of a list verb over a job search
// (search.Filter: --state, --kind, ...): list makes the lister of the
// filter the flags give.
func searchFilters[I any](list func(*search.Filter) lister[I]) func(*flag.FlagSet) func([]string) (lister[I], error) {
	return func(fs *flag.FlagSet) func([]string) (lister[I], error) {
		var ff filterFlags
		ff.register(fs)
		return func([]string) (lister[I], error) {
			f, err := ff.filter()
			if err != nil {
				return nil, err
			}
			return list(f), nil
		}
	}
}

// jobColumns are the columns of a job search's rows.
var jobColumns = []column{
	colAs("id", "JOB"), col("state"), col("kind"), colAs("process_instance_id", "INSTANCE"),
	colAs("process_definition_key", "PROCESS DEFINITION"), colAs("job_definition_id", "JOB DEFINITION"), colAs("created_at", "CREATED"),
	{key: "last_error", width: 60},
}

var jobsList = &listSpec[*search.Job]{
	path:    "jobs list",
	summary: "search jobs: --state, --kind, --job-definition, --process-definition, --tenant, --instance-prefix, --created-from/-to, --oldest",
	cursor:  "job id",
	filters: searchFilters(func(f *search.Filter) lister[*search.Job] {
		return func(engine *workflow.Engine, ctx context.Context, p page) ([]*search.Job, string, error) {
			out, err := engine.Jobs().List(ctx, &job.ListParams{Filter: *f, Limit: p.Limit, After: p.After})
			return fromHandle(func() ([]*search.Job, string) { return out.Items, out.Next }, err)
		}
	}),
	columns: jobColumns,
	empty:   "no jobs match",
}

var instancesList = &listSpec[*search.Instance]{
	path:    "instances list",
	summary: "search process instances that have jobs matching the jobs list filters, each at its newest matching job",
	cursor:  "job id",
	filters: searchFilters(func(f *search.Filter) lister[*search.Instance] {
		return func(engine *workflow.Engine, ctx context.Context, p page) ([]*search.Instance, string, error) {
			out, err := engine.Instances().List(ctx, &instance.ListParams{Filter: *f, Limit: p.Limit, After: p.After})
			return fromHandle(func() ([]*search.Instance, string) { return out.Items, out.Next }, err)
		}
	}),
	columns: []column{
		colAs("id", "INSTANCE"), colAs("process_definition_key", "PROCESS DEFINITION"), colAs("tenant_id", "TENANT"),
		colAs("job_id", "NEWEST JOB"), colAs("job_state", "STATE"), colAs("job_created_at", "CREATED"),
	},
	empty: "no process instances match",
}

// instanceJobJSON is a job of a process instance as instances jobs lists
// it: River's row and the job context's activity, job definition and
// priority.
type instanceJobJSON struct {
	jobJSON
	ActivityID      string `json:"activity_id,omitempty"`
	JobDefinitionID string `json:"job_definition_id,omitempty"`
	BPMNPriority    *int64 `json:"priority,omitempty"`
}

// toInstanceJobJSON returns job as instances jobs lists it.
func toInstanceJobJSON(job *rivertype.JobRow) instanceJobJSON {
	out := instanceJobJSON{jobJSON: toJobJSON(job)}
	if jc, err := workflow.JobContextOf(job); err == nil {
		out.ActivityID, out.JobDefinitionID, out.BPMNPriority = jc.ActivityID, jc.JobDefinitionID, jc.Priority
	}
	return out
}

var instanceJobsList = &listSpec[instanceJobJSON]{
	path:        "instances jobs",
	summary:     "a process instance's jobs, every state: instances jobs PROCESS_INSTANCE_ID",
	positionals: []string{"PROCESS_INSTANCE_ID"},
	cursor:      "job id",
	filters: func(fs *flag.FlagSet) func([]string) (lister[instanceJobJSON], error) {
		return func(args []string) (lister[instanceJobJSON], error) {
			id := args[0]
			return func(engine *workflow.Engine, ctx context.Context, p page) ([]instanceJobJSON, string, error) {
				out, err := engine.Instances().Jobs(ctx, &instance.JobsParams{ProcessInstanceID: id, Limit: p.Limit, After: p.After})
				if err != nil {
					return nil, "", err
				}
				if len(out.Items) == 0 && p.After == "" {
					return nil, "", instanceNotFound(id)
				}
				jobs := make([]instanceJobJSON, len(out.Items))
				for i, job := range out.Items {
					jobs[i] = toInstanceJobJSON(job)
				}
				return jobs, out.Next, nil
			}, nil
		}
	},
	columns: []column{
		colAs("id", "JOB"), col("kind"), col("state"),
		{key: "attempt", text: func(r row) string { return r.str("attempt") + "/" + r.str("max_attempts") }},
		colAs("activity_id", "ACTIVITY"), colAs("job_definition_id", "JOB DEFINITION"), col("priority"), colAs("scheduled_at", "SCHEDULED"),
	},
	empty: "no jobs",
}

// timerColumns are the columns of a timer listing.
var timerColumns = []column{
	colAs("id", "TIMER"),
	{key: "process_instance_id", header: "INSTANCE", text: func(r row) string {
		if !r.isSet("process_instance_id") {
			return "(start event)"
		}
		return r.str("process_instance_id")
	}},
	col("type"), col("definition"), colAs("activity_id", "ACTIVITY"), colAs("job_definition_id", "JOB DEFINITION"),
	colAs("occurrence", "OCC"), colAs("job_id", "JOB"), col("job_state"), colAs("next_due_at", "NEXT DUE"),
	{key: "repetitions_left", header: "LEFT", text: func(r row) string {
		if !r.isSet("repetitions_left") {
			return "unbounded"
		}
		return r.str("repetitions_left")
	}},
	{key: "ended_at", header: "ENDED", text: func(r row) string {
		if !r.isSet("ended_at") {
			return "-"
		}
		return r.str("end_reason") + " " + r.str("ended_at")
	}},
}

var instanceTimersList = &listSpec[*timer.Info]{
	path:        "instances timers",
	summary:     "a process instance's timers (next due date, repetitions left): instances timers PROCESS_INSTANCE_ID",
	positionals: []string{"PROCESS_INSTANCE_ID"},
	cursor:      "timer id",
	filters: func(fs *flag.FlagSet) func([]string) (lister[*timer.Info], error) {
		return func(args []string) (lister[*timer.Info], error) {
			id := args[0]
			return func(engine *workflow.Engine, ctx context.Context, p page) ([]*timer.Info, string, error) {
				out, err := engine.Timers().List(ctx, &timer.ListParams{Filter: timer.Filter{ProcessInstanceID: id}, Limit: p.Limit, After: p.After})
				if err != nil || len(out.Items) > 0 || p.After != "" {
					return fromHandle(func() ([]*timer.Info, string) { return out.Items, out.Next }, err)
				}
				// No timer: an instance no job belongs to is not found;
				// one with jobs but no timer lists none.
				jobs, err := engine.Instances().Jobs(ctx, &instance.JobsParams{ProcessInstanceID: id, Limit: 1})
				if err == nil && len(jobs.Items) == 0 {
					err = instanceNotFound(id)
				}
				return nil, "", err
			}, nil
		}
	},
	columns: timerColumns,
	empty:   "no timers",
}

var timersList = &listSpec[*timer.Info]{
	path:    "timers list",
	summary: "every timer, of every process instance and the timer start events (--definition, --activity, --due-after, --due-before, --start-events, --ended)",
	cursor:  "timer id",
	filters: func(fs *flag.FlagSet) func([]string) (lister[*timer.Info], error) {
		var (
			f                   timer.Filter
			dueAfter, dueBefore string
		)
		fs.StringVar(&f.ProcessDefinitionKey, "definition", "", "only timers of this process definition `KEY` (their waiting occurrence's job)")
		fs.StringVar(&f.JobDefinitionID, "job-definition", "", "only timers of this job definition `ID`")
		fs.StringVar(&f.ActivityID, "activity", "", "only timers of this activity `ID`")
		fs.StringVar(&dueAfter, "due-after", "", "only timers due at or after this RFC 3339 `TIME`")
		fs.StringVar(&dueBefore, "due-before", "", "only timers due before this RFC 3339 `TIME`")
		fs.BoolVar(&f.StartEvents, "start-events", false, "only timer start events (no process instance)")
		fs.BoolVar(&f.Ended, "ended", false, "list the ended timers too")
		return func([]string) (lister[*timer.Info], error) {
			if err := parseTimes(timeFlag{"--due-after", dueAfter, &f.DueFrom}, timeFlag{"--due-before", dueBefore, &f.DueBefore}); err != nil {
				return nil, err
			}
			return func(engine *workflow.Engine, ctx context.Context, p page) ([]*timer.Info, string, error) {
				out, err := engine.Timers().List(ctx, &timer.ListParams{Filter: f, Limit: p.Limit, After: p.After})
				return fromHandle(func() ([]*timer.Info, string) { return out.Items, out.Next }, err)
			}, nil
		}
	},
	columns: timerColumns,
	empty:   "no timers match",
}

// timeFlag is a flag holding an RFC 3339 time: its name, its value as
// given, and where the parsed time goes.
type timeFlag struct {
	name, value string
	into        *time.Time
}

// parseTimes parses the time flags given (a value of ""is left out), or
// returns an error naming the flag and its value.
func parseTimes(flags ...timeFlag) error {
	for _, t := range flags {
		if t.value == "" {
			continue
		}
		at, err := time.Parse(time.RFC3339Nano, t.value)
		if err != nil {
			return fmt.Errorf("%s %q is not an RFC 3339 time (such as 2026-05-01T08:00:00Z)", t.name, t.value)
		}
		*t.into = at
	}
	return nil
}

// incidentColumns are the columns of an incident listing.
var incidentColumns = []column{
	col("id"), colAs("job_id", "JOB"), col("type"), colAs("job_definition_id", "JOB DEFINITION"), colAs("activity_id", "ACTIVITY"),
	colAs("process_instance_id", "INSTANCE"), colAs("created_at", "CREATED"), colAs("resolved_at", "RESOLVED"), {key: "message", width: 80},
}

// incidentFilters are the filter flags of incidents list and incidents
// groups: an incident.Filter.
type incidentFilters struct {
	f         incident.Filter
	olderThan time.Duration
	jobs      listFlag
}

func (f *incidentFilters) register(fs *flag.FlagSet) {
	fs.StringVar(&f.f.ProcessDefinitionKey, "definition", "", "only incidents of this process definition `KEY`")
	fs.StringVar(&f.f.ActivityID, "activity", "", "only incidents of this activity `ID`")
	fs.StringVar(&f.f.JobDefinitionID, "job-definition", "", "only incidents of this job definition `ID`")
	fs.StringVar(&f.f.ErrorContains, "error", "", "only incidents whose error contains this `TEXT` (case-insensitive)")
	fs.DurationVar(&f.olderThan, "older-than", 0, "only incidents opened longer than this `DURATION` ago")
	fs.StringVar(&f.f.TenantID, "tenant", "", "only incidents of this tenant `ID`")
	fs.StringVar(&f.f.InstancePrefix, "instance-prefix", "", "only incidents whose process instance id starts with `PREFIX`")
	fs.Var(&f.jobs, "job", "only incidents of these job `IDS` (comma-separated, or the flag repeated)")
	fs.BoolVar(&f.f.Resolved, "resolved", false, "the resolved incidents too")
}

// filter returns the filter the flags give, or an error naming a bad one.
func (f *incidentFilters) filter() (*incident.Filter, error) {
	if f.olderThan < 0 {
		return nil, fmt.Errorf("--older-than %s is negative", f.olderThan)
	}
	if f.olderThan > 0 {
		f.f.OpenedBefore = time.Now().Add(-f.olderThan)
	}
	ids, err := parseJobIDs(f.jobs)
	if err != nil {
		return nil, err
	}
	f.f.JobIDs = ids
	return &f.f, nil
}

var incidentsList = &listSpec[*incident.Incident]{
	path:    "incidents list",
	summary: "incidents, newest first (--definition, --activity, --job-definition, --job, --error, --older-than, --tenant, --resolved, --oldest)",
	cursor:  "incident id",
	filters: func(fs *flag.FlagSet) func([]string) (lister[*incident.Incident], error) {
		var f incidentFilters
		f.register(fs)
		oldest := fs.Bool("oldest", false, "oldest first (default: newest first)")
		return func([]string) (lister[*incident.Incident], error) {
			filter, err := f.filter()
			if err != nil {
				return nil, err
			}
			return func(engine *workflow.Engine, ctx context.Context, p page) ([]*incident.Incident, string, error) {
				// A job that does not exist is not found, rather than an
				// empty list.
				for _, id := range filter.JobIDs {
					if _, err := engine.JobDetails(ctx, id); err != nil {
						return nil, "", err
					}
				}
				out, err := engine.Incidents().List(ctx, &incident.ListParams{Filter: *filter, Oldest: *oldest, Limit: p.Limit, After: p.After})
				return fromHandle(func() ([]*incident.Incident, string) { return out.Items, out.Next }, err)
			}, nil
		}
	},
	columns: incidentColumns,
	empty:   "no incidents",
}

var incidentGroupsList = &listSpec[*incident.Group]{
	path:    "incidents groups",
	summary: "incidents grouped by the first line of their error, the largest group first (the incidents list filters)",
	cursor:  "error",
	filters: func(fs *flag.FlagSet) func([]string) (lister[*incident.Group], error) {
		var f incidentFilters
		f.register(fs)
		return func([]string) (lister[*incident.Group], error) {
			filter, err := f.filter()
			if err != nil {
				return nil, err
			}
			return whole(func(engine *workflow.Engine, ctx context.Context) ([]*incident.Group, error) {
				return engine.Incidents().Groups(ctx, filter)
			}, func(g *incident.Group) string { return g.Error }), nil
		}
	},
	columns: []column{col("count"), col("first"), col("last"), {key: "error", width: 100}},
	empty:   "no incidents",
}

var definitionsList = &listSpec[*definition.Summary]{
	path:    "definitions list",
	summary: "job definitions with their overriding priority, unfinished jobs, open incidents, whether suspended",
	cursor:  "job definition id",
	filters: noFilters(func(engine *workflow.Engine, ctx context.Context, p page) ([]*definition.Summary, string, error) {
		out, err := engine.Definitions().List(ctx, &definition.ListParams{Limit: p.Limit, After: p.After})
		return fromHandle(func() ([]*definition.Summary, string) { return out.Items, out.Next }, err)
	}),
	columns: []column{
		colAs("id", "JOB DEFINITION"), colAs("process_definition_key", "PROCESS"), colAs("activity_id", "ACTIVITY"), col("kind"),
		col("overriding_priority"), col("unfinished_jobs"), col("open_incidents"),
		{key: "suspended", header: "STATE", text: func(r row) string {
			if r.isSet("suspended") {
				return "suspended"
			}
			return "active"
		}},
	},
	empty: "no job definitions stored (they are stored when a client with declarations starts)",
}

var eventsList = &listSpec[events.Event]{
	path:    "events list",
	summary: "one page of job status events, newest first (what the console's Events page shows; --process-instance)",
	cursor:  "cursor txid:id",
	filters: func(fs *flag.FlagSet) func([]string) (lister[events.Event], error) {
		var instance string
		processInstanceFlag(fs, &instance, "only events of jobs of this process instance `ID`")
		return func([]string) (lister[events.Event], error) {
			return func(engine *workflow.Engine, ctx context.Context, p page) ([]events.Event, string, error) {
				out, err := engine.Events().List(ctx, &events.ListParams{ProcessInstanceID: instance, Limit: p.Limit, After: p.After})
				return fromHandle(func() ([]events.Event, string) { return out.Items, out.Next }, err)
			}, nil
		}
	},
	columns: []column{
		colAs("at", "AT"), col("status"), colAs("job_id", "JOB"), col("kind"), col("attempt"),
		colAs("process_instance_id", "INSTANCE"), {key: "error", width: 60}, col("cursor"),
	},
	empty: "no events",
}

var subscriptionsList = &listSpec[events.Subscription]{
	path:    "events subscriptions",
	summary: "named event subscriptions: position, events behind, the outbox's last event",
	cursor:  "name",
	filters: noFilters(whole(func(engine *workflow.Engine, ctx context.Context) ([]events.Subscription, error) {
		return engine.Events().Subscriptions(ctx)
	}, func(s events.Subscription) string { return s.Name })),
	columns: []column{
		colAs("name", "SUBSCRIPTION"), colAs("cursor", "POSITION"), colAs("behind", "BEHIND (EVENTS)"), colAs("last", "LAST EVENT"),
		colAs("updated_at", "SAVED AT"),
	},
	empty: "no named event subscriptions",
}

var suspendedList = &listSpec[suspension.Suspended]{
	path:    "suspensions list",
	summary: "suspended job definitions, process definitions, process instances and jobs, and since when",
	cursor:  "type:id",
	filters: noFilters(func(engine *workflow.Engine, ctx context.Context, p page) ([]suspension.Suspended, string, error) {
		out, err := engine.Suspensions().List(ctx, &suspension.ListParams{Limit: p.Limit, After: p.After})
		return fromHandle(func() ([]suspension.Suspended, string) { return out.Items, out.Next }, err)
	}),
	columns: []column{col("type"), col("id"), col("since")},
	empty:   "nothing is suspended",
}

var scheduledList = &listSpec[suspension.Scheduled]{
	path:    "suspensions scheduled",
	summary: "suspensions and activations scheduled --at a time, not applied yet (suspensions apply ID: now)",
	cursor:  "schedule id",
	filters: noFilters(func(engine *workflow.Engine, ctx context.Context, p page) ([]suspension.Scheduled, string, error) {
		out, err := engine.Suspensions().ListScheduled(ctx, &suspension.ListScheduledParams{Limit: p.Limit, After: p.After})
		return fromHandle(func() ([]suspension.Scheduled, string) { return out.Items, out.Next }, err)
	}),
	columns: []column{
		col("id"),
		{key: "change", header: "ACTION", text: func(r row) string {
			if c, _ := r["change"].(map[string]any); c != nil && c["suspend"] == true {
				return "suspend"
			}
			return "activate"
		}},
		{key: "change", header: "TARGET", text: func(r row) string {
			c, _ := r["change"].(map[string]any)
			return cell(c["type"]) + " " + cell(c["id"])
		}},
		colAs("due_at", "DUE"), {key: "last_error", width: 60},
	},
	empty: "no scheduled suspensions",
}

var locksList = &listSpec[*exclusive.Lock]{
	path:    "exclusive locks list",
	summary: "held exclusive locks, stale ones marked",
	cursor:  "key",
	filters: noFilters(func(engine *workflow.Engine, ctx context.Context, p page) ([]*exclusive.Lock, string, error) {
		out, err := engine.Exclusive().Locks(ctx, &exclusive.LocksParams{Limit: p.Limit, After: p.After})
		return fromHandle(func() ([]*exclusive.Lock, string) { return out.Items, out.Next }, err)
	}),
	columns: []column{
		col("key"), colAs("job_id", "JOB"), col("attempt"), colAs("client_id", "CLIENT"), col("queue"), col("locked_at"),
		{key: "holder_state", header: "HOLDER NOW", text: func(r row) string {
			if !r.isSet("holder_state") {
				return "gone"
			}
			return fmt.Sprintf("%s (attempt %s)", r.str("holder_state"), r.str("holder_attempt"))
		}},
		{key: "stale", text: func(r row) string {
			switch {
			case r.isSet("stale"):
				return "STALE (free; the next fetch takes it over)"
			case r.isSet("client_gone"):
				return "CLIENT GONE (liveness gives it back within seconds)"
			}
			return ""
		}},
	},
	empty: "no exclusive locks held",
}

// indexesOf lists a page of the on-demand indexes present, of family (""
// every family).
func indexesOf(family string) lister[*index.Index] {
	return func(engine *workflow.Engine, ctx context.Context, p page) ([]*index.Index, string, error) {
		out, err := engine.Indexes().List(ctx, &index.ListParams{Family: family, Enabled: true, Limit: p.Limit, After: p.After})
		return fromHandle(func() ([]*index.Index, string) { return out.Items, out.Next }, err)
	}
}

var headIndexesList = &listSpec[*index.Index]{
	path:    "exclusive indexes list",
	summary: "the on-demand exclusive head-of-key indexes present",
	cursor:  "name",
	filters: noFilters(indexesOf(headIndexFamily)),
	columns: []column{colAs("name", "INDEX"), col("family")},
	empty:   "no on-demand head-of-key index",
}

var indexesList = &listSpec[*index.Index]{
	path:    "indexes list",
	summary: "the on-demand indexes present, with their family: fetch-order, tenant-fairness, exclusive-head-of-key, ...",
	cursor:  "name",
	filters: noFilters(indexesOf("")),
	columns: []column{colAs("name", "INDEX"), col("family")},
	empty:   "no on-demand index",
}

var bulkList = &listSpec[*bulk.Operation]{
	path:    "bulk list",
	summary: "the bulk actions' history (the console's and the application's), newest first",
	cursor:  "operation id",
	filters: noFilters(func(engine *workflow.Engine, ctx context.Context, p page) ([]*bulk.Operation, string, error) {
		out, err := engine.Bulk().List(ctx, &bulk.ListParams{Limit: p.Limit, After: p.After})
		return fromHandle(func() ([]*bulk.Operation, string) { return out.Items, out.Next }, err)
	}),
	columns: []column{
		col("id"), col("action"), col("state"),
		{key: "progress", text: func(r row) string {
			pr, _ := r["progress"].(map[string]any)
			total := ""
			if n := cell(pr["total"]); !strings.HasPrefix(n, "-") {
				total = " of " + n
			}
			return fmt.Sprintf("%s%s done, %s changed, %s failed", cell(pr["done"]), total, cell(pr["changed"]), cell(pr["failed"]))
		}},
		col("runs"), colAs("created_at", "CREATED"), {key: "description", header: "WHAT", width: 60},
	},
	empty: "no bulk actions",
}

var queuesList = &listSpec[*overview.Queue]{
	path:    "queues list",
	summary: "River's queues and the queues with jobs River has no record of: jobs, paused, whether a client works each",
	cursor:  "queue name",
	filters: noFilters(func(engine *workflow.Engine, ctx context.Context, p page) ([]*overview.Queue, string, error) {
		out, err := engine.Queues().List(ctx, &queue.ListParams{Limit: p.Limit, After: p.After})
		return fromHandle(func() ([]*overview.Queue, string) { return out.Items, out.Next }, err)
	}),
	columns: []column{
		colAs("name", "QUEUE"),
		{key: "worked", text: func(r row) string {
			if r.isSet("worked") {
				return "yes"
			}
			return "NO CLIENT WORKS IT"
		}},
		colAs("paused_at", "PAUSED"), col("available"), col("running"), col("waiting"),
		{key: "reported_at", header: "LAST REPORT", text: func(r row) string {
			if !r.isSet("reported_at") {
				return "never"
			}
			return r.str("reported_at")
		}},
	},
	empty: "no queues",
}

var sessionsList = &listSpec[*liveness.Session]{
	path:    "sessions list",
	summary: "the liveness sessions of clients: alive, or dead since when (until taken over)",
	cursor:  "session id",
	filters: noFilters(func(engine *workflow.Engine, ctx context.Context, p page) ([]*liveness.Session, string, error) {
		out, err := engine.Sessions().List(ctx, &session.ListParams{Limit: p.Limit, After: p.After})
		return fromHandle(func() ([]*liveness.Session, string) { return out.Items, out.Next }, err)
	}),
	columns: []column{
		colAs("id", "SESSION"), colAs("client_id", "CLIENT"), col("pid"), colAs("started_at", "STARTED"), col("alive"),
		col("dead_since"),
	},
	empty: "no client sessions",
}

var deploymentsList = &listSpec[*deployment.Deployment]{
	path:    "deployments list",
	summary: "deployments, newest first, with their resources and process definitions",
	cursor:  "deployment id",
	filters: noFilters(func(engine *workflow.Engine, ctx context.Context, p page) ([]*deployment.Deployment, string, error) {
		out, err := engine.Deployments().List(ctx, deployment.ListParams{After: p.After, Limit: p.size()})
		if err != nil {
			return nil, "", err
		}
		return out.Deployments, out.Cursor, nil
	}),
	columns: []column{
		colAs("id", "DEPLOYMENT"), col("name"), colAs("tenant_id", "TENANT"), colAs("created_at", "CREATED"),
		{key: "resources", text: func(r row) string { return namesOf(r["resources"], "name") }},
		{key: "process_definitions", text: func(r row) string { return namesOf(r["process_definitions"], "id") }},
	},
	empty: "no deployments",
}

// namesOf returns the values of key of the objects of list, a JSON array,
// comma-separated ("-" for none).
func namesOf(list any, key string) string {
	items, _ := list.([]any)
	var names []string
	for _, item := range items {
		if m, ok := item.(map[string]any); ok {
			names = append(names, cell(m[key]))
		}
	}
	if len(names) == 0 {
		return "-"
	}
	return strings.Join(names, ",")
}

// runIncidentsListVerb is incidents list; --group-by error, the previous
// release's form of incidents groups, runs that.
func runIncidentsListVerb(ctx context.Context, args []string, stdout io.Writer) error {
	by, found, rest := takeFlag(args, false, "group-by")
	if !found {
		return incidentsList.run(ctx, args, stdout)
	}
	if by != "error" {
		return fmt.Errorf("--group-by %q: only error is known (incidents groups)", by)
	}
	return incidentGroupsList.run(ctx, rest, stdout)
}
