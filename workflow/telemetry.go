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
// (compactContext); any other form through
// metadataContextFields.
func (e *Engine) jobIdentity(job *rivertype.JobRow) telemetry.Identity {
	var elements [len(compactFields)]json.RawMessage
	found, ok := compactContext(job.Metadata, &elements)
	if ok && !found {
		return telemetry.Identity{} // a plain River job
	}
	if ok {
		return e.identityOf(func(name string) json.RawMessage {
			if i := slices.Index(compactFields[:], name); i >= 0 {
				return elements[i]
			}
			return nil
		})
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
	var elements [len(compactFields)]json.RawMessage
	found, ok := compactContext(job.Metadata, &elements)
	if !ok {
		return telemetry.ClassOf(e.jobIdentity(job))
	}
	if !found {
		return telemetry.Class{} // a plain River job
	}
	var texts [len(compactFields)][]byte
	for i, element := range elements {
		if len(element) > 0 && element[0] == '"' { // other values read as ""
			if texts[i] = element[1 : len(element)-1]; !isASCII(texts[i]) && !utf8.Valid(texts[i]) {
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

// isASCII reports whether text has only ASCII bytes (valid UTF-8).
func isASCII(text []byte) bool {
	for _, c := range text {
		if c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// compactContext finds a job's context in its metadata as
// storedJobContext does (the value of MetadataKey, the last of duplicate
// keys, spelled exactly; null is none) and splits it as compactElements
// does, in one pass over the bytes and without allocating. found is false
// when metadata has no job context. ok is false when compactContext cannot
// tell: metadata is not an object, one of its keys has escapes, or the
// context is not in the compact form with plain strings; the caller then
// reads the metadata the general way. Metadata is valid JSON (River's
// column is jsonb): what is not is read as far as it can be, not refused.
func compactContext(metadata []byte, elements *[len(compactFields)]json.RawMessage) (found, ok bool) {
	if !containsQuoted(metadata, MetadataKey) {
		return false, true // fast path: most River jobs have no job context
	}
	i := skipJSONSpace(metadata, 0)
	if i >= len(metadata) || metadata[i] != '{' {
		return false, false
	}
	i = skipJSONSpace(metadata, i+1)
	if i < len(metadata) && metadata[i] == '}' {
		return false, true
	}
	for i < len(metadata) {
		if metadata[i] != '"' {
			return false, false
		}
		end := skipJSONString(metadata, i)
		if end < 0 || bytes.IndexByte(metadata[i:end], '\\') >= 0 {
			return false, false
		}
		name := metadata[i+1 : end-1]
		if i = skipJSONSpace(metadata, end); i >= len(metadata) || metadata[i] != ':' {
			return false, false
		}
		i = skipJSONSpace(metadata, i+1)
		switch {
		case string(name) != MetadataKey:
			i = skipJSONValue(metadata, i)
		case bytes.HasPrefix(metadata[i:], []byte("null")):
			found = false
			i += len("null")
		default:
			*elements = [len(compactFields)]json.RawMessage{}
			found = true
			i = compactElementsAt(metadata, i, elements)
		}
		if i < 0 {
			return false, false
		}
		if i = skipJSONSpace(metadata, i); i >= len(metadata) {
			return false, false
		}
		switch metadata[i] {
		case '}':
			return found, true
		case ',':
			i = skipJSONSpace(metadata, i+1)
		default:
			return false, false
		}
	}
	return false, false
}

// containsQuoted reports whether data contains key between double quotes,
// without allocating.
func containsQuoted(data []byte, key string) bool {
	for {
		i := bytes.Index(data, []byte(key)) // no allocation: the conversion does not escape
		if i < 0 {
			return false
		}
		if i > 0 && i+len(key) < len(data) && data[i-1] == '"' && data[i+len(key)] == '"' {
			return true
		}
		data = data[i+1:]
	}
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
			if i = skipJSONString(data, i); i < 0 {
				return -1
			}
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

// skipJSONString returns the index just past the JSON string at data[i],
// or -1 when it does not end.
func skipJSONString(data []byte, i int) int {
	for i++; i < len(data); i++ {
		switch data[i] {
		case '"':
			return i + 1
		case '\\':
			i++ // the escaped character
		}
	}
	return -1
}

// compactElementsAt splits the compact job context (a JSON array) at
// data[i] into elements, nil for null, when every element is a string
// without escapes, a number, true, false or null; elements past the known
// fields are skipped. It returns the index just past the array, or -1 for
// anything else (the caller then reads the context the general way). One
// pass over the bytes, without allocating.
func compactElementsAt(data []byte, i int, elements *[len(compactFields)]json.RawMessage) int {
	if i >= len(data) || data[i] != '[' {
		return -1
	}
	if i = skipJSONSpace(data, i+1); i < len(data) && data[i] == ']' {
		return i + 1
	}
	for n := 0; i < len(data); n++ {
		start := i
		switch c := data[i]; {
		case c == '"':
			for i++; i < len(data) && data[i] != '"'; i++ {
				if data[i] == '\\' {
					return -1
				}
			}
			if i >= len(data) {
				return -1
			}
			i++
		case c == 'n' || c == 't' || c == 'f' || c == '-' || (c >= '0' && c <= '9'):
			for i < len(data) && data[i] != ',' && data[i] != ']' && data[i] != '}' && data[i] != ' ' && data[i] != '\t' && data[i] != '\n' && data[i] != '\r' {
				i++
			}
		default:
			return -1
		}
		if n < len(elements) {
			if element := data[start:i]; string(element) != "null" {
				elements[n] = element
			}
		}
		if i = skipJSONSpace(data, i); i >= len(data) {
			return -1
		}
		switch data[i] {
		case ',':
			i = skipJSONSpace(data, i+1)
		case ']':
			return i + 1
		default:
			return -1
		}
	}
	return -1
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
