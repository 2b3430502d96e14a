// Command quickstart is a guided tour of riverbpmn on a River client. In a few
// seconds it shows, each printed line saying what it demonstrates:
//
//  1. a retry time cycle (R3/PT1S): a failing job is retried 1 s apart, three
//     executions in all, and the waits River really observes;
//  2. an incident: the job runs out of retries, River discards it, and a
//     failedJob incident opens; SetJobRetries revives the job and resolves it;
//  3. exclusive jobs: the jobs of one process instance run one at a time,
//     while two instances run side by side;
//  4. a priority override: a job definition's priority is raised at run time
//     (with a cascade to the jobs already waiting), and a client that acquires
//     by priority runs them first.
//
// Run it with `make example`, or:
//
//	DATABASE_URL=postgres://localhost:5432/test go run ./examples/quickstart
//
// It uses (and first empties) the schema "riverbpmn_quickstart".
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/riverbpmn/riverbpmn/exclusive"
	"github.com/riverbpmn/riverbpmn/priority"
	"github.com/riverbpmn/riverbpmn/workflow"
)

const schema = "riverbpmn_quickstart"

// pollInterval is the clients' FetchPollInterval: how often an idle client
// looks for jobs that became due (River's default is 1 s).
const pollInterval = 100 * time.Millisecond

// The process: order_fulfilment, whose activities run as River jobs. Each
// job names its process instance and activity; riverbpmn finds the job
// definition from the job's kind.

// order is what every job of the process carries: its order, which is also
// its process instance "order-<id>".
type order struct {
	OrderID string `json:"order_id"`
}

func (o order) context(activity string) workflow.JobContext {
	return workflow.JobContext{
		ProcessInstanceID:    "order-" + o.OrderID,
		ProcessDefinitionKey: "order_fulfilment",
		ActivityID:           activity,
	}
}

// ChargeCardArgs is the async continuation of the "charge" service task.
type ChargeCardArgs struct{ order }

// Kind is the River job kind.
func (ChargeCardArgs) Kind() string { return "charge_card" }

// JobContext implements workflow.JobArgsWithJobContext.
func (a ChargeCardArgs) JobContext() workflow.JobContext { return a.context("charge") }

// PackParcelArgs is the async continuation of the "pack" task; Step numbers
// the parcels of one order.
type PackParcelArgs struct {
	order
	Step int `json:"step"`
}

// Kind is the River job kind.
func (PackParcelArgs) Kind() string { return "pack_parcel" }

// JobContext implements workflow.JobArgsWithJobContext.
func (a PackParcelArgs) JobContext() workflow.JobContext { return a.context("pack") }

// SendMailArgs is the async continuation of the "invoice" and "newsletter"
// send tasks (one kind, two activities: the activity tells them apart).
type SendMailArgs struct {
	order
	Activity string `json:"activity"`
}

// Kind is the River job kind.
func (SendMailArgs) Kind() string { return "send_mail" }

// JobContext implements workflow.JobArgsWithJobContext.
func (a SendMailArgs) JobContext() workflow.JobContext { return a.context(a.Activity) }

