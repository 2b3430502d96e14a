package workflow

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"unicode"
	"unicode/utf8"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/riverbpmn/riverbpmn/internal/jobctx"
	"github.com/riverbpmn/riverbpmn/priority"
)

// MetadataKey is the key of river_job.metadata under which riverbpmn keeps a
// job's BPMN identity, in the labelled form described at JobContext. River UI
// shows metadata as JSON, so the value under this key ("bpmn") is meant to
// be read by people too.
const MetadataKey = jobctx.Key

// MaxIdentifierBytes is the longest value, in bytes, of any JobContext field.
const MaxIdentifierBytes = 255

// JobContext is a job's BPMN identity: which process instance, activity and
// job definition it belongs to, and the priority and exclusivity resolved for
// it at insert. Give it to a job at insert, either from its
// args (implement JobArgsWithJobContext) or with JobContext.InsertOpts, and
// read it back in the worker with JobContextOf.
//
// # Stored form
//
// The middleware stores the resolved context in the job's metadata under
// MetadataKey as one JSON object with labels, so that a person reading the
// job in River UI sees who it is without a table of positions:
//
//	"bpmn": {"instance": "order-4711", "process": "order",
//	         "job": "order:reserve", "priority": 10,
//	         "deployment": "dep-2026-11", "tenant": "acme"}
//
// The labels are instance, process, activity, job (the job definition),
// priority, exclusive, deployment, type (the job type), retry (the retry
// cycle), tenant, root and parent. What a reader tells without it is left
// out, since River's GIN index on metadata takes one entry per label and one
// per value at every state change of a job: empty fields; the priority when
// it is 0 (JSON null: no priority, prioritised job creation switched off);
// exclusive when it is true in a context with an instance (so
// "exclusive": false marks a job that is not exclusive); the root when the
// instance is its own root; and the activity when the job definition's id is
// the process definition key, a colon and the activity id (the usual
// "order:reserve"; a job definition of that shape without an activity
// stores "activity": null). River's JobListParams.Metadata finds a job by
// its labels, for example {"bpmn": {"instance": "order-4711"}}.
//
// A schema holds one form: migration riverbpmn/028 rewrites contexts stored
// in earlier forms to the labelled one, and its SQL accessors read only
// that. Until a schema has that migration, the engine writes the array of
// migration riverbpmn/016 there (instance, process definition key,
// activity, job definition, priority, exclusive, deployment, job type, retry
// cycle, tenant, root, parent, each at its position; an absent exclusive
// means not exclusive). Go reads every form ever written: the labelled
// object, that array, and the object of migrations before 016, with the
// fields' JSON names below (it holds at least one of them, which tells it
// apart from the labelled form).
//
// Every string field is an identifier: at most MaxIdentifierBytes bytes of
// valid UTF-8 without control characters. ProcessDefinitionKey is required
// when any other identifier is set, unless JobDefinitionID is (the job
// definition's is used); a context with only Priority (or
// Exclusive, or RetryCycle) gives a plain job an explicit priority (or
// exclusivity, or retry cycle).
type JobContext struct {
	// ProcessInstanceID is the process instance the job belongs to. Empty for
	// jobs that belong to no instance, such as a timer start event.
	ProcessInstanceID string `json:"process_instance_id,omitempty"`

	// RootProcessInstanceID is the top of the instance's call hierarchy. It
	// requires ProcessInstanceID and defaults to it: a top-level instance is
	// its own root. Metadata holds it only when it differs from
	// ProcessInstanceID; JobContextOf fills it back.
	RootProcessInstanceID string `json:"root_process_instance_id,omitempty"`

	// ParentProcessInstanceID is the process instance that called this one
	// (a call activity's caller), for the instance trees of the console and
	// `riverbpmn instances tree`. It requires ProcessInstanceID and must
	// differ from it; when RootProcessInstanceID is empty, the parent is
	// taken as the root (the caller of a top-level caller). Stored when set,
	// labelled "parent".
	ParentProcessInstanceID string `json:"parent_process_instance_id,omitempty"`

	// ProcessDefinitionKey is the key of the process definition (required).
	ProcessDefinitionKey string `json:"process_definition_key"`

	// ActivityID is the BPMN activity that created the job.
	ActivityID string `json:"activity_id,omitempty"`

	// JobDefinitionID is the job definition the job was created from. Left
	// empty at insert in a context with a ProcessDefinitionKey, it is found by
	// the job's River kind: when exactly one declared job definition has the
	// job's kind and process definition key (and activity id, where the
	// context gives one), the job gets that one;
	// when several match, the insert fails with an error naming the kind and
	// the candidates; when none does, the job has no job definition (no
	// activity priority, retry cycle or overriding priority applies).
	JobDefinitionID string `json:"job_definition_id,omitempty"`

	// DeploymentID is the deployment that holds the process definition. It
	// defaults to the declared process definition's.
	DeploymentID string `json:"deployment_id,omitempty"`

	// JobType says what kind of BPMN job this is, such as JobTypeTimer or
	// JobTypeAsync; clients that acquire timers first look at it.
	JobType string `json:"job_type,omitempty"`

	// Priority is the job's int64 priority, higher first. Read back from a
	// job, it is the priority the job was given at insert (or set later).
	// Given at insert, it is used only when no declaration decides:
	// overriding priority > activity > process > this value > 0. Nil when
	// prioritised job creation is switched off.
	Priority *int64 `json:"priority,omitempty"`

	// Exclusive says whether the job runs exclusively within its process
	// instance. Read back from a job, it is the resolved flag. Given at
	// insert, it is used only for jobs without a job definition, whose
	// declaration decides otherwise; the default is true.
	Exclusive *bool `json:"exclusive,omitempty"`

	// RetryCycle is the job's ISO-8601 retry time cycle, such as "R3/PT1S"
	// (see RetryPolicy). Read back from a job, it is the cycle resolved at
	// insert, in canonical form; empty means no cycle (3 executions, retried
	// at once). Given at insert, it is used only when the job definition
	// declares no cycle: job definition > this value >
	// Config.Retry.DefaultCycle > none. An invalid value fails the insert.
	// The resolved cycle sets the job's River MaxAttempts (no cycle: 3),
	// replacing any given in InsertOpts.
	RetryCycle string `json:"retry_cycle,omitempty"`

	// TenantID is the tenant the job belongs to, for clients that fetch
	// fairly across tenants (Acquisition.FairByTenant). It defaults to the
	// declared process definition's (ProcessDefinition.TenantID). Empty: the
	// job belongs to no tenant (jobs without a tenant are one tenant of
	// their own to a fair client).
	TenantID string `json:"tenant_id,omitempty"`
}

