package telemetry_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdbtest"
	"github.com/riverqueue/river/rivertype"
	"github.com/riverqueue/rivercontrib/otelriver"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/riverbpmn/riverbpmn/events"
	"github.com/riverbpmn/riverbpmn/exclusive"
	"github.com/riverbpmn/riverbpmn/internal/jobctx"
	"github.com/riverbpmn/riverbpmn/internal/metrictest"
	"github.com/riverbpmn/riverbpmn/lifecycle"
	"github.com/riverbpmn/riverbpmn/liveness"
	"github.com/riverbpmn/riverbpmn/retrypolicy"
	"github.com/riverbpmn/riverbpmn/riverbpmntest"
	"github.com/riverbpmn/riverbpmn/telemetry"
	"github.com/riverbpmn/riverbpmn/workflow"
)

// telArgs is the instruments tests' job: Mode decides its outcome.
type telArgs struct {
	Instance    string `json:"instance"`
	Definition  string `json:"definition,omitempty"`
	Tenant      string `json:"tenant,omitempty"`
	Mode        string `json:"mode"` // "ok", "fail", "conflict" (the run without a recorded error), "timer"
	SleepMillis int    `json:"sleep_millis,omitempty"`
	RetryCycle  string `json:"retry_cycle,omitempty"`
}

func (telArgs) Kind() string { return "telemetry_work" }

func (a telArgs) JobContext() workflow.JobContext {
	def := a.Definition
	if def == "" {
		def = "telemetry"
	}
	jc := workflow.JobContext{ProcessInstanceID: a.Instance, ProcessDefinitionKey: def, ActivityID: "task", TenantID: a.Tenant, RetryCycle: a.RetryCycle}
	if a.Mode == "timer" {
		jc.JobType = workflow.JobTypeTimer
	}
	return jc
}

type telWorker struct {
	river.WorkerDefaults[telArgs]
}

