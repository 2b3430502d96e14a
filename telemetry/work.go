package telemetry

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// Acquisition orders (riverbpmn.acquisition.order): a client's acquisition
// options joined by "+", or River's own order.
const (
	OrderRiver       = "river"
	OrderPriority    = "priority"
	OrderTimersFirst = "timers_first"
	OrderDueDate     = "due_date"
	OrderFair        = "fair"
)

// Order names an acquisition order from its parts, in the order given;
// none gives OrderRiver.
func Order(parts ...string) string {
	if len(parts) == 0 {
		return OrderRiver
	}
	return strings.Join(parts, "+")
}

// Fetched counts one fetch of queue by a client acquiring in order, and the
// jobs it took. Called with the result of every fetch, empty or not.
func (t *Instruments) Fetched(ctx context.Context, queue, order string, jobs []*rivertype.JobRow) {
	if t == nil {
		return
	}
	if t.fetches.Enabled(ctx) {
		t.fetches.Add(ctx, 1, metric.WithAttributeSet(t.jobAttrs(queue, "", &Identity{}, false, AttrOrder, order)))
	}
	if len(jobs) == 0 || !t.jobsTaken.Enabled(ctx) {
		return
	}
	now := time.Now()
	for _, job := range jobs {
		id := t.identify(job)
		t.jobsTaken.Add(ctx, 1, metric.WithAttributeSet(t.jobAttrs(job.Queue, job.Kind, &id, t.cfg.TenantAttribute, AttrOrder, order)))
		t.handOff(job, id, now)
	}
}

// Identities read at fetch are handed to the job's work, so that a job's
// context is read once per execution. A job whose work never runs (River
// fails an unknown kind without running it) leaves its entry behind: past
// handOffSweepAt entries, those older than handOffMaxAge are swept.
const (
	handOffSweepAt = 10_000
	handOffMaxAge  = 10 * time.Minute
)

type attemptKey struct {
	jobID   int64
	attempt int
}

type handedOff struct {
	id Identity
	at time.Time
}

func (t *Instruments) handOff(job *rivertype.JobRow, id Identity, now time.Time) {
	if _, loaded := t.handedOff.Swap(attemptKey{job.ID, job.Attempt}, handedOff{id: id, at: now}); loaded {
		return
	}
	if t.handedOffN.Add(1) < handOffSweepAt || !t.sweeping.CompareAndSwap(false, true) {
		return
	}
	defer t.sweeping.Store(false)
	t.handedOff.Range(func(key, value any) bool {
		if now.Sub(value.(handedOff).at) > handOffMaxAge { //nolint:forcetypeassert // only handedOff values
			if _, ok := t.handedOff.LoadAndDelete(key); ok {
				t.handedOffN.Add(-1)
			}
		}
		return true
	})
}

// identityAtWork returns the identity handed off by the job's fetch, or
// reads it.
func (t *Instruments) identityAtWork(job *rivertype.JobRow) Identity {
	if value, ok := t.handedOff.LoadAndDelete(attemptKey{job.ID, job.Attempt}); ok {
		t.handedOffN.Add(-1)
		return value.(handedOff).id //nolint:forcetypeassert // only handedOff values
	}
	return t.identify(job)
}

// Work runs a job's work (the engine's whole work middleware) and measures
// it: how long the job waited for its exclusive key and held it, how late a
// timer occurrence started, and what River will do with the outcome it
// returns (a retry on the job's cycle, or an incident when it was the last
// execution of a job with a job context). A panic is measured as a failure
// and goes on to River.
func (t *Instruments) Work(ctx context.Context, job *rivertype.JobRow, work func(context.Context) error) error {
	if t == nil || !t.workEnabled(ctx) {
		return work(ctx)
	}
	id := t.identityAtWork(job)
	started := time.Now()
	if job.AttemptedAt != nil {
		delay := job.AttemptedAt.Sub(job.ScheduledAt).Seconds()
		if id.ExclusiveKey != "" {
			t.exclusiveWait.Record(ctx, max(delay, 0), metric.WithAttributeSet(t.jobAttrs(job.Queue, job.Kind, &id, false, "", "")))
		}
		if id.Timer && job.Attempt == 1 {
			t.timerLateness.Record(ctx, max(delay, 0), metric.WithAttributeSet(t.jobAttrs(job.Queue, job.Kind, &id, false, "", "")))
		}
	}
	returned := false
	defer func() {
		if !returned {
			t.outcome(ctx, job, &id, errPanicked)
		}
	}()
	err := work(ctx)
	returned = true
	if id.ExclusiveKey != "" {
		t.keyHeld.Record(ctx, time.Since(started).Seconds(), metric.WithAttributeSet(t.jobAttrs(job.Queue, job.Kind, &id, false, "", "")))
	}
	t.outcome(ctx, job, &id, err)
	return err
}

var errPanicked = errors.New("telemetry: the work panicked")