// Job types known to acquisition (JobContext.JobType).
const (
	// JobTypeTimer ("timer") is a timer job (timer events, timer start
	// events).
	JobTypeTimer = jobctx.TypeTimer
	// JobTypeAsync is an asynchronous continuation.
	JobTypeAsync = "async"
)

// JobArgsWithJobContext is implemented by job args that know their own job
// context, the way river.JobArgsWithInsertOpts lets args carry insert options.
// Every insert call then attaches the context without further ado.
type JobArgsWithJobContext interface {
	river.JobArgs

	// JobContext returns the job's BPMN identity.
	JobContext() JobContext
}

// ErrNoJobContext is returned by JobContextOf for a job that has no job
// context.
var ErrNoJobContext = errors.New("workflow: job has no job context")

// JobContextError reports an invalid job context value. It names the field
// (as stored in metadata) and the offending value.
type JobContextError struct {
	// Field is the JSON name of the field, like "process_instance_id".
	Field string
	// Value is the rejected value.
	Value string
	// Problem says what is wrong with Value.
	Problem string
}

func (e *JobContextError) Error() string {
	return fmt.Sprintf("workflow: invalid job context: %s %s: %s", e.Field, quoteForError(e.Value), e.Problem)
}

// quoteForError quotes a value for an error message, shortening long values
// so that a 10 kB mistake does not become a 10 kB log line.
func quoteForError(value string) string {
	const maxShown = 64
	if len(value) <= maxShown {
		return fmt.Sprintf("%q", value)
	}
	cut := maxShown
	for cut > 0 && !utf8.RuneStart(value[cut]) {
		cut--
	}
	return fmt.Sprintf("%q... (%d bytes)", value[:cut], len(value))
}

