package workflow

// Telemetry (Config.Telemetry): how the engine feeds package telemetry's
// instruments. The engine reads each job's identity from its job context
// (jobIdentity) and names each driver's acquisition order; the hooks into
// the fetch, the work middleware, the retry bookkeeping, liveness, expiry
// and incidents are single calls into telemetry.Instruments.

import (
	"bytes"
	"encoding/json"
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
// SQL accessors of migration riverbpmn/028 read single fields; a job whose
// context cannot be read is a plain job to them. The labelled form and the
// array form with plain strings are read without building maps
// (readJobContext); any other form through metadataContextFields.
func (e *Engine) jobIdentity(job *rivertype.JobRow) telemetry.Identity {
	var c contextText
	found, ok := readJobContext(job.Metadata, &c)
	if ok && !found {
		return telemetry.Identity{} // a plain River job
	}
	if ok {
		return e.identityFrom(func(position int) string { return string(c.texts[position]) }, c.exclusive)
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
		raw := field(compactFields[position])
		if s, ok := plainJSONString(raw); ok {
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
// position (compactFields, "" for what is not a string) and its exclusive
// flag.
func (e *Engine) identityFrom(str func(position int) string, exclusiveFlag bool) telemetry.Identity {
	id := telemetry.Identity{
		HasContext:           true,
		ProcessInstanceID:    str(processInstancePosition),
		ActivityID:           str(activityPosition),
		JobDefinitionID:      str(jobDefinitionPosition),
		ProcessDefinitionKey: str(processDefinitionPosition),
		TenantID:             str(tenantPosition),
		RetryCycle:           str(retryCyclePosition),
		Timer:                str(jobTypePosition) == JobTypeTimer,
	}
	root := str(rootProcessInstancePosition)
	if root == "" {
		root = id.ProcessInstanceID
	}
	id.ExclusiveKey, _ = exclusive.Key(e.config.ExclusiveScope, exclusiveFlag, id.ProcessInstanceID, root)
	return id
}

// The positions (compactFields) of the string fields the instruments read.
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
// of the job's metadata. A context readJobContext cannot read is read by
// jobIdentity.
func (e *Engine) jobClass(job *rivertype.JobRow) telemetry.Class {
	var c contextText
	found, ok := readJobContext(job.Metadata, &c)
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
	root := c.texts[rootProcessInstancePosition]
	if len(root) == 0 {
		root = c.texts[processInstancePosition]
	}
	_, takesKey := exclusive.Key(e.config.ExclusiveScope, c.exclusive, nonEmpty(c.texts[processInstancePosition]), nonEmpty(root))
	return telemetry.Class{
		HasContext:           true,
		Timer:                string(c.texts[jobTypePosition]) == JobTypeTimer,
		Exclusive:            takesKey,
		JobDefinitionID:      c.texts[jobDefinitionPosition],
		ProcessDefinitionKey: c.texts[processDefinitionPosition],
		TenantID:             c.texts[tenantPosition],
		RetryCycle:           c.texts[retryCyclePosition],
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

// contextText is a job context as the instruments read it
// (contextFields.field, then a string or the exclusive flag): the text of
// each string field at its position (compactFields), nil when the field is
// absent, null or not a string, with the labelled form's defaults filled in;
// its slices are parts of the job's metadata.
type contextText struct {
	texts [len(compactFields)][]byte
	// exclusive is true when the exclusive field is JSON true, or absent
	// from a labelled context with an instance.
	exclusive bool
}

// contextValues is a stored job context split into its fields' JSON values
// in one pass: by position (compactFields) for the array form, by label
// (contextLabels) for the labelled form.
type contextValues struct {
	// values are the fields' JSON values, nil when absent or null.
	values [len(compactFields)]json.RawMessage
	// labelled is true for the labelled form; present then says which
	// labels it holds (null included).
	labelled bool
	present  [len(compactFields)]bool
}

// readJobContext finds a job's context in its metadata as storedJobContext
// does (the value of MetadataKey, the last of duplicate keys, spelled
// exactly; null is none) and reads it as metadataContextFields and
// contextFields.field do, in one pass over the bytes and without
// allocating. found is false when metadata has no job context. ok is false
// when readJobContext cannot tell: metadata is not an object, one of its
// keys has escapes, or the context is neither the array form nor the
// labelled form with only labels as keys and, as values, strings without
// escapes in valid UTF-8, numbers, true, false or null (the object form of
// earlier migrations has keys that are not labels); the caller then reads
// the metadata the general way. Metadata is valid JSON (River's column is
// jsonb): what is not is read as far as it can be, not refused.
func readJobContext(metadata []byte, c *contextText) (found, ok bool) {
	var v contextValues
	if found, ok = splitJobContext(metadata, &v); !found || !ok {
		return found, ok
	}
	*c = contextText{exclusive: bytes.Equal(v.values[exclusivePosition], []byte("true"))}
	for i, value := range v.values {
		if len(value) > 0 && value[0] == '"' { // other values read as ""
			if c.texts[i] = value[1 : len(value)-1]; !isASCII(c.texts[i]) && !utf8.Valid(c.texts[i]) {
				return false, false // read with replacement characters
			}
		}
	}
	if !v.labelled {
		return true, true
	}
	// What the labelled form leaves out (contextFields.labelledDefault).
	if !v.present[exclusivePosition] {
		c.exclusive = v.present[processInstancePosition]
	}
	if !v.present[activityPosition] {
		if isJSONStringValue(v.values[processDefinitionPosition]) && isJSONStringValue(v.values[jobDefinitionPosition]) {
			process, job := c.texts[processDefinitionPosition], c.texts[jobDefinitionPosition]
			if len(process) > 0 && len(job) > len(process) && job[len(process)] == ':' && bytes.HasPrefix(job, process) {
				c.texts[activityPosition] = job[len(process)+1:] // derivedActivity
			}
		}
	}
	return true, true
}

// isJSONStringValue reports whether value is a JSON string.
func isJSONStringValue(value json.RawMessage) bool { return len(value) > 0 && value[0] == '"' }

// splitJobContext finds a job's context in its metadata (see
// readJobContext) and splits it into v, in one pass over the bytes and
// without allocating; ok is false when it cannot tell.
func splitJobContext(metadata []byte, v *contextValues) (found, ok bool) {
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
		case i < len(metadata) && metadata[i] == '{':
			*v = contextValues{labelled: true}
			found = true
			i = labelledValuesAt(metadata, i, v)
		default:
			*v = contextValues{}
			found = true
			i = compactElementsAt(metadata, i, &v.values)
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

// compactElementsAt splits the array form of the job context at data[i]
// into elements, nil for null, when every element is a plain value
// (scalarEnd); elements past the known fields are skipped. It returns the
// index just past the array, or -1 for anything else (the caller then reads
// the context the general way). One pass over the bytes, without
// allocating.
func compactElementsAt(data []byte, i int, elements *[len(compactFields)]json.RawMessage) int {
	if i >= len(data) || data[i] != '[' {
		return -1
	}
	if i = skipJSONSpace(data, i+1); i < len(data) && data[i] == ']' {
		return i + 1
	}
	for n := 0; i < len(data); n++ {
		start := i
		if i = scalarEnd(data, i); i < 0 {
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

// labelledValuesAt splits the labelled form of the job context at data[i]
// (a JSON object) into v by label, the last of duplicate labels, when every
// key is a label (contextLabels) without escapes and every value a plain
// value (scalarEnd). It returns the index just past the object, or -1 for
// anything else (the caller then reads the context the general way). One
// pass over the bytes, without allocating.
func labelledValuesAt(data []byte, i int, v *contextValues) int {
	if i >= len(data) || data[i] != '{' {
		return -1
	}
	if i = skipJSONSpace(data, i+1); i < len(data) && data[i] == '}' {
		return i + 1
	}
	for i < len(data) {
		if data[i] != '"' {
			return -1
		}
		end := i + 1
		for end < len(data) && data[end] != '"' && data[end] != '\\' {
			end++
		}
		if end >= len(data) || data[end] != '"' {
			return -1
		}
		position := labelPosition(data[i+1 : end])
		if position < 0 {
			return -1 // not a label: the object form of earlier migrations, or unknown
		}
		if i = skipJSONSpace(data, end+1); i >= len(data) || data[i] != ':' {
			return -1
		}
		i = skipJSONSpace(data, i+1)
		start := i
		if i = scalarEnd(data, i); i < 0 {
			return -1
		}
		v.present[position] = true
		v.values[position] = nil
		if value := data[start:i]; string(value) != "null" {
			v.values[position] = value
		}
		if i = skipJSONSpace(data, i); i >= len(data) {
			return -1
		}
		switch data[i] {
		case ',':
			i = skipJSONSpace(data, i+1)
		case '}':
			return i + 1
		default:
			return -1
		}
	}
	return -1
}

// labelPosition returns the position (compactFields) of a label of the
// labelled form (contextLabels), -1 when label is not one. A switch, which
// the compiler turns into a search by length and bytes; TestTelemetryLabels
// checks it against contextLabels.
func labelPosition(label []byte) int {
	switch string(label) { // no allocation: the conversion does not escape
	case "instance":
		return 0
	case "process":
		return 1
	case "activity":
		return 2
	case "job":
		return 3
	case "priority":
		return 4
	case "exclusive":
		return 5
	case "deployment":
		return 6
	case "type":
		return 7
	case "retry":
		return 8
	case "tenant":
		return 9
	case "root":
		return 10
	case "parent":
		return 11
	}
	return -1
}

// scalarEnd returns the index just past the plain JSON value at data[i]: a
// string without escapes, a number, true, false or null; -1 for any other
// value (an object, an array, a string with escapes).
func scalarEnd(data []byte, i int) int {
	if i >= len(data) {
		return -1
	}
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
		return i + 1
	case c == 'n' || c == 't' || c == 'f' || c == '-' || (c >= '0' && c <= '9'):
		for i < len(data) && data[i] != ',' && data[i] != ']' && data[i] != '}' && data[i] != ' ' && data[i] != '\t' && data[i] != '\n' && data[i] != '\r' {
			i++
		}
		return i
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
