package workflow

// Telemetry (Config.Telemetry): how the engine feeds package telemetry's
// instruments. The engine reads each job's identity from its job context
// (jobIdentity) and names each driver's acquisition order; the hooks into
// the fetch, the work middleware, the retry bookkeeping, liveness, expiry
// and incidents are single calls into telemetry.Instruments.

import (
	"bytes"

	"github.com/riverqueue/river/rivershared/startstop"
	"github.com/riverqueue/river/rivertype"

	"github.com/riverbpmn/riverbpmn/exclusive"
	"github.com/riverbpmn/riverbpmn/telemetry"
)

// jobIdentity reads what the instruments need from a job's context, as the
// SQL accessors of migration riverbpmn/016 read single fields; a job whose
// context cannot be read is a plain job to them.
func (e *Engine) jobIdentity(job *rivertype.JobRow) telemetry.Identity {
	fields, found, err := metadataContextFields(job.Metadata)
	if !found || err != nil {
		return telemetry.Identity{}
	}
	str := func(name string) string {
		s, _ := plainJSONString(fields.field(name))
		return s
	}
	id := telemetry.Identity{
		HasContext:           true,
		ProcessInstanceID:    str("process_instance_id"),
		ActivityID:           str("activity_id"),
		JobDefinitionID:      str("job_definition_id"),
		ProcessDefinitionKey: str("process_definition_key"),
		TenantID:             str("tenant_id"),
		RetryCycle:           str("retry_cycle"),
		Timer:                str("job_type") == JobTypeTimer,
	}
	exclusiveFlag := bytes.Equal(bytes.TrimSpace(fields.field("exclusive")), []byte("true"))
	root := str("root_process_instance_id")
	if root == "" {
		root = id.ProcessInstanceID
	}
	id.ExclusiveKey, _ = exclusive.Key(e.config.ExclusiveScope, exclusiveFlag, id.ProcessInstanceID, root)
	return id
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