// Validate reports the first invalid field of jc as a *JobContextError.
// Inserts validate for you; call it to fail earlier.
func (jc JobContext) Validate() error {
	hasIdentity := jc.ProcessInstanceID != "" || jc.RootProcessInstanceID != "" || jc.ParentProcessInstanceID != "" || jc.ProcessDefinitionKey != "" ||
		jc.ActivityID != "" || jc.JobDefinitionID != "" || jc.DeploymentID != "" || jc.JobType != "" || jc.TenantID != ""
	if !hasIdentity && jc.Priority == nil && jc.Exclusive == nil && jc.RetryCycle == "" {
		return &JobContextError{Field: "process_definition_key", Value: "", Problem: "is required and must not be empty (the job context is empty)"}
	}
	fields := []struct {
		name, value string
		required    bool
	}{
		{"process_instance_id", jc.ProcessInstanceID, false},
		{"root_process_instance_id", jc.RootProcessInstanceID, false},
		{"parent_process_instance_id", jc.ParentProcessInstanceID, false},
		// A job definition implies its process definition (the engine fills
		// it in); otherwise an identity needs its process definition.
		{"process_definition_key", jc.ProcessDefinitionKey, hasIdentity && jc.JobDefinitionID == ""},
		{"activity_id", jc.ActivityID, false},
		{"job_definition_id", jc.JobDefinitionID, false},
		{"deployment_id", jc.DeploymentID, false},
		{"job_type", jc.JobType, false},
		{"tenant_id", jc.TenantID, false},
	}
	for _, f := range fields {
		if problem := identifierProblem(f.value, f.required); problem != "" {
			return &JobContextError{Field: f.name, Value: f.value, Problem: problem}
		}
	}
	if jc.RootProcessInstanceID != "" && jc.ProcessInstanceID == "" {
		return &JobContextError{
			Field: "root_process_instance_id", Value: jc.RootProcessInstanceID,
			Problem: "requires process_instance_id, which is empty",
		}
	}
	if jc.ParentProcessInstanceID != "" {
		if jc.ProcessInstanceID == "" {
			return &JobContextError{
				Field: "parent_process_instance_id", Value: jc.ParentProcessInstanceID,
				Problem: "requires process_instance_id, which is empty",
			}
		}
		if jc.ParentProcessInstanceID == jc.ProcessInstanceID {
			return &JobContextError{
				Field: "parent_process_instance_id", Value: jc.ParentProcessInstanceID,
				Problem: "is the process instance itself (an instance does not call itself)",
			}
		}
	}
	return nil
}

// identifierProblem says what is wrong with an identifier, or "" if nothing.
func identifierProblem(value string, required bool) string {
	switch {
	case value == "":
		if required {
			return "is required and must not be empty"
		}
		return ""
	case len(value) > MaxIdentifierBytes:
		return fmt.Sprintf("is %d bytes long, more than the maximum of %d", len(value), MaxIdentifierBytes)
	case !utf8.ValidString(value):
		return "is not valid UTF-8"
	}
	for _, r := range value {
		switch {
		case unicode.IsControl(r):
			return fmt.Sprintf("contains control character %U", r)
		case r == utf8.RuneError:
			// json.Marshal turns invalid UTF-8 into U+FFFD; rejecting it
			// means a mangled identifier can never be stored silently.
			return "contains U+FFFD, the replacement character for invalid UTF-8"
		}
	}
	return ""
}

// InsertOpts returns insert options that carry jc in their metadata. Set any
// other option on the result as usual; to combine jc with metadata of your own,
// use AddToMetadata. jc is validated when the job is inserted.
func (jc JobContext) InsertOpts() *river.InsertOpts {
	metadata, err := jc.AddToMetadata(nil)
	if err != nil { // cannot happen: empty metadata is always an object
		panic(err)
	}
	return &river.InsertOpts{Metadata: metadata}
}

// AddToMetadata returns metadata (a JSON object, or empty) with jc stored
// under MetadataKey in the labelled form (see JobContext), replacing any
// context already there.
func (jc JobContext) AddToMetadata(metadata []byte) ([]byte, error) {
	encoded, err := jc.labelledJSON(false)
	if err != nil {
		return nil, err
	}
	return setMetadataKey(metadata, encoded)
}

// addResolvedToMetadata is AddToMetadata for a context the middleware
// resolved, in the labelled form or, for a schema without migration
// riverbpmn/028, the array: a nil priority there means prioritised job
// creation is switched off, and is stored as null (absent would read as 0).
func (jc JobContext) addResolvedToMetadata(metadata []byte, labelled bool) ([]byte, error) {
	var (
		encoded json.RawMessage
		err     error
	)
	if labelled {
		encoded, err = jc.labelledJSON(true)
	} else {
		encoded, err = jc.compactJSON()
	}
	if err != nil {
		return nil, err
	}
	return setMetadataKey(metadata, encoded)
}

