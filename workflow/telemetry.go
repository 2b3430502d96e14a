package workflow

// Telemetry (Config.Telemetry): how the engine feeds package telemetry's
// instruments. The engine reads each job's identity from its job context
// (jobIdentity) and names each driver's acquisition order; the hooks into
// the fetch, the work middleware, the retry bookkeeping, liveness, expiry
// and incidents are single calls into telemetry.Instruments.

import (
	"bytes"
	"encoding/json"
	"slices"

	"github.com/riverqueue/river/rivershared/startstop"
	"github.com/riverqueue/river/rivertype"

	"github.com/riverbpmn/riverbpmn/exclusive"
	"github.com/riverbpmn/riverbpmn/telemetry"
)

// jobIdentity reads what the instruments need from a job's context, as the
// SQL accessors of migration riverbpmn/016 read single fields; a job whose
// context cannot be read is a plain job to them. The compact form with
// plain strings (what the engine writes) is read without building maps
// (compactIdentity); any other form through metadataContextFields.
func (e *Engine) jobIdentity(job *rivertype.JobRow) telemetry.Identity {
	if !bytes.Contains(job.Metadata, []byte(`"`+MetadataKey+`"`)) {
		return telemetry.Identity{} // a plain River job
	}
	var stored struct {
		Context json.RawMessage `json:"bpmn"`
	}
	if err := json.Unmarshal(job.Metadata, &stored); err == nil {
		if elements, ok := compactElements(stored.Context); ok {
			return e.identityOf(func(name string) json.RawMessage {
				if i := slices.Index(compactFields[:], name); i >= 0 && i < len(elements) {
					return elements[i]
				}
				return nil
			})
		}
	}
	fields, found, err := metadataContextFields(job.Metadata)
	if !found || err != nil {
		return telemetry.Identity{}
	}
	return e.identityOf(fields.field)
}

// identityOf builds an identity from a reader of the context's fields.
func (e *Engine) identityOf(field func(name string) json.RawMessage) telemetry.Identity {
	str := func(name string) string {
		raw := field(name)
		if s, ok := plainJSONString(raw); ok {
			return s
		}
		var s string
		if raw != nil && json.Unmarshal(raw, &s) == nil {
			return s // a string with escapes
		}
		return ""
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
	exclusiveFlag := bytes.Equal(bytes.TrimSpace(field("exclusive")), []byte("true"))
	root := str("root_process_instance_id")
	if root == "" {
		root = id.ProcessInstanceID
	}
	id.ExclusiveKey, _ = exclusive.Key(e.config.ExclusiveScope, exclusiveFlag, id.ProcessInstanceID, root)
	return id
}

// compactElements splits a compact job context (a JSON array) into its
// elements, nil for null, when every element is a string without escapes, a
// number, true, false or null; ok is false for anything else (the caller
// then reads the context the general way).
func compactElements(raw json.RawMessage) (elements []json.RawMessage, ok bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) < 2 || raw[0] != '[' || raw[len(raw)-1] != ']' {
		return nil, false
	}
	rest := bytes.TrimSpace(raw[1 : len(raw)-1])
	for len(rest) > 0 {
		var element []byte
		switch c := rest[0]; {
		case c == '"':
			end := bytes.IndexByte(rest[1:], '"')
			if end < 0 || bytes.IndexByte(rest[1:end+1], '\\') >= 0 {
				return nil, false
			}
			element, rest = rest[:end+2], rest[end+2:]
		case c == 'n' || c == 't' || c == 'f' || c == '-' || (c >= '0' && c <= '9'):
			end := bytes.IndexByte(rest, ',')
			if end < 0 {
				end = len(rest)
			}
			element, rest = bytes.TrimSpace(rest[:end]), rest[end:]
			if bytes.Equal(element, []byte("null")) {
				element = nil
			}
		default:
			return nil, false
		}
		elements = append(elements, element)
		rest = bytes.TrimSpace(rest)
		if len(rest) > 0 {
			if rest[0] != ',' {
				return nil, false
			}
			rest = bytes.TrimSpace(rest[1:])
		}
	}
	return elements, true
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