func main() {
	if err := run(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

// tour holds what the scenes share.
type tour struct {
	dbPool *pgxpool.Pool
	config *workflow.Config
	engine *workflow.Engine
	client *river.Client[pgx.Tx]
	events <-chan *river.Event
	start  time.Time

	cardFixed atomic.Bool
	mu        sync.Mutex
	attempts  []time.Time // charge_card attempts
	packRuns  []packRun   // pack_parcel runs
	mailOrder []string    // send_mail activities in the order they ran
}

type packRun struct {
	instance   string
	start, end time.Time
}

func say(scene, format string, args ...any) {
	fmt.Printf("%-11s %s\n", "["+scene+"]", fmt.Sprintf(format, args...))
}

func run(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()

	databaseURL := os.Getenv("DATABASE_URL")
	if databaseURL == "" {
		return errors.New("set DATABASE_URL (make example does it for you)")
	}
	dbPool, err := pgxpool.New(ctx, databaseURL)
	if err != nil {
		return err
	}
	defer dbPool.Close()

	ident := pgx.Identifier{schema}.Sanitize()
	if _, err := dbPool.Exec(ctx, "DROP SCHEMA IF EXISTS "+ident+" CASCADE; CREATE SCHEMA "+ident); err != nil {
		return err
	}
	if _, err := workflow.MigrateUp(ctx, dbPool, &workflow.MigrateOpts{Schema: schema}); err != nil {
		return err
	}

	config := &workflow.Config{
		Schema:         schema,
		ExclusiveScope: exclusive.ProcessInstance,
		ProcessDefinitions: []workflow.ProcessDefinition{
			{Key: "order_fulfilment", Priority: priority.Constant(1)},
		},
		JobDefinitions: []workflow.JobDefinition{
			{ID: "charge-async", ProcessDefinitionKey: "order_fulfilment", ActivityID: "charge", Kind: "charge_card", RetryCycle: "R3/PT1S"},
			{ID: "pack-async", ProcessDefinitionKey: "order_fulfilment", ActivityID: "pack", Kind: "pack_parcel"},
			{ID: "invoice-async", ProcessDefinitionKey: "order_fulfilment", ActivityID: "invoice", Kind: "send_mail"},
			{ID: "newsletter-async", ProcessDefinitionKey: "order_fulfilment", ActivityID: "newsletter", Kind: "send_mail", Priority: priority.Constant(5)},
		},
	}
	engine, err := workflow.NewEngine(dbPool, config)
	if err != nil {
		return err
	}
	t := &tour{dbPool: dbPool, config: config, engine: engine, start: time.Now()}

	workers := river.NewWorkers()
	river.AddWorker(workers, river.WorkFunc(t.chargeCard))
	river.AddWorker(workers, river.WorkFunc(t.packParcel))
	river.AddWorker(workers, river.WorkFunc(t.sendMail))

	// One call wires the client to the engine: driver, middleware, retry
	// policy, schema (and the logger, when none is given).
	t.client, err = workflow.NewClient(engine, &river.Config{
		FetchPollInterval: pollInterval,
		Logger:            slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})),
		Queues:            map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 10}},
		Workers:           workers,
	})
	if err != nil {
		return err
	}
	events, unsubscribe := t.client.Subscribe(river.EventKindJobCompleted, river.EventKindJobFailed)
	defer unsubscribe()
	t.events = events
	if err := t.client.Start(ctx); err != nil {
		return err
	}
	defer func() { _ = t.client.Stop(context.Background()) }()
	say("setup", "schema %s migrated; one River client wired with workflow.NewClient, polling every %s", schema, pollInterval)

	for _, scene := range []func(context.Context) error{t.retryCycle, t.incident, t.exclusiveJobs, t.priorityOverride} {
		if err := scene(ctx); err != nil {
			return err
		}
	}
	say("done", "in %.1f s; inspect the schema with `riverbpmn incidents list --schema %s` (or jobs list, instances list, definitions list, exclusive locks list)", time.Since(t.start).Seconds(), schema)
	return nil
}

// ---- scene 1: a retry time cycle ----

func (t *tour) chargeCard(ctx context.Context, job *river.Job[ChargeCardArgs]) error {
	t.mu.Lock()
	t.attempts = append(t.attempts, time.Now())
	t.mu.Unlock()
	if !t.cardFixed.Load() {
		return errors.New("card declined by the payment provider")
	}
	return nil
}

// waitFor reads events until one of job jobID satisfies done.
func (t *tour) waitFor(ctx context.Context, jobID int64, done func(*river.Event) bool) (*river.Event, error) {
	for {
		select {
		case event := <-t.events:
			if event.Job.ID == jobID && done(event) {
				return event, nil
			}
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for job %d: %w", jobID, ctx.Err())
		}
	}
}

// waitForCompleted reads events until every inserted job has completed, in
// whatever order they complete (the two instances' jobs run side by side).
func (t *tour) waitForCompleted(ctx context.Context, inserted []*rivertype.JobInsertResult) error {
	waiting := make(map[int64]bool, len(inserted))
	for _, res := range inserted {
		waiting[res.Job.ID] = true
	}
	for len(waiting) > 0 {
		select {
		case event := <-t.events:
			if event.Kind == river.EventKindJobCompleted {
				delete(waiting, event.Job.ID)
			}
		case <-ctx.Done():
			return fmt.Errorf("waiting for jobs %v: %w", slices.Sorted(maps.Keys(waiting)), ctx.Err())
		}
	}
	return nil
}