// labelledJSON encodes jc in the labelled form (see JobContext): an object
// of its fields under jobctx.Labels, in the order of jobctx.Names, without
// what a reader tells without it (storedPresence; resolved says whether the
// middleware resolved jc).
func (jc JobContext) labelledJSON(resolved bool) (json.RawMessage, error) {
	jc = jc.stored()
	strs := jc.compactStrings()
	buf := make([]byte, 0, 160)
	buf = append(buf, '{')
	for i, presence := range jc.storedPresence(resolved) {
		if presence == fieldOmitted {
			continue
		}
		if len(buf) > 1 {
			buf = append(buf, ',')
		}
		buf = append(buf, '"')
		buf = append(buf, jobctx.Labels[i]...)
		buf = append(buf, '"', ':')
		switch {
		case presence == fieldNull:
			buf = append(buf, "null"...)
		case i == jobctx.Priority:
			buf = strconv.AppendInt(buf, *jc.Priority, 10)
		case i == jobctx.Exclusive:
			buf = strconv.AppendBool(buf, *jc.Exclusive)
		default:
			var err error
			if buf, err = appendJSONString(buf, *strs[i]); err != nil {
				return nil, err
			}
		}
	}
	return append(buf, '}'), nil
}

// How a field of the labelled form is stored (storedPresence).
const (
	fieldOmitted = iota // left out: empty, or what a reader tells without it
	fieldValue          // its value
	fieldNull           // JSON null: empty where a reader would otherwise derive a value
)

// storedPresence says how each field of jc (already stored()) is written in
// the labelled form, by position. Left out: empty fields; a priority of 0
// and, in a context with an instance, an exclusive that is true (the
// defaults: absent reads as them); a nil priority or exclusive (not given:
// the middleware resolves them), except a nil priority of a resolved
// context, written as null; and the activity when the job definition's id
// is "<process definition key>:<activity id>" (derivedActivity). An empty
// activity that would be derived so is written as null.
func (jc JobContext) storedPresence(resolved bool) [len(jobctx.Names)]int {
	var presence [len(jobctx.Names)]int
	for i, str := range jc.compactStrings() {
		if str != nil && *str != "" {
			presence[i] = fieldValue
		}
	}
	switch {
	case jc.Priority == nil && resolved:
		// Prioritised job creation switched off: none, unlike an absent
		// priority.
		presence[jobctx.Priority] = fieldNull
	case jc.Priority != nil && *jc.Priority != priority.Default:
		presence[jobctx.Priority] = fieldValue
	}
	switch {
	case jc.Exclusive == nil:
		// Not given (a context not resolved yet, which the middleware
		// resolves from the declarations, exclusive by default).
	case !*jc.Exclusive || jc.ProcessInstanceID == "":
		// Absent reads as true only in a context with an instance (whose
		// jobs have an exclusive key).
		presence[jobctx.Exclusive] = fieldValue
	}
	if derived, ok := jobctx.DerivedActivity(jc.ProcessDefinitionKey, jc.JobDefinitionID); ok {
		switch jc.ActivityID {
		case derived:
			presence[jobctx.Activity] = fieldOmitted
		case "":
			presence[jobctx.Activity] = fieldNull
		}
	}
	return presence
}

// compactJSON encodes jc in the array form of migration riverbpmn/016 (see
// JobContext), which the engine writes to a schema without migration
// riverbpmn/028: its fields in the order of jobctx.Names, empty ones null,
// trailing nulls left out, the root left out when it is the instance itself.
func (jc JobContext) compactJSON() (json.RawMessage, error) {
	jc = jc.stored()
	strs := jc.compactStrings()
	present := func(i int) bool {
		switch i {
		case jobctx.Priority:
			return jc.Priority != nil
		case jobctx.Exclusive:
			return jc.Exclusive != nil
		}
		return *strs[i] != ""
	}
	n := len(strs)
	for n > 0 && !present(n-1) {
		n--
	}
	buf := make([]byte, 0, 128)
	buf = append(buf, '[')
	for i := range n {
		if i > 0 {
			buf = append(buf, ',')
		}
		switch {
		case !present(i):
			buf = append(buf, "null"...)
		case i == jobctx.Priority:
			buf = strconv.AppendInt(buf, *jc.Priority, 10)
		case i == jobctx.Exclusive:
			buf = strconv.AppendBool(buf, *jc.Exclusive)
		default:
			var err error
			if buf, err = appendJSONString(buf, *strs[i]); err != nil {
				return nil, err
			}
		}
	}
	return append(buf, ']'), nil
}

