package jobctx

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// Text is a job context as the readers of single fields read it
// (Fields.Field, then a string or the exclusive flag): the text of each
// string field at its position (Names), nil when the field is absent, null
// or not a string, with the labelled form's defaults filled in; its slices
// are parts of the job's metadata.
type Text struct {
	Texts [len(Names)][]byte
	// Exclusive is true when the exclusive field is JSON true, or absent
	// from a labelled context with an instance.
	Exclusive bool
}

// values is a stored job context split into its fields' JSON values in one
// pass: by position (Names) for the array form, by label (Labels) for the
// labelled form.
type values struct {
	// values are the fields' JSON values, nil when absent or null.
	values [len(Names)]json.RawMessage
	// labelled is true for the labelled form; present then says which
	// labels it holds (null included).
	labelled bool
	present  [len(Names)]bool
}

// Read finds a job's context in its metadata as Stored does (the value of
// Key, the last of duplicate keys, spelled exactly; null is none) and reads
// it as FromMetadata and Fields.Field do, in one pass over the bytes and
// without allocating. found is false when metadata has no job context. ok
// is false when Read cannot tell: metadata is not an object, one of its
// keys has escapes, or the context is neither the array form nor the
// labelled form with only labels as keys and, as values, strings without
// escapes in valid UTF-8, numbers, true, false or null (the object form of
// earlier migrations has keys that are not labels); the caller then reads
// the metadata the general way. Metadata is valid JSON (River's column is
// jsonb): what is not is read as far as it can be, not refused.
func Read(metadata []byte, c *Text) (found, ok bool) {
	var v values
	if found, ok = split(metadata, &v); !found || !ok {
		return found, ok
	}
	*c = Text{Exclusive: bytes.Equal(v.values[Exclusive], []byte("true"))}
	for i, value := range v.values {
		if len(value) > 0 && value[0] == '"' { // other values read as ""
			if c.Texts[i] = value[1 : len(value)-1]; !isASCII(c.Texts[i]) && !utf8.Valid(c.Texts[i]) {
				return false, false // read with replacement characters
			}
		}
	}
	if !v.labelled {
		return true, true
	}
	// What the labelled form leaves out (Fields.labelledDefault).
	if !v.present[Exclusive] {
		c.Exclusive = v.present[Instance]
	}
	if !v.present[Activity] {
		if isJSONStringValue(v.values[Process]) && isJSONStringValue(v.values[Job]) {
			process, job := c.Texts[Process], c.Texts[Job]
			if len(process) > 0 && len(job) > len(process) && job[len(process)] == ':' && bytes.HasPrefix(job, process) {
				c.Texts[Activity] = job[len(process)+1:] // DerivedActivity
			}
		}
	}
	return true, true
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

// isJSONStringValue reports whether value is a JSON string.
func isJSONStringValue(value json.RawMessage) bool { return len(value) > 0 && value[0] == '"' }

// split finds a job's context in its metadata (see Read) and splits it into
// v, in one pass over the bytes and without allocating; ok is false when it
// cannot tell.
func split(metadata []byte, v *values) (found, ok bool) {
	if !containsQuoted(metadata, Key) {
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
		case string(name) != Key:
			i = skipJSONValue(metadata, i)
		case bytes.HasPrefix(metadata[i:], []byte("null")):
			found = false
			i += len("null")
		case i < len(metadata) && metadata[i] == '{':
			*v = values{labelled: true}
			found = true
			i = labelledValuesAt(metadata, i, v)
		default:
			*v = values{}
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
func compactElementsAt(data []byte, i int, elements *[len(Names)]json.RawMessage) int {
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
// key is a label (Labels) without escapes and every value a plain
// value (scalarEnd). It returns the index just past the object, or -1 for
// anything else (the caller then reads the context the general way). One
// pass over the bytes, without allocating.
func labelledValuesAt(data []byte, i int, v *values) int {
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

// labelPosition returns the position (Names) of a label of the
// labelled form (Labels), -1 when label is not one. A switch, which
// the compiler turns into a search by length and bytes; TestLabels
// checks it against Labels.
func labelPosition(label []byte) int {
	switch string(label) { // no allocation: the conversion does not escape
	case "instance":
		return Instance
	case "process":
		return Process
	case "activity":
		return Activity
	case "job":
		return Job
	case "priority":
		return Priority
	case "exclusive":
		return Exclusive
	case "deployment":
		return Deployment
	case "type":
		return Type
	case "retry":
		return Retry
	case "tenant":
		return Tenant
	case "root":
		return Root
	case "parent":
		return Parent
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