var chargeJobID int64

func (t *tour) retryCycle(ctx context.Context) error {
	res, err := t.client.Insert(ctx, ChargeCardArgs{order{"1"}}, nil)
	if err != nil {
		return err
	}
	chargeJobID = res.Job.ID
	jc, err := workflow.JobContextOf(res.Job)
	if err != nil {
		return err
	}
	say("retry", "inserted charge_card job %d; its kind found job definition %q, whose retry cycle %s allows %d executions",
		res.Job.ID, jc.JobDefinitionID, jc.RetryCycle, res.Job.MaxAttempts)
	if _, err := t.waitFor(ctx, chargeJobID, func(e *river.Event) bool { return e.Job.State == rivertype.JobStateDiscarded }); err != nil {
		return err
	}
	t.mu.Lock()
	attempts := slices.Clone(t.attempts)
	t.mu.Unlock()
	for i, at := range attempts {
		if i == 0 {
			say("retry", "execution 1 failed (card declined)")
			continue
		}
		gap := at.Sub(attempts[i-1])
		say("retry", "execution %d started %.2f s after execution %d: the cycle's 1 s wait, plus up to the %s poll before a client sees the job is due",
			i+1, gap.Seconds(), i, pollInterval)
	}
	return nil
}

// ---- scene 2: an incident, and SetJobRetries ----

func (t *tour) incident(ctx context.Context) error {
	incidents, err := t.engine.OpenIncidents(ctx)
	if err != nil {
		return err
	}
	if len(incidents) != 1 {
		return fmt.Errorf("expected one open incident, got %d", len(incidents))
	}
	i := incidents[0]
	say("incident", "no retries left: River discarded job %d and incident %d (%s, activity %s, %s) opened in the same transaction: %q",
		i.JobID, i.ID, i.Type, i.ActivityID, i.ProcessInstanceID, i.Message)

	t.cardFixed.Store(true)
	if err := t.engine.SetJobRetries(ctx, chargeJobID, 1); err != nil {
		return err
	}
	say("incident", "the card is fixed; SetJobRetries(job %d, 1) gives it one more execution and resolves the incident", chargeJobID)
	event, err := t.waitFor(ctx, chargeJobID, func(e *river.Event) bool { return e.Kind == river.EventKindJobCompleted })
	if err != nil {
		return err
	}
	open, err := t.engine.OpenIncidents(ctx)
	if err != nil {
		return err
	}
	say("incident", "job %d completed on execution %d; open incidents now: %d", chargeJobID, event.Job.Attempt, len(open))
	return nil
}

// ---- scene 3: exclusive jobs ----

func (t *tour) packParcel(ctx context.Context, job *river.Job[PackParcelArgs]) error {
	start := time.Now()
	select {
	case <-time.After(200 * time.Millisecond): // packing takes a while
	case <-ctx.Done():
		return ctx.Err()
	}
	t.mu.Lock()
	t.packRuns = append(t.packRuns, packRun{"order-" + job.Args.OrderID, start, time.Now()})
	t.mu.Unlock()
	return nil
}