// compactStrings returns jc's string fields at their positions in the
// compact form (jobctx.Names), nil at jobctx.Priority and jobctx.Exclusive:
// the one list of that order for the encoder and the decoder.
func (jc *JobContext) compactStrings() [len(jobctx.Names)]*string {
	return [len(jobctx.Names)]*string{
		&jc.ProcessInstanceID, &jc.ProcessDefinitionKey, &jc.ActivityID, &jc.JobDefinitionID, nil, nil,
		&jc.DeploymentID, &jc.JobType, &jc.RetryCycle, &jc.TenantID, &jc.RootProcessInstanceID,
		&jc.ParentProcessInstanceID,
	}
}

// appendJSONString appends s as a JSON string, byte for byte as json.Marshal
// writes it: identifiers almost never need escaping, and when one does,
// json.Marshal does it.
func appendJSONString(buf []byte, s string) ([]byte, error) {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' || c >= utf8.RuneSelf {
			encoded, err := json.Marshal(s)
			return append(buf, encoded...), err
		}
	}
	buf = append(buf, '"')
	buf = append(buf, s...)
	return append(buf, '"'), nil
}

// UnmarshalJSON decodes a job context in any stored form (see JobContext):
// the labelled object, the array of migration riverbpmn/016, or the object
// of migrations before it, with the JSON names of the fields. An array
// longer than the known fields is an error naming its length; a label this
// version does not know is left out, as SQL's accessors leave it.
func (jc *JobContext) UnmarshalJSON(data []byte) error {
	if !jobctx.IsArray(data) {
		var object map[string]json.RawMessage
		if err := json.Unmarshal(data, &object); err != nil {
			return err
		}
		if object == nil || jobctx.IsEarlierObject(object) {
			type jobContext JobContext // without this method
			return json.Unmarshal(data, (*jobContext)(jc))
		}
		return jc.setLabelledFields(object)
	}
	var elements []json.RawMessage
	if err := json.Unmarshal(data, &elements); err != nil {
		return err
	}
	if len(elements) > len(jobctx.Names) {
		return fmt.Errorf("workflow: job context array has %d elements, more than the %d known fields", len(elements), len(jobctx.Names))
	}
	for i, element := range elements {
		if jobctx.IsNull(element) {
			continue
		}
		if err := jc.setCompactField(i, element); err != nil {
			return fmt.Errorf("field %q (position %d): %w", jobctx.Names[i], i, err)
		}
	}
	return nil
}

// setLabelledFields sets jc's fields from a context in the labelled form,
// filling in what the form leaves out (storedPresence): an absent priority
// is 0, an absent exclusive true in a context with an instance, an absent
// activity the one the job definition's id names.
func (jc *JobContext) setLabelledFields(object map[string]json.RawMessage) error {
	if len(object) == 0 {
		return nil // an empty context (Validate says so), no defaults
	}
	for i, label := range jobctx.Labels {
		value, ok := object[label]
		if !ok || jobctx.IsNull(value) {
			continue
		}
		if err := jc.setCompactField(i, value); err != nil {
			return fmt.Errorf("field %q (label %q): %w", jobctx.Names[i], label, err)
		}
	}
	absent := func(i int) bool {
		_, ok := object[jobctx.Labels[i]]
		return !ok
	}
	if absent(jobctx.Priority) {
		defaultPriority := priority.Default
		jc.Priority = &defaultPriority
	}
	if absent(jobctx.Exclusive) && !absent(jobctx.Instance) {
		exclusiveDefault := true
		jc.Exclusive = &exclusiveDefault
	}
	if absent(jobctx.Activity) {
		jc.ActivityID, _ = jobctx.DerivedActivity(jc.ProcessDefinitionKey, jc.JobDefinitionID)
	}
	return nil
}

// setCompactField sets the field at position i of the compact form from
// its JSON value (not null).
func (jc *JobContext) setCompactField(i int, value json.RawMessage) error {
	var err error
	switch i {
	case jobctx.Priority:
		jc.Priority, err = decodeNew[int64](value)
		return err
	case jobctx.Exclusive:
		jc.Exclusive, err = decodeNew[bool](value)
		return err
	}
	target := jc.compactStrings()[i]
	if plain, ok := jobctx.PlainString(value); ok {
		*target = plain
		return nil
	}
	return json.Unmarshal(value, target)
}

