package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/riverqueue/river"

	"github.com/riverbpmn/riverbpmn/priority"
	"github.com/riverbpmn/riverbpmn/workflow"
)

// Args are the args of every benchmark job, stock and riverbpmn alike: the
// two sides insert the same rows apart from riverbpmn's job context.
type Args struct {
	// Seq numbers the jobs of one run from 0.
	Seq int `json:"seq"`
}

// Kind is the kind of the benchmark jobs.
func (Args) Kind() string { return "riverbpmn_bench" }

// The shape of the workload's job contexts. The priority spread covers
// [PriorityMin, PriorityMax] with a pseudo-random order of insertion, every
// TimerEvery-th job is a timer, and jobs are spread round-robin over
// Deployments deployments.
const (
	PriorityMin          = -100
	PriorityMax          = 100
	TimerEvery           = 10
	Deployments          = 4
	ProcessDefinitionKey = "bench_process"
	ActivityID           = "bench_task"

	// prioritySpreadFactor is coprime to the size of the priority range, so
	// that consecutive jobs get scattered priorities.
	prioritySpreadFactor = 7919
)

// Workload describes the job contexts that riverbpmn jobs carry. The stock
// side inserts the same args without a job context.
type Workload struct {
	// Instances is the number of process instances the jobs are spread over,
	// round-robin; zero means the jobs belong to no process instance (like
	// timer start events).
	Instances int

	// SmallTenantsFrom, when positive, gives the jobs tenants (the fairness
	// modes): jobs 0 .. SmallTenantsFrom-1 belong to tenant "big" (queued
	// first, so River's order puts them all ahead), and the jobs from
	// SmallTenantsFrom on to SmallTenants tenants "small-NN", SmallTenantJobs
	// each.
	SmallTenantsFrom int
	SmallTenants     int
	SmallTenantJobs  int

	// PriorityLevels, when positive, is the number of distinct priorities
	// the jobs get, spread evenly over [PriorityMin, PriorityMax]; 1 gives
	// every job priority 0, Camunda's default, so that all waiting jobs of
	// an instance share one priority. Zero is every priority of the range,
	// scattered (a process instance's jobs then all differ).
	PriorityLevels int

	// OneStringContext stores each job's context as one JSON string, the
	// values of its stored (labelled) form joined by tabs in the order of
	// their labels, instead of the object (diagnostic,
	// stock-metadata-string): River's GIN index on metadata then takes two
	// entries per row version instead of one per label and one per value,
	// which is what the job context costs stock River beyond its bytes.
	OneStringContext bool
}

// Metadata is the metadata job i is inserted with: its job context, as the
// application gives it (or as one string, see OneStringContext).
func (w Workload) Metadata(i int) ([]byte, error) {
	metadata := w.JobContext(i).InsertOpts().Metadata
	if !w.OneStringContext {
		return metadata, nil
	}
	var stored struct {
		Context map[string]any `json:"bpmn"`
	}
	if err := json.Unmarshal(metadata, &stored); err != nil {
		return nil, err
	}
	labels := slices.Sorted(maps.Keys(stored.Context))
	parts := make([]string, len(labels))
	for k, label := range labels {
		if v := stored.Context[label]; v != nil {
			parts[k] = fmt.Sprint(v)
		}
	}
	return json.Marshal(map[string]string{workflow.MetadataKey: strings.Join(parts, "\t")})
}

// Tenant is the tenant of job i ("" for none).
func (w Workload) Tenant(i int) string {
	switch {
	case w.SmallTenantsFrom <= 0:
		return ""
	case i < w.SmallTenantsFrom:
		return "big"
	default:
		return fmt.Sprintf("small-%02d", (i-w.SmallTenantsFrom)/max(w.SmallTenantJobs, 1))
	}
}

// Priority is the priority of job i, in [PriorityMin, PriorityMax].
func (w Workload) Priority(i int) int64 {
	levels, step, base := w.priorityLevels()
	return (int64(i)*prioritySpreadFactor)%levels*step + base
}