func (telWorker) Work(ctx context.Context, job *river.Job[telArgs]) error {
	if job.Args.SleepMillis > 0 {
		select {
		case <-time.After(time.Duration(job.Args.SleepMillis) * time.Millisecond):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	switch job.Args.Mode {
	case "fail":
		return errors.New("telemetry test: failing on purpose")
	case "conflict":
		if len(job.Errors) == 0 { // a conflict gives its execution back: attempt stays 1
			return fmt.Errorf("telemetry test: %w", retrypolicy.ErrConflict)
		}
	}
	return nil
}

// TestInstruments measures an engine's jobs through its instruments, read
// back through the SDK's in-memory reader.
func TestInstruments(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	// Scenarios runs the scenarios that move every instrument a single
	// process can (a retry, an incident and its resolution, a conflict, a
	// held key, a timer, fair fetching across tenants, an expiry, a held and
	// a suspended definition, an event subscription behind, a fenced
	// liveness session) and reads each back; the span of each job's work
	// carries its BPMN identity. workflow's TestTelemetryKilledClient covers
	// the instruments of a SIGKILLed client.
	t.Run("Scenarios", func(t *testing.T) {
		t.Parallel()
		tr := metrictest.NewReader(t)
		spans := tracetest.NewSpanRecorder()
		tracer := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
		t.Cleanup(func() { _ = tracer.Shutdown(context.Background()) })

		schema := riverdbtest.TestSchema(ctx, t, riverbpmntest.Driver(t), nil)
		bundle := riverbpmntest.New(ctx, t, schema, &riverbpmntest.Opts{Config: &workflow.Config{
			Telemetry: telemetry.Config{MeterProvider: tr.Provider, TenantAttribute: true, FiguresInterval: time.Second},
			Events:    &workflow.EventsConfig{},
			// Declared: an engine with declarations refuses jobs of others, and a
			// declared definition can be suspended.
			ProcessDefinitions: []workflow.ProcessDefinition{{Key: "telemetry"}, {Key: "telemetry-suspended"}},
			// A slow ping on a loaded machine fences no one: the test's only
			// fence is the one it makes by cutting the session's connection.
			Liveness: liveness.Config{FenceAfter: 20 * time.Second, TakeoverAfter: 25 * time.Second},
		}})
		engine := bundle.Engine
		driver, err := engine.NewDriver(workflow.Acquisition{FairByTenant: true})
		require.NoError(t, err)
		workers := river.NewWorkers()
		river.AddWorker(workers, telWorker{})
		client, err := driver.NewClient(&river.Config{
			Queues: map[string]river.QueueConfig{
				river.QueueDefault: {MaxWorkers: 5},
				"paused":           {MaxWorkers: 1},
			},
			Workers:           workers,
			FetchCooldown:     5 * time.Millisecond,
			FetchPollInterval: 20 * time.Millisecond,
			Middleware:        []rivertype.Middleware{otelriver.NewMiddleware(&otelriver.MiddlewareConfig{TracerProvider: tracer, MeterProvider: tr.Provider})},
		})
		require.NoError(t, err)
		paused, cancelPaused := client.Subscribe(river.EventKindQueuePaused)
		defer cancelPaused()
		require.NoError(t, client.Start(ctx))
		t.Cleanup(func() {
			stopCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_ = client.Stop(stopCtx)
		})
		// Pause "paused", and wait until its producer has: nothing inserted
		// into it runs.
		require.NoError(t, client.QueuePause(ctx, "paused", nil))
		select {
		case <-paused:
		case <-time.After(30 * time.Second):
			t.Fatal("queue paused not paused after 30 s")
		}

		insert := func(args telArgs, opts *river.InsertOpts) *rivertype.JobRow {
			t.Helper()
			res, err := client.Insert(ctx, args, opts)
			require.NoError(t, err)
			return res.Job
		}
		failing := insert(telArgs{Instance: "pi-fail", Mode: "fail", RetryCycle: "R2/PT1S"}, nil) // a retry, then an incident
		insert(telArgs{Instance: "pi-conflict", Mode: "conflict", RetryCycle: "R1/PT1S"}, nil)    // a conflict
		// One key, two jobs due at once (one statement): the first holds the
		// key through 500 ms of work, the second waits for it.
		_, err = client.InsertMany(ctx, []river.InsertManyParams{
			{Args: telArgs{Instance: "pi-key", Mode: "ok", SleepMillis: 500, Tenant: "t1"}},
			{Args: telArgs{Instance: "pi-key", Mode: "ok", Tenant: "t1"}},
		})
		require.NoError(t, err)
		insert(telArgs{Instance: "pi-timer", Mode: "timer"}, &river.InsertOpts{ScheduledAt: time.Now().Add(200 * time.Millisecond)})
		for i := range 6 {
			insert(telArgs{Instance: fmt.Sprintf("pi-t2-%d", i), Mode: "ok", Tenant: "t2"}, nil)
		}
		// Waits in a paused queue: the oldest available job of "paused".
		insert(telArgs{Instance: "pi-paused", Mode: "ok"}, &river.InsertOpts{Queue: "paused"})
		// Expires in the paused queue, before it can run: the leader discards it.
		expiresAt := time.Now().Add(300 * time.Millisecond)
		expiring, err := lifecycle.Opts{ExpiresAt: &expiresAt}.Apply(&river.InsertOpts{Queue: "paused"})
		require.NoError(t, err)
		insert(telArgs{Instance: "pi-expiring", Mode: "ok"}, expiring)
		// Held: a job of a suspended process definition.
		insert(telArgs{Instance: "pi-suspended", Definition: "telemetry-suspended", Mode: "ok"}, &river.InsertOpts{Queue: "paused"})
		_, err = engine.SuspendProcessDefinition(ctx, "telemetry-suspended", &workflow.SuspendOpts{IncludeJobs: true})
		require.NoError(t, err)

		// The failing job ends discarded, with an incident.
		require.Eventually(t, func() bool {
			job, err := client.JobGet(ctx, failing.ID)
			return err == nil && job.State == rivertype.JobStateDiscarded
		}, 30*time.Second, 20*time.Millisecond)

		// An event subscription created at the outbox's start, that handles
		// nothing (its handler refuses the first batch): it stays behind every event.
		subCtx, subCancel := context.WithTimeout(ctx, 5*time.Second)
		errStop := errors.New("stop")
		err = events.Subscribe(subCtx, bundle.DBPool, &events.SubscribeConfig{Schema: schema, Name: "telemetry-behind", From: &events.Cursor{}}, func(context.Context, []events.Event) error { return errStop })
		subCancel()
		require.True(t, err == nil || errors.Is(err, errStop) || errors.Is(err, context.DeadlineExceeded), "subscribe: %v", err)

		var metrics map[string]metricdata.Metrics
		require.Eventually(t, func() bool {
			metrics = tr.Collect(t)
			_, held := metrictest.Histogram(metrics[telemetry.NameKeyHeld])
			timers, _ := metrictest.Histogram(metrics[telemetry.NameTimerLateness])
			return held >= 0.5 && timers >= 1 &&
				metrictest.Sum(metrics[telemetry.NameJobsExpired]) >= 1 &&
				metrictest.Sum(metrics[telemetry.NameIncidentsOpen]) >= 2 && // the failing job's and the expired job's
				metrictest.Sum(metrics[telemetry.NameConflicts]) >= 1 &&
				metrictest.Sum(metrics[telemetry.NameSubscriptionBehind]) >= 1
		}, 60*time.Second, 100*time.Millisecond, "instruments so far: %v", metrictest.Names(metrics))

		// Acquisition: fetches by order, jobs taken by tenant (fair fetching).
		order := telemetry.AttrOrder.String(telemetry.OrderFair)
		require.Positive(t, metrictest.Sum(metrics[telemetry.NameFetches], order, telemetry.AttrQueue.String(river.QueueDefault)))
		require.Equal(t, int64(2), metrictest.Sum(metrics[telemetry.NameJobsTaken], order, telemetry.AttrTenant.String("t1"),
			telemetry.AttrKind.String("telemetry_work"), telemetry.AttrProcessDefinition.String("telemetry"), telemetry.AttrQueue.String(river.QueueDefault)))
		require.Equal(t, int64(6), metrictest.Sum(metrics[telemetry.NameJobsTaken], order, telemetry.AttrTenant.String("t2")))

		// Exclusive: the second job of pi-key waited for the first's 500 ms.
		count, longest := metrictest.Histogram(metrics[telemetry.NameExclusiveWait])
		require.GreaterOrEqual(t, count, uint64(2))
		require.GreaterOrEqual(t, longest, 0.5, "the job behind a held key waited at least the holder's work")
		count, longest = metrictest.Histogram(metrics[telemetry.NameKeyHeld])
		require.GreaterOrEqual(t, count, uint64(2))
		require.GreaterOrEqual(t, longest, 0.5, "the holder held its key through its 500 ms of work")

		// Retries, conflicts and incidents.
		require.Equal(t, int64(1), metrictest.Sum(metrics[telemetry.NameRetries], telemetry.AttrRetryCycle.String("R2/PT1S"), telemetry.AttrProcessDefinition.String("telemetry")))
		require.Equal(t, int64(1), metrictest.Sum(metrics[telemetry.NameConflicts], telemetry.AttrRetryCycle.String("R1/PT1S")))
		require.Equal(t, int64(1), metrictest.Sum(metrics[telemetry.NameIncidentsOpened]))
		// The database has two open incidents: the failing job's, and the
		// expired job's (discarded by the leader, which no execution counts).
		require.Equal(t, int64(2), metrictest.Sum(metrics[telemetry.NameIncidentsOpen], telemetry.AttrJobDefinition.String("")))

		// Timers: the occurrence's lateness.
		count, _ = metrictest.Histogram(metrics[telemetry.NameTimerLateness])
		require.Equal(t, uint64(1), count)

		// Expiry, holds, suspension, events: what the leader reads.
		require.Equal(t, int64(1), metrictest.Sum(metrics[telemetry.NameJobsExpired], telemetry.AttrExpiredBy.String("leader")))
		require.Equal(t, int64(1), metrictest.Sum(metrics[telemetry.NameJobsHeld], telemetry.AttrHoldReason.String("suspended")))
		require.Equal(t, int64(1), metrictest.Sum(metrics[telemetry.NameDefinitionsSuspended], telemetry.AttrDefinitionType.String("process_definition")))
		require.Positive(t, metrictest.Sum(metrics[telemetry.NameSubscriptionBehind], telemetry.AttrSubscription.String("telemetry-behind")))
		age, ok := metrictest.GaugeFloat(metrics[telemetry.NameOldestAvailable], telemetry.AttrQueue.String("paused"))
		require.True(t, ok, "the paused queue's oldest available job")
		require.Positive(t, age)
		require.Equal(t, int64(0), metrictest.Sum(metrics[telemetry.NameDeadSessions]))
		require.Equal(t, int64(0), metrictest.Sum(metrics[telemetry.NameDeadKeys]))

		// The incident resolved through the engine.
		require.NoError(t, engine.SetJobRetries(ctx, failing.ID, 1))
		metrics = tr.Collect(t)
		require.Equal(t, int64(1), metrictest.Sum(metrics[telemetry.NameIncidentsResolved]))

		// Liveness: the client's session, fenced once it has no job running
		// (a fence gives its running jobs back), and the session after it.
		require.Equal(t, int64(1), metrictest.Sum(metrics[telemetry.NameSessions]))
		require.Zero(t, metrictest.Sum(metrics[telemetry.NameFences]))
		sessions, err := engine.ClientSessions(ctx)
		require.NoError(t, err)
		require.NotEmpty(t, sessions)
		_, err = bundle.DBPool.Exec(ctx, "SELECT pg_terminate_backend($1)", sessions[len(sessions)-1].PID)
		require.NoError(t, err)

		require.Eventually(t, func() bool {
			metrics = tr.Collect(t)
			return metrictest.Sum(metrics[telemetry.NameFences]) == 1 && metrictest.Sum(metrics[telemetry.NameSessions]) == 2
		}, 30*time.Second, 50*time.Millisecond, "a fence, then a second session")

		// Spans: otelriver's work span carries the job's BPMN identity, and for
		// the job behind pi-key's held key, the key and the wait.
		var keyWaits []float64
		for _, span := range spans.Ended() {
			attrs := attribute.NewSet(span.Attributes()...)
			pi, ok := attrs.Value(telemetry.SpanProcessInstance)
			if !ok {
				continue
			}
			def, _ := attrs.Value(telemetry.SpanProcessDefinition)
			require.NotEmpty(t, def.AsString(), "span %s", span.Name())
			if pi.AsString() == "pi-key" {
				key, _ := attrs.Value(telemetry.SpanExclusiveKey)
				require.Equal(t, "pi-key", key.AsString())
				wait, _ := attrs.Value(telemetry.SpanExclusiveWait)
				keyWaits = append(keyWaits, wait.AsFloat64())
				tenant, _ := attrs.Value(telemetry.SpanTenant)
				require.Equal(t, "t1", tenant.AsString())
			}
		}
		require.Len(t, keyWaits, 2)
		require.GreaterOrEqual(t, max(keyWaits[0], keyWaits[1]), 0.5)
	})

	// OffRecordsNothing: with no provider configured anywhere the
	// instruments are the global no-ops: the work path reads no job context
	// for them and the leader never reads the database figures.
	t.Run("OffRecordsNothing", func(t *testing.T) {
		t.Parallel()
		var identified atomic.Int64
		tel, err := telemetry.New(telemetry.Config{}, countingJobs{telemetry.ContextReader{}, &identified}, riverbpmntest.DBPool(t))
		require.NoError(t, err)
		job := &rivertype.JobRow{ID: 1, Kind: "k", Queue: "q", Attempt: 1, MaxAttempts: 1, Metadata: []byte(`{}`)}
		tel.Fetched(ctx, "q", telemetry.OrderRiver, []*rivertype.JobRow{job})
		require.Error(t, tel.Work(ctx, job, func(context.Context) error { return errors.New("fails") }))
		tel.Conflict(ctx, job)
		require.Zero(t, identified.Load(), "no job's identity is read when nothing records it")
		require.Empty(t, tel.SpanAttributes(job), "a plain job has no BPMN identity")
		require.Zero(t, tel.FigureReads())
	})
}

// With an SDK meter provider, once a series has been seen, measuring a
// job allocates nothing: its fetch, its span hook and its work, for a job
// with a key and for a retried failure; with no provider either. The job
// carries its context as the middleware writes it (the labelled form, the
// key from its default exclusive flag), and in the array form of earlier
// versions.
func TestInstrumentsPerJobAllocatesNothing(t *testing.T) {
	ctx := context.Background()
	for _, metadata := range [][]byte{
		// The labelled form, exclusive and activity left out, the priority
		// of a context resolved with prioritised job creation off.
		[]byte(`{"bpmn":{"instance":"order-4711","process":"order","job":"order:charge","priority":null,"retry":"R3/PT5M"}}`),
		[]byte(`{"bpmn":["order-4711","order","charge","order:charge",null,true,null,null,"R3/PT5M"]}`),
	} {
		attempted := time.Now()
		job := &rivertype.JobRow{ID: 1, Kind: "charge_card", Queue: "default", Attempt: 1, MaxAttempts: 3, Metadata: metadata, ScheduledAt: attempted.Add(-time.Second), AttemptedAt: &attempted}
		jobs := []*rivertype.JobRow{job, job, job}
		failure := errors.New("fails")
		for _, withProvider := range []bool{false, true} {
			config := telemetry.Config{}
			tr := metrictest.NewReader(t)
			if withProvider {
				config.MeterProvider = tr.Provider
			}
			tel, err := telemetry.New(config, telemetry.ContextReader{}, nil)
			require.NoError(t, err)
			hook, ok := tel.Hook().(rivertype.HookWorkBegin)
			require.True(t, ok)
			measure := func() {
				tel.Fetched(ctx, "default", telemetry.OrderRiver, jobs)
				_ = hook.WorkBegin(ctx, job)
				_ = tel.Work(ctx, job, func(context.Context) error { return nil })
				_ = tel.Work(ctx, job, func(context.Context) error { return failure })
			}
			measure() // the first measurement of each series makes it
			// AllocsPerRun measures once more before its 100 runs.
			require.Zero(t, testing.AllocsPerRun(100, measure), "provider: %t, metadata %s", withProvider, metadata)
			if withProvider {
				metrics := tr.Collect(t)
				require.Equal(t, int64(3*102), metrictest.Sum(metrics[telemetry.NameJobsTaken], telemetry.AttrJobDefinition.String("order:charge")))
				require.Equal(t, int64(102), metrictest.Sum(metrics[telemetry.NameRetries], telemetry.AttrRetryCycle.String("R3/PT5M")))
				count, _ := metrictest.Histogram(metrics[telemetry.NameKeyHeld])
				require.Equal(t, uint64(2*102), count, "metadata %s", metadata)
			}
		}
	}
}

// TestContextReaderReadsWhatWorkflowWrites: the engine's JobReader reads a
// job context as workflow stores it (JobContext.AddToMetadata: the labelled
// form), in the array form of migration riverbpmn/016 and in the object
// form of migrations before it, whatever the metadata around it; it reads
// the labelled and array forms in one pass unless a string has escapes, and
// a job's class is the class of its identity.
func TestContextReaderReadsWhatWorkflowWrites(t *testing.T) {
	t.Parallel()
	priority := int64(7)
	exclusiveNo, exclusiveYes := false, true
	contexts := []workflow.JobContext{
		{ProcessInstanceID: "order-4711", ProcessDefinitionKey: "order", ActivityID: "charge", JobDefinitionID: "charge-async", TenantID: "acme", RetryCycle: "R3/PT5M", Priority: &priority, Exclusive: &exclusiveYes},
		{ProcessInstanceID: "sub-1", RootProcessInstanceID: "root-1", ParentProcessInstanceID: "mid-1", ProcessDefinitionKey: "order", JobType: workflow.JobTypeTimer, Exclusive: &exclusiveYes},
		{ProcessInstanceID: "order, with a comma", ProcessDefinitionKey: "order", Exclusive: &exclusiveNo},
		{ProcessInstanceID: `quote " and \ backslash`, ProcessDefinitionKey: "order"},
		{ProcessInstanceID: "commande-été", ProcessDefinitionKey: "commande", TenantID: "société", Exclusive: &exclusiveYes},
		{ProcessDefinitionKey: "order"},
		// The activity left out (derived from the job definition), and
		// stored as null when empty.
		{ProcessInstanceID: "pi-1", ProcessDefinitionKey: "order", ActivityID: "reserve", JobDefinitionID: "order:reserve", DeploymentID: "dep-1", JobType: workflow.JobTypeAsync, Exclusive: &exclusiveYes},
		{ProcessInstanceID: "pi-1", ProcessDefinitionKey: "order", JobDefinitionID: "order:reserve", Exclusive: &exclusiveNo},
		{ProcessDefinitionKey: "order", JobDefinitionID: "order:start", JobType: workflow.JobTypeTimer, Exclusive: &exclusiveYes}, // exclusive without an instance
		{Priority: &priority, RetryCycle: "R1/PT1S"},
	}
	readers := []telemetry.ContextReader{{}, {Scope: exclusive.RootProcessInstance}, {Scope: exclusive.None}}
	for _, jc := range contexts {
		labelled, err := jc.AddToMetadata(nil)
		require.NoError(t, err)
		var stored struct {
			Context json.RawMessage `json:"bpmn"`
		}
		require.NoError(t, json.Unmarshal(labelled, &stored))
		object, err := json.Marshal(jc) // the object form: fields by JSON name
		require.NoError(t, err)
		for form, value := range map[string]json.RawMessage{"labelled": stored.Context, "array": arrayForm(t, object), "object": object} {
			for _, around := range []string{`{"bpmn":%s}`, `{"other": {"bpmn": [1]}, "x": "\"bpmn\":[\"no\"]", "bpmn": %s}`, `{"z": [{"a": "}"}, 1.5e3, null], "bpmn": %s, "y": "]"}`} {
				metadata := []byte(strings.Replace(around, "%s", string(value), 1))
				require.True(t, json.Valid(metadata), "%s", metadata)
				var c jobctx.Text
				found, ok := jobctx.Read(metadata, &c)
				if form != "object" {
					require.Equal(t, !strings.ContainsRune(string(value), '\\'), ok, "read in one pass unless escaped: %s", metadata)
					require.Equal(t, ok, found, "%s", metadata)
				}
				job := &rivertype.JobRow{Metadata: metadata}
				for _, r := range readers {
					got := r.Identity(job)
					require.True(t, got.HasContext)
					require.Equal(t, jc.ProcessInstanceID, got.ProcessInstanceID, "%s", metadata)
					require.Equal(t, jc.ActivityID, got.ActivityID, "%s", metadata)
					require.Equal(t, jc.JobDefinitionID, got.JobDefinitionID, "%s", metadata)
					require.Equal(t, jc.TenantID, got.TenantID, "%s", metadata)
					require.Equal(t, jc.RetryCycle, got.RetryCycle, "%s", metadata)
					require.Equal(t, jc.JobType == workflow.JobTypeTimer, got.Timer, "%s", metadata)
					want := telemetry.ClassOf(got)
					class := r.Class(job)
					require.Equal(t, [4]string{string(want.JobDefinitionID), string(want.ProcessDefinitionKey), string(want.TenantID), string(want.RetryCycle)},
						[4]string{string(class.JobDefinitionID), string(class.ProcessDefinitionKey), string(class.TenantID), string(class.RetryCycle)}, "%s", metadata)
					require.Equal(t, [3]bool{want.HasContext, want.Timer, want.Exclusive}, [3]bool{class.HasContext, class.Timer, class.Exclusive}, "%s", metadata)
				}
			}
		}
	}
}

// arrayForm returns the array form of a job context given in the object
// form: its fields at their positions (jobctx.Names), trailing nulls left
// out.
func arrayForm(t testing.TB, object json.RawMessage) json.RawMessage {
	t.Helper()
	var fields map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(object, &fields))
	elements := make([]json.RawMessage, len(jobctx.Names))
	for i, name := range jobctx.Names {
		elements[i] = json.RawMessage("null")
		if value, ok := fields[name]; ok && string(value) != `""` {
			elements[i] = value
		}
	}
	for len(elements) > 0 && string(elements[len(elements)-1]) == "null" {
		elements = elements[:len(elements)-1]
	}
	array, err := json.Marshal(elements)
	require.NoError(t, err)
	return array
}

// countingJobs counts the jobs whose identity or class the instruments read.
type countingJobs struct {
	telemetry.ContextReader

	read *atomic.Int64
}

func (c countingJobs) Identity(job *rivertype.JobRow) telemetry.Identity {
	c.read.Add(1)
	return c.ContextReader.Identity(job)
}

func (c countingJobs) Class(job *rivertype.JobRow) telemetry.Class {
	c.read.Add(1)
	return c.ContextReader.Class(job)
}
