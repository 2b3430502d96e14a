package workflow

import (
	"encoding/json"

	"github.com/riverqueue/river/rivertype"

	"github.com/riverbpmn/riverbpmn/exclusive"
)

// ExclusiveKeyOf returns the exclusive key of job under scope, and whether
// it has one: the key the fetch takes for it (the SQL of
// exclusive/sql/exclusive_key.sql reads the same fields the same way;
// TestExclusiveKeyGoMatchesSQL checks both agree on valid and corrupt rows).
//
// The key is read from three fields of the job context only, each on its
// own: "exclusive" must be JSON true, "process_instance_id" a non-empty JSON
// string and, with exclusive.RootProcessInstance, "root_process_instance_id"
// a JSON string, null or absent (empty or absent means the instance is its
// own root). So:
//
//   - for a job whose context JobContextOf accepts, the key is
//     exclusive.Key of that context;
//   - a row whose instance id is not a string (a number, an object: someone
//     wrote it by hand) has no key: it cannot name an instance, so it never
//     takes the key that the instance's valid jobs need, and it is fetched
//     like a non-exclusive job;
//   - a row whose key fields are fine but whose other fields are corrupt (a
//     string priority), which JobContextOf rejects, keeps its key: it stays
//     in sequence with the jobs of its instance, rather than running beside
//     them. Its work gets JobContextOf's error; its key is given back by its
//     job attempt, like any other.
func ExclusiveKeyOf(job *rivertype.JobRow, scope exclusive.Scope) (string, bool) {
	if !scope.Enabled() {
		return "", false
	}
	fields, found, err := metadataContextFields(job.Metadata)
	if !found || err != nil { // no context, or one that is not an object or array
		return "", false
	}
	var isExclusive bool
	if json.Unmarshal(fields.field("exclusive"), &isExclusive) != nil || !isExclusive {
		return "", false
	}
	var instance, root string
	instanceField := fields.field("process_instance_id")
	if !isJSONString(instanceField) || json.Unmarshal(instanceField, &instance) != nil {
		return "", false
	}
	if rootField := fields.field("root_process_instance_id"); scope == exclusive.RootProcessInstance && rootField != nil {
		if !isJSONString(rootField) || json.Unmarshal(rootField, &root) != nil {
			return "", false
		}
	}
	return exclusive.Key(scope, true, instance, root)
}

// isJSONString reports whether raw is a JSON string.
func isJSONString(raw json.RawMessage) bool { return len(raw) > 0 && raw[0] == '"' }