// workEnabled reports whether any instrument Work records is enabled.
func (t *Instruments) workEnabled(ctx context.Context) bool {
	return t.exclusiveWait.Enabled(ctx) || t.keyHeld.Enabled(ctx) || t.timerLateness.Enabled(ctx) ||
		t.retries.Enabled(ctx) || t.incOpened.Enabled(ctx)
}

// outcome counts what River does with a failed execution: River discards a
// job whose failed execution was its last (an incident, for a job with a
// job context) and schedules a retry otherwise. Snoozes, cancellations
// (asked for by the work, or remotely) and successes count nothing here. A
// run its client gave up after a fence is counted as River would see its
// error, though the pilot drops that outcome (the leader gives the job
// back): fences are rare and counted on their own.
func (t *Instruments) outcome(ctx context.Context, job *rivertype.JobRow, id *Identity, err error) {
	if err == nil {
		return
	}
	var (
		cancelErr *rivertype.JobCancelError
		snoozeErr *rivertype.JobSnoozeError
	)
	if errors.As(err, &cancelErr) || errors.As(err, &snoozeErr) ||
		errors.Is(context.Cause(ctx), rivertype.ErrJobCancelledRemotely) { // River cancels the job
		return
	}
	if job.Attempt >= job.MaxAttempts {
		if id.HasContext {
			t.incOpened.Add(ctx, 1, metric.WithAttributeSet(t.jobAttrs(job.Queue, job.Kind, id, false, "", "")))
		}
		return
	}
	t.retries.Add(ctx, 1, metric.WithAttributeSet(t.jobAttrs(job.Queue, job.Kind, id, false, AttrRetryCycle, id.RetryCycle)))
}

// Conflict counts a conflict failure that gave its execution back.
func (t *Instruments) Conflict(ctx context.Context, job *rivertype.JobRow) {
	if t == nil || !t.conflicts.Enabled(ctx) {
		return
	}
	id := t.identify(job)
	t.conflicts.Add(ctx, 1, metric.WithAttributeSet(t.jobAttrs(job.Queue, job.Kind, &id, false, AttrRetryCycle, id.RetryCycle)))
}

// Span attributes of a job's work.
const (
	SpanProcessInstance   = attribute.Key("riverbpmn.process_instance_id")
	SpanActivity          = attribute.Key("riverbpmn.activity_id")
	SpanJobDefinition     = attribute.Key("riverbpmn.job_definition_id")
	SpanProcessDefinition = attribute.Key("riverbpmn.process_definition_key")
	SpanTenant            = attribute.Key("riverbpmn.tenant_id")
	SpanExclusiveKey      = attribute.Key("riverbpmn.exclusive.key")
	SpanExclusiveWait     = attribute.Key("riverbpmn.exclusive.wait")
	SpanTimerLateness     = attribute.Key("riverbpmn.timer.lateness")
)

// Hook returns the River hook that gives the span of a job's work (the
// current span of the work context: otelriver's, or the application's) the
// job's BPMN identity. River runs hooks inside every middleware, so the hook
// sees otelriver's span wherever its middleware is in the list. A job
// without a recording span costs one context lookup.
func (t *Instruments) Hook() rivertype.Hook { return &spanHook{t: t} }

type spanHook struct {
	river.HookDefaults

	t *Instruments
}

var _ rivertype.HookWorkBegin = (*spanHook)(nil)

// WorkBegin annotates the work's span.
func (h *spanHook) WorkBegin(ctx context.Context, job *rivertype.JobRow) error {
	span := trace.SpanFromContext(ctx)
	if h.t == nil || !span.IsRecording() {
		return nil
	}
	span.SetAttributes(h.t.SpanAttributes(job)...)
	return nil
}

// SpanAttributes returns the span attributes of a job's work: its BPMN
// identity (process instance, activity, job definition, process definition,
// tenant), and for a job that took an exclusive key the key and its wait
// from due to start (seconds); for a timer occurrence, its lateness.
func (t *Instruments) SpanAttributes(job *rivertype.JobRow) []attribute.KeyValue {
	id := t.identify(job)
	if !id.HasContext {
		return nil
	}
	kvs := []attribute.KeyValue{
		SpanProcessDefinition.String(id.ProcessDefinitionKey),
	}
	add := func(k attribute.Key, v string) {
		if v != "" {
			kvs = append(kvs, k.String(v))
		}
	}
	add(SpanProcessInstance, id.ProcessInstanceID)
	add(SpanActivity, id.ActivityID)
	add(SpanJobDefinition, id.JobDefinitionID)
	add(SpanTenant, id.TenantID)
	if job.AttemptedAt != nil {
		delay := max(job.AttemptedAt.Sub(job.ScheduledAt).Seconds(), 0)
		if id.ExclusiveKey != "" {
			kvs = append(kvs, SpanExclusiveKey.String(id.ExclusiveKey), SpanExclusiveWait.Float64(delay))
		}
		if id.Timer && job.Attempt == 1 {
			kvs = append(kvs, SpanTimerLateness.Float64(delay))
		}
	}
	return kvs
}