// priorityLevels gives Priority's form, (i * prioritySpreadFactor) % levels
// * step + base, shared with metadataSQL.
func (w Workload) priorityLevels() (levels, step, base int64) {
	switch {
	case w.PriorityLevels <= 0 || w.PriorityLevels > PriorityMax-PriorityMin+1:
		return PriorityMax - PriorityMin + 1, 1, PriorityMin
	case w.PriorityLevels == 1:
		return 1, 0, 0
	default:
		return int64(w.PriorityLevels), (PriorityMax - PriorityMin) / int64(w.PriorityLevels-1), PriorityMin
	}
}

// PriorityRange is the range covering every priority of the workload.
func (w Workload) PriorityRange() priority.Range {
	return priority.Range{Min: PriorityMin, Max: PriorityMax}
}

// DeploymentIDs are the deployments of the workload's jobs.
func (w Workload) DeploymentIDs() []string {
	ids := make([]string, Deployments)
	for d := range ids {
		ids[d] = deploymentID(d)
	}
	return ids
}

func deploymentID(d int) string { return "bench-dep-" + strconv.Itoa(d) }

// JobContext is the job context of job i, as the inserting application
// gives it; the middleware completes it (root instance, exclusive flag).
func (w Workload) JobContext(i int) workflow.JobContext {
	jobType := workflow.JobTypeAsync
	if i%TimerEvery == 0 {
		jobType = workflow.JobTypeTimer
	}
	p := w.Priority(i)
	exclusive := true // what the middleware resolves anyway: stock-metadata jobs carry the same
	jc := workflow.JobContext{
		ProcessDefinitionKey: ProcessDefinitionKey,
		ActivityID:           ActivityID,
		DeploymentID:         deploymentID(i % Deployments),
		JobType:              jobType,
		Priority:             &p,
		Exclusive:            &exclusive,
	}
	if w.Instances > 0 {
		jc.ProcessInstanceID = "bench-pi-" + strconv.Itoa(i%w.Instances)
	}
	jc.TenantID = w.Tenant(i)
	return jc
}

// metadataSQL is a SQL expression for the metadata the middleware stores for
// JobContext(i), where i is the SQL expression iExpr (a bigint): the fetch
// latency backlog is built in SQL, a million rows at a time, and must look
// exactly like inserted jobs (TestMetadataSQLMatchesMiddleware).
func (w Workload) metadataSQL(iExpr string) string {
	instance := "NULL::text"
	if w.Instances > 0 {
		instance = fmt.Sprintf(`'bench-pi-' || (%[1]s %% %[2]d)`, iExpr, w.Instances)
	}
	// The labelled form (workflow.JobContext): instance, process definition,
	// activity, priority (left out when 0), exclusive (true, the default of
	// a job of an instance, left out then), deployment, job type.
	levels, step, base := w.priorityLevels()
	return fmt.Sprintf(`jsonb_build_object('bpmn', jsonb_strip_nulls(jsonb_build_object(
		'instance', %[2]s, 'process', %[3]s, 'activity', %[4]s,
		'priority', nullif((%[1]s * %[9]d) %% %[10]d * %[12]d + %[11]d, 0),
		'exclusive', CASE WHEN %[2]s IS NULL THEN true END,
		'deployment', 'bench-dep-' || (%[1]s %% %[5]d),
		'type', CASE WHEN %[1]s %% %[6]d = 0 THEN %[7]s ELSE %[8]s END)))`,
		iExpr, instance, quoteLiteral(ProcessDefinitionKey), quoteLiteral(ActivityID),
		Deployments, TimerEvery, quoteLiteral(workflow.JobTypeTimer), quoteLiteral(workflow.JobTypeAsync),
		prioritySpreadFactor, levels, base, step)
}

// quoteLiteral quotes a constant string as a SQL literal (the constants
// above hold no quote; this keeps it so).
func quoteLiteral(s string) string {
	for _, r := range s {
		if r == '\'' || r == '\\' {
			panic("bench: constant with a quote: " + s)
		}
	}
	return "'" + s + "'"
}

// worker is the benchmark's work function: nothing, or a sleep of work.
type worker struct {
	river.WorkerDefaults[Args]

	work time.Duration
}

// Work does the configured amount of work.
func (w *worker) Work(ctx context.Context, _ *river.Job[Args]) error {
	if w.work <= 0 {
		return nil
	}
	timer := time.NewTimer(w.work)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
