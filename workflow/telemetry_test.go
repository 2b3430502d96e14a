package workflow

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/riverqueue/rivercontrib/otelriver"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/riverbpmn/riverbpmn/events"
	"github.com/riverbpmn/riverbpmn/exclusive"
	"github.com/riverbpmn/riverbpmn/internal/jobctx"
	"github.com/riverbpmn/riverbpmn/lifecycle"
	"github.com/riverbpmn/riverbpmn/liveness"
	"github.com/riverbpmn/riverbpmn/telemetry"
)

// telArgs is the telemetry tests' job: Mode decides its outcome.
type telArgs struct {
	Instance    string `json:"instance"`
	Definition  string `json:"definition,omitempty"`
	Tenant      string `json:"tenant,omitempty"`
	Mode        string `json:"mode"` // "ok", "fail", "conflict" (the run without a recorded error), "timer"
	SleepMillis int    `json:"sleep_millis,omitempty"`
	RetryCycle  string `json:"retry_cycle,omitempty"`
}

func (telArgs) Kind() string { return "telemetry_work" }

func (a telArgs) JobContext() JobContext {
	def := a.Definition
	if def == "" {
		def = "telemetry"
	}
	jc := JobContext{ProcessInstanceID: a.Instance, ProcessDefinitionKey: def, ActivityID: "task", TenantID: a.Tenant, RetryCycle: a.RetryCycle}
	if a.Mode == "timer" {
		jc.JobType = JobTypeTimer
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
			return fmt.Errorf("telemetry test: %w", ErrConflict)
		}
	}
	return nil
}

// telReader is a meter provider whose measurements a test reads back.
type telReader struct {
	reader   *sdkmetric.ManualReader
	provider *sdkmetric.MeterProvider
}

func newTelReader(t *testing.T) *telReader {
	reader := sdkmetric.NewManualReader()
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = provider.Shutdown(context.Background()) })
	return &telReader{reader: reader, provider: provider}
}

// collect returns riverbpmn's metrics by name.
func (r *telReader) collect(t *testing.T) map[string]metricdata.Metrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, r.reader.Collect(context.Background(), &rm))
	out := map[string]metricdata.Metrics{}
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != telemetry.ScopeName {
			continue
		}
		for _, m := range sm.Metrics {
			out[m.Name] = m
		}
	}
	return out
}

// sum returns the total of an Int64 sum or gauge, over the data points
// whose attributes include every one of match.
func sum(m metricdata.Metrics, match ...attribute.KeyValue) int64 {
	var total int64
	points := func(attrs attribute.Set) bool {
		for _, kv := range match {
			if v, ok := attrs.Value(kv.Key); !ok || v != kv.Value {
				return false
			}
		}
		return true
	}
	switch data := m.Data.(type) {
	case metricdata.Sum[int64]:
		for _, p := range data.DataPoints {
			if points(p.Attributes) {
				total += p.Value
			}
		}
	case metricdata.Gauge[int64]:
		for _, p := range data.DataPoints {
			if points(p.Attributes) {
				total += p.Value
			}
		}
	}
	return total
}

// histogram returns the count and max of a Float64 histogram.
func histogram(m metricdata.Metrics) (count uint64, maxValue float64) {
	data, ok := m.Data.(metricdata.Histogram[float64])
	if !ok {
		return 0, 0
	}
	for _, p := range data.DataPoints {
		count += p.Count
		if v, ok := p.Max.Value(); ok && v > maxValue {
			maxValue = v
		}
	}
	return count, maxValue
}

// gaugeFloat returns a Float64 gauge's value for the data point with attr.
func gaugeFloat(m metricdata.Metrics, attr attribute.KeyValue) (float64, bool) {
	data, ok := m.Data.(metricdata.Gauge[float64])
	if !ok {
		return 0, false
	}
	for _, p := range data.DataPoints {
		if v, ok := p.Attributes.Value(attr.Key); ok && v == attr.Value {
			return p.Value, true
		}
	}
	return 0, false
}

