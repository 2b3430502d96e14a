package jobctx

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/riverbpmn/riverbpmn/priority"
)

// Fields are a stored job context's fields by JSON name, in any form: an
// object (the labelled form, or the object of migrations before
// riverbpmn/016), or the array's elements at their positions (Names).
// Elements past the known fields are left out (SQL's accessors do not see
// them either).
type Fields struct {
	elements []json.RawMessage
	object   map[string]json.RawMessage
	labelled bool // object is in the labelled form (not IsEarlierObject)
}

// Parse parses a stored job context for reading single fields.
func Parse(raw json.RawMessage) (Fields, error) {
	if IsArray(raw) {
		var elements []json.RawMessage
		err := json.Unmarshal(raw, &elements)
		return Fields{elements: elements}, err
	}
	var object map[string]json.RawMessage
	if err := json.Unmarshal(raw, &object); err != nil {
		return Fields{}, err
	}
	return Fields{object: object, labelled: object != nil && !IsEarlierObject(object)}, nil
}

// Field returns the JSON value of the field named name, nil when it is
// absent or null, as SQL's accessors read it: in the labelled form by its
// label, with the form's defaults for what it leaves out (as migration
// riverbpmn/028's accessors read it); in an object of an earlier form by its
// name; in an array by position (as migration riverbpmn/016's accessors
// read those).
func (f Fields) Field(name string) json.RawMessage {
	var value json.RawMessage
	i := slices.Index(Names[:], name)
	switch {
	case f.labelled && i >= 0:
		var ok bool
		if value, ok = f.object[Labels[i]]; !ok {
			value = f.labelledDefault(i)
		}
	case f.object != nil:
		value = f.object[name]
	case i >= 0 && i < len(f.elements):
		value = f.elements[i]
	}
	if value == nil || IsNull(value) {
		return nil
	}
	return value
}

// labelledDefault is the value of the field at position i that the labelled
// form leaves out (workflow's storedPresence), nil when there is none.
func (f Fields) labelledDefault(i int) json.RawMessage {
	switch i {
	case Priority:
		return json.RawMessage(strconv.FormatInt(priority.Default, 10))
	case Exclusive:
		if _, ok := f.object[Labels[Instance]]; ok {
			return json.RawMessage("true")
		}
	case Activity:
		var process, job string
		if json.Unmarshal(f.object[Labels[Process]], &process) != nil ||
			json.Unmarshal(f.object[Labels[Job]], &job) != nil {
			return nil
		}
		if activity, ok := DerivedActivity(process, job); ok {
			encoded, _ := json.Marshal(activity)
			return encoded
		}
	}
	return nil
}

// FromMetadata returns the fields of the job context in metadata, for
// readers of single fields, which read a field the way migration
// riverbpmn/028's SQL accessors do (workflow.JobContextOf reads strictly).
// found is false when there is no context, or when it is an array that
// cannot be parsed (no field can be read, as in SQL); err is a context that
// is neither an array nor an object.
func FromMetadata(metadata []byte) (fields Fields, found bool, err error) {
	raw, err := Stored(metadata)
	if err != nil || raw == nil {
		return Fields{}, false, err
	}
	fields, err = Parse(raw)
	switch {
	case err != nil && IsArray(raw):
		return Fields{}, false, nil
	case err != nil:
		return Fields{}, true, err
	}
	return fields, true, nil
}

// Stored returns the raw job context in metadata as stored, or nil if there
// is none. Metadata that is not a JSON object has no job context.
func Stored(metadata []byte) (json.RawMessage, error) {
	if !bytes.Contains(metadata, []byte(`"`+Key+`"`)) {
		return nil, nil // fast path: most River jobs have no job context
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(metadata, &fields); err != nil {
		return nil, nil //nolint:nilerr // not an object: no job context, as for stock River
	}
	raw, ok := fields[Key]
	if !ok || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return nil, nil
	}
	return raw, nil
}

// PlainString returns the text of a JSON string without escapes, as
// json.Unmarshal would; ok is false for any other value, which
// json.Unmarshal then decodes (or refuses).
func PlainString(value json.RawMessage) (string, bool) {
	if len(value) < 2 || value[0] != '"' || value[len(value)-1] != '"' {
		return "", false
	}
	text := value[1 : len(value)-1]
	if bytes.IndexByte(text, '\\') >= 0 || bytes.IndexByte(text, '"') >= 0 || !utf8.Valid(text) {
		return "", false
	}
	return string(text), true
}

// IsArray reports whether raw is a JSON array (spaces aside).
func IsArray(raw []byte) bool {
	trimmed := bytes.TrimSpace(raw)
	return len(trimmed) > 0 && trimmed[0] == '['
}

// IsNull reports whether raw is JSON null (spaces aside).
func IsNull(raw []byte) bool { return bytes.Equal(bytes.TrimSpace(raw), []byte("null")) }
