package telemetry

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"go.opentelemetry.io/otel/attribute"
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
// jobs it took. Called with the result of every fetch, empty or not. The
// jobs of one series are counted by one addition: a fetch takes jobs of
// few kinds and definitions.
func (t *Instruments) Fetched(ctx context.Context, queue, order string, jobs []*rivertype.JobRow) {
	if t == nil {
		return
	}
	if t.fetches.Enabled(ctx) {
		t.fetches.Add(ctx, 1, seriesOf(t, queue, "", &Class{}, false, AttrOrder, order).add...)
	}
	if len(jobs) == 0 || !t.jobsTaken.Enabled(ctx) {
		return
	}
	var (
		taken [8]struct {
			s *series
			n int64
		}
		kinds int
	)
	for _, job := range jobs {
		c := t.jobs.Class(job)
		s := seriesOf(t, job.Queue, job.Kind, &c, t.cfg.TenantAttribute, AttrOrder, order)
		i := 0
		for i < kinds && taken[i].s != s {
			i++
		}
		switch {
		case i < kinds:
			taken[i].n++
		case kinds < len(taken):
			taken[kinds].s, taken[kinds].n = s, 1
			kinds++
		default:
			t.jobsTaken.Add(ctx, 1, s.add...)
		}
	}
	for _, k := range taken[:kinds] {
		t.jobsTaken.Add(ctx, k.n, k.s.add...)
	}
}

// Work runs a job's work (the engine's whole work middleware) and measures
// it: how long the job waited for its exclusive key and held it, how late a
// timer occurrence started, and what River will do with the outcome it
// returns (a retry on the job's cycle, or an incident when it was the last
// execution of a job with a job context). A panic is measured as a failure
// and goes on to River. A job that takes no key, is no timer occurrence and
// succeeds costs the reading of its class and nothing more.
func (t *Instruments) Work(ctx context.Context, job *rivertype.JobRow, work func(context.Context) error) error {
	if t == nil || !t.workEnabled(ctx) {
		return work(ctx)
	}
	// c's slices are parts of job.Metadata, read again after the work (for
	// its outcome): River replaces a job's metadata, it never edits it.
	c := t.jobs.Class(job)
	timerFirst := c.Timer && job.Attempt == 1
	var s *series // the job's series, for a job with something to record
	if c.Exclusive || timerFirst {
		s = seriesOf(t, job.Queue, job.Kind, &c, false, "", "")
	}
	if job.AttemptedAt != nil && s != nil {
		delay := max(job.AttemptedAt.Sub(job.ScheduledAt).Seconds(), 0)
		if c.Exclusive {
			t.exclusiveWait.Record(ctx, delay, s.record...)
		}
		if timerFirst {
			t.timerLateness.Record(ctx, delay, s.record...)
		}
	}
	var started time.Time
	held := c.Exclusive && t.keyHeld.Enabled(ctx)
	if held {
		started = time.Now()
	}
	returned := false
	defer func() {
		if !returned {
			t.outcome(ctx, job, &c, errPanicked)
		}
	}()
	err := work(ctx)
	returned = true
	if held {
		t.keyHeld.Record(ctx, time.Since(started).Seconds(), s.record...)
	}
	if err != nil {
		t.outcome(ctx, job, &c, err)
	}
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
func (t *Instruments) outcome(ctx context.Context, job *rivertype.JobRow, c *Class, err error) {
	if _, ok := errors.AsType[*rivertype.JobCancelError](err); ok {
		return
	}
	if _, ok := errors.AsType[*rivertype.JobSnoozeError](err); ok {
		return
	}
	if errors.Is(context.Cause(ctx), rivertype.ErrJobCancelledRemotely) { // River cancels the job
		return
	}
	if job.Attempt >= job.MaxAttempts {
		if c.HasContext {
			t.incOpened.Add(ctx, 1, seriesOf(t, job.Queue, job.Kind, c, false, "", "").add...)
		}
		return
	}
	t.retries.Add(ctx, 1, seriesOf(t, job.Queue, job.Kind, c, false, AttrRetryCycle, c.RetryCycle).add...)
}

// Conflict counts a conflict failure that gave its execution back.
func (t *Instruments) Conflict(ctx context.Context, job *rivertype.JobRow) {
	if t == nil || !t.conflicts.Enabled(ctx) {
		return
	}
	c := t.jobs.Class(job)
	t.conflicts.Add(ctx, 1, seriesOf(t, job.Queue, job.Kind, &c, false, AttrRetryCycle, c.RetryCycle).add...)
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
	id := t.jobs.Identity(job)
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