// TestTelemetryInstruments runs the scenarios that move every instrument a
// single process can (a retry, an incident and its resolution, a conflict,
// a held key, a timer, fair fetching across tenants, an expiry, a held and
// a suspended definition, an event subscription behind, a fenced liveness
// session) and reads each back through the SDK's in-memory reader; the
// span of each job's work carries its BPMN identity.
// TestTelemetryKilledClient covers the instruments of a SIGKILLed client.
func TestTelemetryInstruments(t *testing.T) {
	ctx := context.Background()
	tr := newTelReader(t)
	spans := tracetest.NewSpanRecorder()
	tracer := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	t.Cleanup(func() { _ = tracer.Shutdown(context.Background()) })

	engine, schema := testEngineWithConfig(t, &Config{
		Telemetry: telemetry.Config{MeterProvider: tr.provider, TenantAttribute: true, FiguresInterval: time.Second},
		Events:    &EventsConfig{},
		// Declared: an engine with declarations refuses jobs of others, and a
		// declared definition can be suspended.
		ProcessDefinitions: []ProcessDefinition{{Key: "telemetry"}, {Key: "telemetry-suspended"}},
		// A slow ping on a loaded machine fences no one: the test's only
		// fence is the one it makes by cutting the session's connection.
		Liveness: liveness.Config{FenceAfter: 20 * time.Second, TakeoverAfter: 25 * time.Second},
	})
	driver, err := engine.NewDriver(Acquisition{FairByTenant: true})
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
		Middleware:        []rivertype.Middleware{otelriver.NewMiddleware(&otelriver.MiddlewareConfig{TracerProvider: tracer, MeterProvider: tr.provider})},
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
	_, err = engine.SuspendProcessDefinition(ctx, "telemetry-suspended", &SuspendOpts{IncludeJobs: true})
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
	err = events.Subscribe(subCtx, engine.dbPool, &events.SubscribeConfig{Schema: schema, Name: "telemetry-behind", From: &events.Cursor{}}, func(context.Context, []events.Event) error { return errStop })
	subCancel()
	require.True(t, err == nil || errors.Is(err, errStop) || errors.Is(err, context.DeadlineExceeded), "subscribe: %v", err)

	var metrics map[string]metricdata.Metrics
	require.Eventually(t, func() bool {
		metrics = tr.collect(t)
		_, held := histogram(metrics[telemetry.NameKeyHeld])
		timers, _ := histogram(metrics[telemetry.NameTimerLateness])
		return held >= 0.5 && timers >= 1 &&
			sum(metrics[telemetry.NameJobsExpired]) >= 1 &&
			sum(metrics[telemetry.NameIncidentsOpen]) >= 2 && // the failing job's and the expired job's
			sum(metrics[telemetry.NameConflicts]) >= 1 &&
			sum(metrics[telemetry.NameSubscriptionBehind]) >= 1
	}, 60*time.Second, 100*time.Millisecond, "instruments so far: %v", names(metrics))

	// Acquisition: fetches by order, jobs taken by tenant (fair fetching).
	order := telemetry.AttrOrder.String(telemetry.OrderFair)
	require.Positive(t, sum(metrics[telemetry.NameFetches], order, telemetry.AttrQueue.String(river.QueueDefault)))
	require.Equal(t, int64(2), sum(metrics[telemetry.NameJobsTaken], order, telemetry.AttrTenant.String("t1"),
		telemetry.AttrKind.String("telemetry_work"), telemetry.AttrProcessDefinition.String("telemetry"), telemetry.AttrQueue.String(river.QueueDefault)))
	require.Equal(t, int64(6), sum(metrics[telemetry.NameJobsTaken], order, telemetry.AttrTenant.String("t2")))

	// Exclusive: the second job of pi-key waited for the first's 500 ms.
	count, longest := histogram(metrics[telemetry.NameExclusiveWait])
	require.GreaterOrEqual(t, count, uint64(2))
	require.GreaterOrEqual(t, longest, 0.5, "the job behind a held key waited at least the holder's work")
	count, longest = histogram(metrics[telemetry.NameKeyHeld])
	require.GreaterOrEqual(t, count, uint64(2))
	require.GreaterOrEqual(t, longest, 0.5, "the holder held its key through its 500 ms of work")

	// Retries, conflicts and incidents.
	require.Equal(t, int64(1), sum(metrics[telemetry.NameRetries], telemetry.AttrRetryCycle.String("R2/PT1S"), telemetry.AttrProcessDefinition.String("telemetry")))
	require.Equal(t, int64(1), sum(metrics[telemetry.NameConflicts], telemetry.AttrRetryCycle.String("R1/PT1S")))
	require.Equal(t, int64(1), sum(metrics[telemetry.NameIncidentsOpened]))
	// The database has two open incidents: the failing job's, and the
	// expired job's (discarded by the leader, which no execution counts).
	require.Equal(t, int64(2), sum(metrics[telemetry.NameIncidentsOpen], telemetry.AttrJobDefinition.String("")))

	// Timers: the occurrence's lateness.
	count, _ = histogram(metrics[telemetry.NameTimerLateness])
	require.Equal(t, uint64(1), count)

	// Expiry, holds, suspension, events: what the leader reads.
	require.Equal(t, int64(1), sum(metrics[telemetry.NameJobsExpired], telemetry.AttrExpiredBy.String("leader")))
	require.Equal(t, int64(1), sum(metrics[telemetry.NameJobsHeld], telemetry.AttrHoldReason.String("suspended")))
	require.Equal(t, int64(1), sum(metrics[telemetry.NameDefinitionsSuspended], telemetry.AttrDefinitionType.String("process_definition")))
	require.Positive(t, sum(metrics[telemetry.NameSubscriptionBehind], telemetry.AttrSubscription.String("telemetry-behind")))
	age, ok := gaugeFloat(metrics[telemetry.NameOldestAvailable], telemetry.AttrQueue.String("paused"))
	require.True(t, ok, "the paused queue's oldest available job")
	require.Positive(t, age)
	require.Equal(t, int64(0), sum(metrics[telemetry.NameDeadSessions]))
	require.Equal(t, int64(0), sum(metrics[telemetry.NameDeadKeys]))

	// The incident resolved through the engine.
	require.NoError(t, engine.SetJobRetries(ctx, failing.ID, 1))
	metrics = tr.collect(t)
	require.Equal(t, int64(1), sum(metrics[telemetry.NameIncidentsResolved]))

	// Liveness: the client's session, fenced once it has no job running
	// (a fence gives its running jobs back), and the session after it.
	require.Equal(t, int64(1), sum(metrics[telemetry.NameSessions]))
	require.Zero(t, sum(metrics[telemetry.NameFences]))
	sessions, err := engine.ClientSessions(ctx)
	require.NoError(t, err)
	require.NotEmpty(t, sessions)
	_, err = engine.dbPool.Exec(ctx, "SELECT pg_terminate_backend($1)", sessions[len(sessions)-1].PID)
	require.NoError(t, err)

	require.Eventually(t, func() bool {
		metrics = tr.collect(t)
		return sum(metrics[telemetry.NameFences]) == 1 && sum(metrics[telemetry.NameSessions]) == 2
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
}

func names(metrics map[string]metricdata.Metrics) []string {
	var out []string
	for name := range metrics {
		out = append(out, name)
	}
	return out
}

// TestTelemetryOffRecordsNothing: with no provider configured anywhere the
// instruments are the global no-ops: the work path reads no job context for
// them and the leader never reads the database figures.
func TestTelemetryOffRecordsNothing(t *testing.T) {
	ctx := context.Background()
	engine, _ := testEngine(t)
	var identified atomic.Int64
	tel, err := telemetry.New(telemetry.Config{}, countingJobs{telemetryJobs{engine}, &identified}, engine.dbPool)
	require.NoError(t, err)
	job := &rivertype.JobRow{ID: 1, Kind: "k", Queue: "q", Attempt: 1, MaxAttempts: 1, Metadata: []byte(`{}`)}
	tel.Fetched(ctx, "q", telemetry.OrderRiver, []*rivertype.JobRow{job})
	require.Error(t, tel.Work(ctx, job, func(context.Context) error { return errors.New("fails") }))
	tel.Conflict(ctx, job)
	require.Zero(t, identified.Load(), "no job's identity is read when nothing records it")
	require.Empty(t, tel.SpanAttributes(job), "a plain job has no BPMN identity")
	require.Zero(t, tel.FigureReads())
}

// With an SDK meter provider, once a series has been seen, measuring a
// job allocates nothing: its fetch, its span hook and its work, for a job
// with a key and for a retried failure; with no provider either. The job
// carries its context as the middleware writes it (the labelled form, the
// key from its default exclusive flag), and in the array form of earlier
// versions.
func TestTelemetryPerJobAllocatesNothing(t *testing.T) {
	ctx := context.Background()
	exclusiveYes := true
	jc := JobContext{ProcessInstanceID: "order-4711", ProcessDefinitionKey: "order", ActivityID: "charge", JobDefinitionID: "order:charge", RetryCycle: "R3/PT5M", Exclusive: &exclusiveYes}
	labelled, err := jc.addResolvedToMetadata(nil, true)
	require.NoError(t, err)
	require.JSONEq(t, `{"bpmn": {"instance": "order-4711", "process": "order", "job": "order:charge", "priority": null, "retry": "R3/PT5M"}}`, string(labelled),
		"the labelled form, exclusive and activity left out")
	array, err := jc.compactJSON()
	require.NoError(t, err)
	array, err = setMetadataKey(nil, array)
	require.NoError(t, err)
	for _, metadata := range [][]byte{labelled, array} {
		attempted := time.Now()
		job := &rivertype.JobRow{ID: 1, Kind: "charge_card", Queue: "default", Attempt: 1, MaxAttempts: 3, Metadata: metadata, ScheduledAt: attempted.Add(-time.Second), AttemptedAt: &attempted}
		jobs := []*rivertype.JobRow{job, job, job}
		failure := errors.New("fails")
		for _, withProvider := range []bool{false, true} {
			config := &Config{}
			tr := newTelReader(t)
			if withProvider {
				config.Telemetry.MeterProvider = tr.provider
			}
			engine, err := NewEngine(nil, config)
			require.NoError(t, err)
			hook, ok := engine.telHook.(rivertype.HookWorkBegin)
			require.True(t, ok)
			measure := func() {
				engine.tel.Fetched(ctx, "default", telemetry.OrderRiver, jobs)
				_ = hook.WorkBegin(ctx, job)
				_ = engine.tel.Work(ctx, job, func(context.Context) error { return nil })
				_ = engine.tel.Work(ctx, job, func(context.Context) error { return failure })
			}
			measure() // the first measurement of each series makes it
			// AllocsPerRun measures once more before its 100 runs.
			require.Zero(t, testing.AllocsPerRun(100, measure), "provider: %t, metadata %s", withProvider, metadata)
			if withProvider {
				metrics := tr.collect(t)
				require.Equal(t, int64(3*102), sum(metrics[telemetry.NameJobsTaken], telemetry.AttrJobDefinition.String("order:charge")))
				require.Equal(t, int64(102), sum(metrics[telemetry.NameRetries], telemetry.AttrRetryCycle.String("R3/PT5M")))
				count, _ := histogram(metrics[telemetry.NameKeyHeld])
				require.Equal(t, uint64(2*102), count, "metadata %s", metadata)
			}
		}
	}
}

// countingJobs counts the jobs whose identity or class the instruments read.
type countingJobs struct {
	telemetryJobs

	read *atomic.Int64
}

func (c countingJobs) Identity(job *rivertype.JobRow) telemetry.Identity {
	c.read.Add(1)
	return c.telemetryJobs.Identity(job)
}

func (c countingJobs) Class(job *rivertype.JobRow) telemetry.Class {
	c.read.Add(1)
	return c.telemetryJobs.Class(job)
}

// jobIdentity's and jobClass's one-pass reader (readJobContext) reads what
// the general reader reads, for every stored form of the job context and
// whatever the metadata around it, and reads the labelled and array forms
// itself unless a string has escapes.
func TestTelemetryJobIdentity(t *testing.T) {
	engines := telemetryIdentityEngines(t)
	engine := engines[0]
	priority := int64(7)
	exclusiveNo, exclusiveYes := false, true
	contexts := []JobContext{
		{ProcessInstanceID: "order-4711", ProcessDefinitionKey: "order", ActivityID: "charge", JobDefinitionID: "charge-async", TenantID: "acme", RetryCycle: "R3/PT5M", Priority: &priority, Exclusive: &exclusiveYes},
		{ProcessInstanceID: "sub-1", RootProcessInstanceID: "root-1", ParentProcessInstanceID: "mid-1", ProcessDefinitionKey: "order", JobType: JobTypeTimer, Exclusive: &exclusiveYes},
		{ProcessInstanceID: "order, with a comma", ProcessDefinitionKey: "order", Exclusive: &exclusiveNo},
		{ProcessInstanceID: `quote " and \ backslash`, ProcessDefinitionKey: "order"},
		{ProcessInstanceID: "commande-été", ProcessDefinitionKey: "commande", TenantID: "société", Exclusive: &exclusiveYes},
		{ProcessDefinitionKey: "order"},
		// The activity left out (derived from the job definition), and
		// stored as null when empty.
		{ProcessInstanceID: "pi-1", ProcessDefinitionKey: "order", ActivityID: "reserve", JobDefinitionID: "order:reserve", DeploymentID: "dep-1", JobType: JobTypeAsync, Exclusive: &exclusiveYes},
		{ProcessInstanceID: "pi-1", ProcessDefinitionKey: "order", JobDefinitionID: "order:reserve", Exclusive: &exclusiveNo},
		{ProcessDefinitionKey: "order", JobDefinitionID: "order:start", JobType: JobTypeTimer, Exclusive: &exclusiveYes}, // exclusive without an instance
		{Priority: &priority, RetryCycle: "R1/PT1S"},
	}
	for _, jc := range contexts {
		labelled, err := jc.labelledJSON(false)
		require.NoError(t, err)
		resolved, err := jc.labelledJSON(true)
		require.NoError(t, err)
		array, err := jc.compactJSON()
		require.NoError(t, err)
		for _, stored := range []json.RawMessage{labelled, resolved, array} {
			for _, around := range []string{``, `{"other": {"bpmn": [1]}, "x": "\"bpmn\":[\"no\"]"}`, `{"z": [{"a": "}"}, 1.5e3, null], "y": "]"}`} {
				metadata, err := setMetadataKey([]byte(around), stored)
				require.NoError(t, err)
				for _, e := range engines {
					requireTelemetryIdentityAsGeneral(t, e, metadata)
				}
				var c jobctx.Text
				found, ok := jobctx.Read(metadata, &c)
				require.Equal(t, !bytes.ContainsRune(stored, '\\'), ok, "read in one pass unless escaped: %s", metadata)
				require.Equal(t, ok, found, "%s", metadata)
				got := engine.jobIdentity(&rivertype.JobRow{Metadata: metadata})
				require.True(t, got.HasContext)
				require.Equal(t, jc.ProcessInstanceID, got.ProcessInstanceID)
				require.Equal(t, jc.ActivityID, got.ActivityID, "%s", metadata)
				require.Equal(t, jc.TenantID, got.TenantID)
			}
		}
	}
	// read says whether readJobContext reads the metadata itself (true) or
	// leaves it to the general reader.
	for metadata, read := range map[string]bool{
		// As River's jsonb column gives it back: spaces after colons and commas.
		`{"bpmn": ["pi-1", "order", "task", "order:task", 50, true, null, "timer", "R1/PT1S", "acme"], "river:log": [{"log": "x"}]}`:                                                  true,
		`{"bpmn": {"instance": "pi-1", "process": "order", "job": "order:task", "priority": 50, "type": "timer", "retry": "R1/PT1S", "tenant": "acme"}, "river:log": [{"log": "x"}]}`: true,
		// The labelled form: labels in any order, spacing, defaults, null.
		`{"bpmn": {"tenant": "acme", "job": "order:task", "process": "order", "instance": "pi-1"}}`:              true,
		`{"bpmn":{"instance":"pi-1","process":"order","exclusive":false}}`:                                       true,
		`{"bpmn" : { "instance" : "pi-1" , "process" : "order" , "exclusive" : null } }`:                         true,
		`{"bpmn": {"instance": null, "process": "order"}}`:                                                       true,
		`{"bpmn": {"process": "order", "exclusive": true}}`:                                                      true,
		`{"bpmn": {"process": "order", "job": "order:task", "activity": null}}`:                                  true,
		`{"bpmn": {"process": "order", "job": "order:task", "activity": "other"}}`:                               true,
		`{"bpmn": {"process": "order", "job": "order:"}}`:                                                        true,
		`{"bpmn": {"process": "order", "job": "orders:task"}}`:                                                   true,
		`{"bpmn": {"process": "order", "job": "order"}}`:                                                         true,
		`{"bpmn": {"process": "", "job": ":task"}}`:                                                              true,
		`{"bpmn": {"process": 5, "job": "5:task"}}`:                                                              true,
		`{"bpmn": {"process": null, "job": "order:task"}}`:                                                       true,
		`{"bpmn": {"job": "order:task"}}`:                                                                        true,
		`{"bpmn": {"process": "order", "job": null}}`:                                                            true,
		`{"bpmn": {"instance": "sub-1", "root": "root-1", "parent": "root-1", "process": "order"}}`:              true,
		`{"bpmn": {"instance": "pi-1", "root": null, "priority": null, "deployment": "dep-1", "type": "timer"}}`: true,
		`{"bpmn": {"instance": "pi-1", "instance": null, "process": "order"}}`:                                   true, // the last of duplicate labels
		`{"bpmn": {"instance": null, "instance": "pi-2", "exclusive": true, "exclusive": false}}`:                true,
		`{"bpmn": {"instance": 7, "tenant": true, "retry": -1.5e3, "type": false}}`:                              true,
		`{"bpmn": {}}`: true,
		`{"bpmn": {"instance": "pi-1"}, "bpmn": ["pi-2", "order"]}`: true,
		`{"bpmn": ["pi-2", "order"], "bpmn": {"instance": "pi-1"}}`: true,
		`{"bpmn": {"instance": "pi-1"}, "bpmn": null}`:              true,
		`{"bpmn": null, "bpmn": {"instance": "pi-1"}}`:              true,
		// The object form of earlier migrations, alone or mixed with labels.
		`{"bpmn": {"process_instance_id": "pi-1", "process_definition_key": "order", "exclusive": true}}`: false,
		`{"bpmn": {"process_instance_id": "pi-1"}}`:                                                       false,
		`{"bpmn": {"instance": "pi-1", "process_instance_id": "pi-2", "process": "order"}}`:               false,
		`{"bpmn": {"instance": "pi-1", "activity_id": "task", "process": "order", "job": "order:x"}}`:     false,
		`{"bpmn": {"instance": "pi-1", "a_later_label": "x"}}`:                                            false,
		`{"bpmn": {"instance": "a\"b", "process": "order"}}`:                                              false, // escapes
		`{"bpmn": {"inst\u0061nce": "pi-1"}}`:                                                             false,
		`{"bpmn": {"instance": "pi-1", "tenant": {"id": "acme"}}}`:                                        false, // not a plain value
		`{"bpmn": {"instance": "pi-1", "tenant": ["acme"]}}`:                                              false,
		"{\"bpmn\": {\"instance\": \"pi-\xff\"}}":                                                         false, // not UTF-8
		// The array form.
		`{"bpmn": ["pi-1", "order"], "bpmn": null}`:                                                           true, // the last of duplicate keys
		`{"bpmn": null, "bpmn": ["pi-2", "order", null, "d"]}`:                                                true,
		`{"bp\u006dn": ["pi-1", "order"]}`:                                                                    true,  // a key with escapes: no context, to both readers
		`{"\u0062pmn": ["pi-2"], "bpmn": {"instance": "pi-1"}}`:                                               false, // a key with escapes and a context
		`{"bpmn": ["pi-1", "order", "a", "d", 1, true, "dep", "async", "R1/PT1S", "t", "root", "extra", 12]}`: true,
		`{"bpmn": []}`: true, `{"bpmn": 5}`: false, `{"bpmn": "pi-1"}`: false, `{"bpmn": [["nested"]]}`: false, `{"bpmn": [1, 2, 3, 4, 5, "true"]}`: true,
		`{"a": 1}`: true, `{"bpmn": null}`: true, `{}`: true, `[]`: true, `"bpmn"`: false, `null`: true,
	} {
		for _, e := range engines {
			requireTelemetryIdentityAsGeneral(t, e, []byte(metadata))
		}
		var c jobctx.Text
		_, ok := jobctx.Read([]byte(metadata), &c)
		require.Equal(t, read, ok, "read in one pass: %s", metadata)
	}
	legacy := []byte(`{"bpmn": {"process_instance_id": "pi-1", "process_definition_key": "order", "exclusive": true}}`)
	require.Equal(t, "pi-1", engine.jobIdentity(&rivertype.JobRow{Metadata: legacy}).ExclusiveKey, "the object form of earlier migrations")
	require.True(t, engine.jobClass(&rivertype.JobRow{Metadata: legacy}).Exclusive)
	require.Equal(t, telemetry.Identity{}, engine.jobIdentity(&rivertype.JobRow{Metadata: []byte(`{"a": 1}`)}))
	require.Equal(t, telemetry.Identity{}, engine.jobIdentity(&rivertype.JobRow{Metadata: []byte(`{"bpmn": null}`)}))
	wantClass := telemetry.Class{HasContext: true, Timer: true, Exclusive: true, JobDefinitionID: []byte("order:a"),
		ProcessDefinitionKey: []byte("order"), TenantID: []byte("acme"), RetryCycle: []byte("R1/PT1S")}
	class := engine.jobClass(&rivertype.JobRow{Metadata: []byte(`{"bpmn": ["pi-1", "order", "a", "order:a", null, true, null, "timer", "R1/PT1S", "acme"]}`)})
	require.Equal(t, wantClass, class)
	// The same in the labelled form: exclusive by default, the activity
	// derived from the job definition.
	labelled := []byte(`{"bpmn": {"retry": "R1/PT1S", "type": "timer", "tenant": "acme", "job": "order:a", "process": "order", "instance": "pi-1"}}`)
	require.Equal(t, wantClass, engine.jobClass(&rivertype.JobRow{Metadata: labelled}))
	require.Equal(t, telemetry.Identity{HasContext: true, ProcessInstanceID: "pi-1", ActivityID: "a", JobDefinitionID: "order:a", ProcessDefinitionKey: "order",
		TenantID: "acme", RetryCycle: "R1/PT1S", Timer: true, ExclusiveKey: "pi-1"}, engine.jobIdentity(&rivertype.JobRow{Metadata: labelled}))
	notExclusive := []byte(`{"bpmn": {"instance": "pi-1", "process": "order", "exclusive": null}}`)
	require.False(t, engine.jobClass(&rivertype.JobRow{Metadata: notExclusive}).Exclusive, "null: not set")

	// Both forms are read without allocating.
	for _, jc := range contexts[:1] {
		labelled, err := jc.AddToMetadata([]byte(`{"river:log": [{"log": "x"}]}`))
		require.NoError(t, err)
		array, err := jc.compactJSON()
		require.NoError(t, err)
		array, err = setMetadataKey([]byte(`{"river:log": [{"log": "x"}]}`), array)
		require.NoError(t, err)
		for _, metadata := range [][]byte{labelled, array} {
			job := &rivertype.JobRow{Metadata: metadata}
			require.Zero(t, testing.AllocsPerRun(100, func() { _ = engine.jobClass(job) }), "%s", metadata)
		}
	}
}

// FuzzTelemetryJobClass: for any metadata River can hold (a JSON value),
// the instruments' fast readers read what the general reader reads.
func FuzzTelemetryJobClass(f *testing.F) {
	for _, seed := range []string{
		`{"bpmn":["pi-1","order","task","order:task",50,true,null,"timer","R1/PT1S","acme","root"]}`,
		`{"bpmn": ["pi-1", "order"], "x": {"bpmn": [1]}, "y": "\"bpmn\""}`,
		`{"bpmn": {"process_instance_id": "pi-1", "exclusive": true}}`,
		`{"bpmn": null}`, `{"bpmn": ["a\"b"]}`, `{"bpmn": [], "bpmn": ["x"]}`, `[]`, `{}`,
		`{"bpmn":{"instance":"pi-1","process":"order","job":"order:task","priority":50,"type":"timer","retry":"R1/PT1S","tenant":"acme","root":"r","parent":"p"}}`,
		`{"bpmn": {"job": "order:task", "process": "order", "exclusive": null, "activity": null, "instance": null}, "x": [1]}`,
		`{"bpmn": {"instance": "pi-1", "process_definition_key": "order"}}`,
		`{"bpmn": {"instance": "pi-1", "instance": null, "deployment": 5, "tenant": {"id": "t"}}}`,
		`{"bpmn": {}}`,
	} {
		f.Add([]byte(seed))
	}
	engines := telemetryIdentityEngines(f)
	f.Fuzz(func(t *testing.T, metadata []byte) {
		if !json.Valid(metadata) {
			t.Skip("River's metadata is jsonb: always valid JSON")
		}
		for _, e := range engines {
			requireTelemetryIdentityAsGeneral(t, e, metadata)
		}
	})
}

// telemetryIdentityEngines returns an engine of each exclusive scope.
func telemetryIdentityEngines(tb testing.TB) []*Engine {
	tb.Helper()
	var engines []*Engine
	for _, scope := range []exclusive.Scope{exclusive.ProcessInstance, exclusive.RootProcessInstance, exclusive.None} {
		engine, err := NewEngine(nil, &Config{ExclusiveScope: scope})
		require.NoError(tb, err)
		engines = append(engines, engine)
	}
	return engines
}

// requireTelemetryIdentityAsGeneral checks that jobIdentity and jobClass
// read metadata as the general reader (metadataContextFields) does.
func requireTelemetryIdentityAsGeneral(t testing.TB, engine *Engine, metadata []byte) {
	t.Helper()
	want := telemetry.Identity{}
	if fields, found, err := metadataContextFields(metadata); found && err == nil {
		want = engine.identityOf(fields.field)
	}
	job := &rivertype.JobRow{Metadata: metadata}
	require.Equal(t, want, engine.jobIdentity(job), "identity of %s", metadata)
	type class struct {
		HasContext, Timer, Exclusive                                bool
		JobDefinitionID, ProcessDefinitionKey, TenantID, RetryCycle string
	}
	text := func(c telemetry.Class) class {
		return class{c.HasContext, c.Timer, c.Exclusive, string(c.JobDefinitionID), string(c.ProcessDefinitionKey), string(c.TenantID), string(c.RetryCycle)}
	}
	require.Equal(t, text(telemetry.ClassOf(want)), text(engine.jobClass(job)), "class of %s", metadata)
}