// decodeNew decodes value into a new T.
func decodeNew[T any](value json.RawMessage) (*T, error) {
	v := new(T)
	if err := json.Unmarshal(value, v); err != nil {
		return nil, err
	}
	return v, nil
}

// setMetadataKey returns metadata with MetadataKey set to value (compact
// JSON).
func setMetadataKey(metadata []byte, value json.RawMessage) ([]byte, error) {
	fields := map[string]json.RawMessage{}
	if len(bytes.TrimSpace(metadata)) > 0 {
		if err := json.Unmarshal(metadata, &fields); err != nil || fields == nil {
			return nil, fmt.Errorf("workflow: job metadata must be a JSON object to hold a job context, got %s", quoteForError(string(metadata)))
		}
	}
	fields[MetadataKey] = value
	if len(fields) == 1 {
		// Only the context, as for most jobs: what json.Marshal writes.
		out := make([]byte, 0, len(MetadataKey)+len(value)+5)
		out = append(out, `{"`+MetadataKey+`":`...)
		out = append(out, value...)
		return append(out, '}'), nil
	}
	return json.Marshal(fields)
}

// JobContextOf reads the job context of a job, for instance inside a worker:
//
//	jc, err := workflow.JobContextOf(job.JobRow)
//
// It returns ErrNoJobContext if the job has none, and an error naming the
// problem if the stored context is malformed (someone edited the row).
func JobContextOf(job *rivertype.JobRow) (JobContext, error) {
	raw, err := jobctx.Stored(job.Metadata)
	if err != nil {
		return JobContext{}, fmt.Errorf("workflow: job %d: %w", job.ID, err)
	}
	if raw == nil {
		return JobContext{}, ErrNoJobContext
	}
	return decodeJobContext(raw)
}

// contextFields are a stored job context's fields (jobctx.Fields), for the
// engine's readers of single fields.
type contextFields struct{ fields jobctx.Fields }

// field returns the JSON value of the field named name (jobctx.Fields.Field).
func (f contextFields) field(name string) json.RawMessage { return f.fields.Field(name) }

// metadataContextFields returns the fields of the job context in metadata
// (jobctx.FromMetadata).
func metadataContextFields(metadata []byte) (contextFields, bool, error) {
	fields, found, err := jobctx.FromMetadata(metadata)
	return contextFields{fields}, found, err
}

// decodeJobContext decodes and validates a stored job context, in either
// form (JobContext.UnmarshalJSON). A context stored without a root process
// instance belongs to a top-level instance, its own root (see stored), as
// the SQL of the exclusive key reads it.
func decodeJobContext(raw json.RawMessage) (JobContext, error) {
	jc, err := decodeJobContextAsGiven(raw)
	if err != nil {
		return JobContext{}, err
	}
	if jc.RootProcessInstanceID == "" {
		jc.RootProcessInstanceID = jc.ProcessInstanceID
	}
	return jc, nil
}

// decodeJobContextAsGiven is decodeJobContext without the root filled in:
// a context given at insert (InsertOpts.Metadata), which the engine
// resolves (Engine.resolve: the parent, else the instance, is the root).
func decodeJobContextAsGiven(raw json.RawMessage) (JobContext, error) {
	var jc JobContext
	if err := json.Unmarshal(raw, &jc); err != nil {
		return JobContext{}, fmt.Errorf("workflow: job context in metadata[%q] is malformed: %w", MetadataKey, err)
	}
	if err := jc.Validate(); err != nil {
		return JobContext{}, err
	}
	return jc, nil
}

// stored is the resolved context jc as the middleware writes it to
// metadata (compactJSON): without the root process instance when the
// instance is its own root (a top-level instance, most jobs). Every value in
// metadata is one more entry in River's GIN index on metadata at every state
// change, so a default spelled out costs on every fetch and completion.
// The readers fill it back: JobContextOf, and the SQL of the
// exclusive key, which has always read an absent root as the instance
// itself.
func (jc JobContext) stored() JobContext {
	if jc.RootProcessInstanceID == jc.ProcessInstanceID {
		jc.RootProcessInstanceID = ""
	}
	return jc
}
