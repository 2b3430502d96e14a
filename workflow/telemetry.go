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
	"unicode/utf8"

	"github.com/riverqueue/river/rivershared/startstop"
	"github.com/riverqueue/river/rivertype"

	"github.com/riverbpmn/riverbpmn/exclusive"
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
// SQL accessors of migration riverbpmn/016 read single fields; a job whose
// context cannot be read is a plain job to them. The compact form with
// plain strings (what the engine writes) is read without building maps
// (metadataValue, compactElements); any other form through
// metadataContextFields.
func (e *Engine) jobIdentity(job *rivertype.JobRow) telemetry.Identity {
	raw, found, ok := metadataValue(job.Metadata, MetadataKey)
	if ok && !found {
		return telemetry.Identity{} // a plain River job
	}
	if ok {
		var elements [len(compactFields)]json.RawMessage
		if compactElements(raw, &elements) {
			return e.identityOf(func(name string) json.RawMessage {
				if i := slices.Index(compactFields[:], name); i >= 0 {
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

// The positions of the compact form that the class of a job reads.
const (
	processInstancePosition     = 0
	processDefinitionPosition   = 1
	jobDefinitionPosition       = 3
	jobTypePosition             = 7
	retryCyclePosition          = 8
	tenantPosition              = 9
	rootProcessInstancePosition = 10
)

// jobClass reads the bounded part of a job's identity, what jobIdentity
// reads (telemetry.ClassOf), without allocating: its byte slices are parts
// of the job's metadata. A context in any form but the compact one with
// plain strings (what the engine writes) is read by jobIdentity.
func (e *Engine) jobClass(job *rivertype.JobRow) telemetry.Class {
	raw, found, ok := metadataValue(job.Metadata, MetadataKey)
	if ok && !found {
		return telemetry.Class{} // a plain River job
	}
	var elements [len(compactFields)]json.RawMessage
	if !ok || !compactElements(raw, &elements) {
		return telemetry.ClassOf(e.jobIdentity(job))
	}
	var texts [len(compactFields)][]byte
	for i, element := range elements {
		if len(element) > 0 && element[0] == '"' { // other values read as ""
			if texts[i] = element[1 : len(element)-1]; !utf8.Valid(texts[i]) {
				return telemetry.ClassOf(e.jobIdentity(job)) // read with replacement characters
			}
		}
	}
	// exclusive.Key decides whether the job takes a key: it needs to know
	// only which identifiers are empty.
	nonEmpty := func(text []byte) string {
		if len(text) == 0 {
			return ""
		}
		return "x"
	}
	root := texts[rootProcessInstancePosition]
	if len(root) == 0 {
		root = texts[processInstancePosition]
	}
	_, takesKey := exclusive.Key(e.config.ExclusiveScope, bytes.Equal(elements[exclusivePosition], []byte("true")),
		nonEmpty(texts[processInstancePosition]), nonEmpty(root))
	return telemetry.Class{
		HasContext:           true,
		Timer:                string(texts[jobTypePosition]) == JobTypeTimer,
		Exclusive:            takesKey,
		JobDefinitionID:      texts[jobDefinitionPosition],
		ProcessDefinitionKey: texts[processDefinitionPosition],
		TenantID:             texts[tenantPosition],
		RetryCycle:           texts[retryCyclePosition],
	}
}

// metadataValue returns the value of key in the JSON object metadata, as
// storedJobContext finds it (the last of duplicate keys, spelled exactly),
// without allocating. found is false when metadata has no such key. ok is
// false when metadataValue cannot tell: metadata is not an object, or one
// of its keys has escapes; the caller then reads metadata with
// encoding/json. Metadata is valid JSON (River's column is jsonb): what is
// not is read as far as it can be, not refused.
func metadataValue(metadata []byte, key string) (value []byte, found, ok bool) {
	if !bytes.Contains(metadata, []byte(`"`+key+`"`)) {
		return nil, false, true // fast path: most River jobs have no job context
	}
	i := skipJSONSpace(metadata, 0)
	if i >= len(metadata) || metadata[i] != '{' {
		return nil, false, false
	}
	i = skipJSONSpace(metadata, i+1)
	if i < len(metadata) && metadata[i] == '}' {
		return nil, false, true
	}
	for i < len(metadata) {
		if metadata[i] != '"' {
			return nil, false, false
		}
		end := bytes.IndexByte(metadata[i+1:], '"')
		if end < 0 || bytes.IndexByte(metadata[i+1:i+1+end], '\\') >= 0 {
			return nil, false, false
		}
		name := metadata[i+1 : i+1+end]
		i = skipJSONSpace(metadata, i+end+2)
		if i >= len(metadata) || metadata[i] != ':' {
			return nil, false, false
		}
		start := skipJSONSpace(metadata, i+1)
		if i = skipJSONValue(metadata, start); i < 0 {
			return nil, false, false
		}
		if string(name) == key {
			value, found = metadata[start:i], true
		}
		i = skipJSONSpace(metadata, i)
		if i >= len(metadata) {
			break
		}
		switch metadata[i] {
		case '}':
			return value, found, true
		case ',':
			i = skipJSONSpace(metadata, i+1)
		default:
			return nil, false, false
		}
	}
	return nil, false, false
}

func skipJSONSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
		i++
	}
	return i
}

// skipJSONValue returns the index just past the JSON value at data[i:], or
// -1 when it does not end.
func skipJSONValue(data []byte, i int) int {
	depth := 0
	for i < len(data) {
		switch data[i] {
		case '"':
			for i++; i < len(data) && data[i] != '"'; i++ {
				if data[i] == '\\' {
					i++ // the escaped character
				}
			}
			if i >= len(data) {
				return -1
			}
			i++ // the closing quote
		case '{', '[':
			depth++
			i++
			continue
		case '}', ']':
			if depth == 0 {
				return i // the end of the enclosing object
			}
			depth--
			i++
		case ',', ' ', '\t', '\n', '\r':
			if depth == 0 {
				return i // the end of a number or literal
			}
			i++
			continue
		default:
			i++ // inside a number or literal
			continue
		}
		if depth == 0 {
			return i // a string, object or array ended
		}
	}
	if depth > 0 {
		return -1
	}
	return i
}

// compactElements splits a compact job context (a JSON array) into
// elements, nil for null, when every element is a string without escapes, a
// number, true, false or null; elements past the known fields are skipped.
// ok is false for anything else (the caller then reads the context the
// general way).
func compactElements(raw json.RawMessage, elements *[len(compactFields)]json.RawMessage) (ok bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) < 2 || raw[0] != '[' || raw[len(raw)-1] != ']' {
		return false
	}
	rest := bytes.TrimSpace(raw[1 : len(raw)-1])
	for n := 0; len(rest) > 0; n++ {
		var element []byte
		switch c := rest[0]; {
		case c == '"':
			end := bytes.IndexByte(rest[1:], '"')
			if end < 0 || bytes.IndexByte(rest[1:end+1], '\\') >= 0 {
				return false
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
			return false
		}
		if n < len(elements) {
			elements[n] = element
		}
		rest = bytes.TrimSpace(rest)
		if len(rest) > 0 {
			if rest[0] != ',' {
				return false
			}
			rest = bytes.TrimSpace(rest[1:])
		}
	}
	return true
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