func (t *tour) exclusiveJobs(ctx context.Context) error {
	var params []river.InsertManyParams
	for step := 1; step <= 3; step++ {
		for _, id := range []string{"2", "3"} {
			params = append(params, river.InsertManyParams{Args: PackParcelArgs{order{id}, step}})
		}
	}
	inserted, err := t.client.InsertMany(ctx, params)
	if err != nil {
		return err
	}
	say("exclusive", "inserted 3 pack_parcel jobs (200 ms each) for each of order-2 and order-3; the client has 10 workers")
	if err := t.waitForCompleted(ctx, inserted); err != nil {
		return err
	}
	t.mu.Lock()
	runs := slices.Clone(t.packRuns)
	t.mu.Unlock()
	slices.SortFunc(runs, func(a, b packRun) int { return a.start.Compare(b.start) })
	for _, instance := range []string{"order-2", "order-3"} {
		var spans []string
		var prev *packRun
		overlaps := 0
		for i := range runs {
			r := &runs[i]
			if r.instance != instance {
				continue
			}
			if prev != nil && r.start.Before(prev.end) {
				overlaps++
			}
			spans = append(spans, fmt.Sprintf("%.2f-%.2f s", r.start.Sub(t.start).Seconds(), r.end.Sub(t.start).Seconds()))
			prev = r
		}
		say("exclusive", "%s ran one job at a time (%d overlaps): %s", instance, overlaps, strings.Join(spans, ", "))
	}
	across := 0
	for _, a := range runs {
		for _, b := range runs {
			if a.instance == "order-2" && b.instance == "order-3" && a.start.Before(b.end) && b.start.Before(a.end) {
				across++
			}
		}
	}
	say("exclusive", "while order-2 and order-3 ran side by side (%d overlapping pairs): the key is the process instance", across)
	return nil
}

// ---- scene 4: a priority override ----

func (t *tour) sendMail(ctx context.Context, job *river.Job[SendMailArgs]) error {
	t.mu.Lock()
	t.mailOrder = append(t.mailOrder, job.Args.Activity)
	t.mu.Unlock()
	return nil
}

func (t *tour) priorityOverride(ctx context.Context) error {
	// The mails wait in queue "mail", which no client works yet.
	var params []river.InsertManyParams
	for i, activity := range []string{"invoice", "newsletter", "invoice", "newsletter", "invoice", "newsletter"} {
		params = append(params, river.InsertManyParams{Args: SendMailArgs{order{fmt.Sprint(10 + i)}, activity}, InsertOpts: &river.InsertOpts{Queue: "mail"}})
	}
	inserted, err := t.client.InsertMany(ctx, params)
	if err != nil {
		return err
	}
	say("priority", "inserted 3 invoice mails (priority 1, from the process) and 3 newsletters (priority 5, from their activity) into queue \"mail\"")

	if err := t.engine.SetOverridingJobPriority(ctx, "invoice-async", 50, true); err != nil {
		return err
	}
	details, err := t.engine.JobDetails(ctx, inserted[0].Job.ID)
	if err != nil {
		return err
	}
	say("priority", "SetOverridingJobPriority(\"invoice-async\", 50, cascade): waiting invoice job %d now has priority %d; new invoices get 50 too",
		details.Job.ID, *details.Context.Priority)

	// A second client acquires by priority. Acquisition options are per
	// driver; exclusive enforcement is per engine, so it has its own engine
	// on the same declarations (overrides live in the database).
	byPriority, err := workflow.NewEngine(t.dbPool, &workflow.Config{
		Schema: schema, ProcessDefinitions: t.config.ProcessDefinitions, JobDefinitions: t.config.JobDefinitions,
	})
	if err != nil {
		return err
	}
	driver, err := byPriority.NewDriver(workflow.Acquisition{ByPriority: true})
	if err != nil {
		return err
	}
	workers := river.NewWorkers()
	river.AddWorker(workers, river.WorkFunc(t.sendMail))
	config, err := byPriority.ClientConfig(&river.Config{
		FetchPollInterval: pollInterval,
		Logger:            slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})),
		Queues:            map[string]river.QueueConfig{"mail": {MaxWorkers: 1}},
		Workers:           workers,
	})
	if err != nil {
		return err
	}
	mailClient, err := river.NewClient(driver, config)
	if err != nil {
		return err
	}
	done, unsubscribe := mailClient.Subscribe(river.EventKindJobCompleted)
	defer unsubscribe()
	if err := mailClient.Start(ctx); err != nil {
		return err
	}
	defer func() { _ = mailClient.Stop(context.Background()) }()
	for range inserted {
		select {
		case <-done:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	t.mu.Lock()
	order := slices.Clone(t.mailOrder)
	t.mu.Unlock()
	say("priority", "a client acquiring by priority (one worker) sent: %s: the overridden invoices (50) before the newsletters (5), which would have gone first without the override", strings.Join(order, ", "))
	return nil
}
