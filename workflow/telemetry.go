package workflow

// Telemetry (Config.Telemetry): how the engine feeds package telemetry's
// instruments. The engine reads each job's identity from its job context
// (jobIdentity) and names each driver's acquisition order; the hooks into
// the fetch, the work middleware, the retry bookkeeping, liveness, expiry
// and incidents are single calls into telemetry.Instruments.

import (
	"bytes"
	"encoding/json"

	"github.com/riverqueue/river/rivershared/startstop"
	"github.com/riverqueue/river/rivertype"

	"github.com/riverbpmn/riverbpmn/exclusive"
	"github.com/riverbpmn/riverbpmn/internal/jobctx"
	"github.com/riverbpmn/riverbpmn/telemetry"
)

// telemetryJobs reads jobs for the engine's instruments (telemetry.JobReader).
type telemetryJobs struct{ e *Engine }

// Identity reads a job's whole identity.
func (j telemetryJobs) Identity(job *rivertype.JobRow) telemetry.Identity {
	return j.e.jobIdentity(job)
}

// Class reads the bounded part of a job's identity.
func (j telemetryJobs) Class(job *rivertype.JobRow) telemetry.Class { return j.e.jobClass(job) }

// jobIdentity reads what the instruments need from a job's context, as the
// SQL accessors of migration riverbpmn/028 read single fields; a job whose
// context cannot be read is a plain job to them. The labelled form and the
// array form with plain strings are read without building maps
// (jobctx.Read); any other form through metadataContextFields.
func (e *Engine) jobIdentity(job *rivertype.JobRow) telemetry.Identity {
	var c jobctx.Text
	found, ok := jobctx.Read(job.Metadata, &c)
	if ok && !found {
		return telemetry.Identity{} // a plain River job
	}
	if ok {
		return e.identityFrom(func(position int) string { return string(c.Texts[position]) }, c.Exclusive)
	}
	fields, found, err := metadataContextFields(job.Metadata)
	if !found || err != nil {
		return telemetry.Identity{}
	}
	return e.identityOf(fields.field)
}

// identityOf builds an identity from a reader of the context's fields
// (contextFields.field), the general reader.
func (e *Engine) identityOf(field func(name string) json.RawMessage) telemetry.Identity {
	str := func(position int) string {
		raw := field(jobctx.Names[position])
		if s, ok := jobctx.PlainString(raw); ok {
			return s
		}
		var s string
		if raw != nil && json.Unmarshal(raw, &s) == nil {
			return s // a string with escapes
		}
		return "" // absent, null or not a string
	}
	return e.identityFrom(str, bytes.Equal(bytes.TrimSpace(field("exclusive")), []byte("true")))
}

// identityFrom builds an identity from the string fields of a context by
// position (jobctx.Names, "" for what is not a string) and its exclusive
// flag.
func (e *Engine) identityFrom(str func(position int) string, exclusiveFlag bool) telemetry.Identity {
	id := telemetry.Identity{
		HasContext:           true,
		ProcessInstanceID:    str(jobctx.Instance),
		ActivityID:           str(jobctx.Activity),
		JobDefinitionID:      str(jobctx.Job),
		ProcessDefinitionKey: str(jobctx.Process),
		TenantID:             str(jobctx.Tenant),
		RetryCycle:           str(jobctx.Retry),
		Timer:                str(jobctx.Type) == JobTypeTimer,
	}
	root := str(jobctx.Root)
	if root == "" {
		root = id.ProcessInstanceID
	}
	id.ExclusiveKey, _ = exclusive.Key(e.config.ExclusiveScope, exclusiveFlag, id.ProcessInstanceID, root)
	return id
}

// jobClass reads the bounded part of a job's identity, what jobIdentity
// reads (telemetry.ClassOf), without allocating: its byte slices are parts
// of the job's metadata. A context jobctx.Read cannot read is read by
// jobIdentity.
func (e *Engine) jobClass(job *rivertype.JobRow) telemetry.Class {
	var c jobctx.Text
	found, ok := jobctx.Read(job.Metadata, &c)
	if !ok {
		return telemetry.ClassOf(e.jobIdentity(job))
	}
	if !found {
		return telemetry.Class{} // a plain River job
	}
	// exclusive.Key decides whether the job takes a key: it needs to know
	// only which identifiers are empty.
	nonEmpty := func(text []byte) string {
		if len(text) == 0 {
			return ""
		}
		return "x"
	}
	root := c.Texts[jobctx.Root]
	if len(root) == 0 {
		root = c.Texts[jobctx.Instance]
	}
	_, takesKey := exclusive.Key(e.config.ExclusiveScope, c.Exclusive, nonEmpty(c.Texts[jobctx.Instance]), nonEmpty(root))
	return telemetry.Class{
		HasContext:           true,
		Timer:                string(c.Texts[jobctx.Type]) == JobTypeTimer,
		Exclusive:            takesKey,
		JobDefinitionID:      c.Texts[jobctx.Job],
		ProcessDefinitionKey: c.Texts[jobctx.Process],
		TenantID:             c.Texts[jobctx.Tenant],
		RetryCycle:           c.Texts[jobctx.Retry],
	}
}

// acquisitionOrder names a driver's acquisition order for the instruments
// (riverbpmn.acquisition.order).
func acquisitionOrder(acq *Acquisition) string {
	var parts []string
	if acq.TimersFirst {
		parts = append(parts, telemetry.OrderTimersFirst)
	}
	if acq.ByDueDate {
		parts = append(parts, telemetry.OrderDueDate)
	}
	if acq.ByPriority {
		parts = append(parts, telemetry.OrderPriority)
	}
	if acq.FairByTenant {
		parts = append(parts, telemetry.OrderFair)
	}
	return telemetry.Order(parts...)
}

// telemetry returns the instruments of the driver's engine; nil (recording
// nothing) for a driver without one.
func (d *Driver) telemetry() *telemetry.Instruments {
	if d.engine == nil {
		return nil
	}
	return d.engine.tel
}

// telemetryServices returns the service that makes the elected leader report
// the database figures (PluginMaintenanceServices).
func (e *Engine) telemetryServices() []startstop.Service {
	if leader := e.tel.Leader(e.config.Schema); leader != nil {
		return []startstop.Service{leader}
	}
	return nil
}
