// Package jobctx holds the stored layout of a job's BPMN context in River's
// metadata (the key it is under, its fields' positions, JSON names and
// labels) and the readers of single fields that read it as riverbpmn's SQL
// accessors do: the general one (Fields) and the one-pass one that does not
// allocate (Read). Package workflow, which encodes and decodes the whole
// context (workflow.JobContext), and the feature packages that read a
// job's fields (telemetry) share it, so that the layout is written down
// once. It never changes the stored format: the positions and labels are
// those of migrations riverbpmn/016 and riverbpmn/028.
package jobctx

import (
	"encoding/json"
	"strings"
)

// Key is the key of river_job.metadata under which riverbpmn keeps a job's
// context (workflow.MetadataKey).
const Key = "bpmn"

// TypeTimer is the job type of a timer job (workflow.JobTypeTimer).
const TypeTimer = "timer"

// Names are the JSON names of the context's fields in the order of the
// array form of migration riverbpmn/016: the position of a name is the
// field's index in the array, and the index of its label in Labels. The SQL
// accessor functions take the same positions; never reorder, only append.
var Names = [...]string{
	"process_instance_id",
	"process_definition_key",
	"activity_id",
	"job_definition_id",
	"priority",
	"exclusive",
	"deployment_id",
	"job_type",
	"retry_cycle",
	"tenant_id",
	"root_process_instance_id",
	"parent_process_instance_id",
}

// Labels are the labels of the labelled form (migration riverbpmn/028), at
// the positions of Names. Migration riverbpmn/028's accessor functions use
// the same labels.
var Labels = [len(Names)]string{
	"instance",
	"process",
	"activity",
	"job",
	"priority",
	"exclusive",
	"deployment",
	"type",
	"retry",
	"tenant",
	"root",
	"parent",
}

// The positions (Names, Labels) of the fields. Priority holds a number and
// Exclusive a boolean; every other position holds a string.
const (
	Instance   = 0
	Process    = 1
	Activity   = 2
	Job        = 3
	Priority   = 4
	Exclusive  = 5
	Deployment = 6
	Type       = 7
	Retry      = 8
	Tenant     = 9
	Root       = 10
	Parent     = 11
)

// IsEarlierObject reports whether a job context object, by its keys, is in
// the object form of migrations before riverbpmn/016: it holds a field by
// its JSON name (json.Marshal of workflow.JobContext wrote
// "process_definition_key" in every one). Priority and exclusive are
// spelled alike in both forms and tell nothing. Migration riverbpmn/028's
// river_bpmn_ctx_is_earlier_form tells them apart the same way.
func IsEarlierObject(object map[string]json.RawMessage) bool {
	for i, name := range Names {
		if i == Priority || i == Exclusive {
			continue
		}
		if _, ok := object[name]; ok {
			return true
		}
	}
	return false
}

// DerivedActivity is the activity id a reader of the labelled form derives
// when the activity is left out: the rest of the job definition's id after
// "<process definition key>:". ok is false when the job definition's id does
// not start so (or either is empty): the activity is then stored as it is.
// Migration riverbpmn/028's river_bpmn_ctx_activity derives it the same way.
func DerivedActivity(processDefinitionKey, jobDefinitionID string) (string, bool) {
	if processDefinitionKey == "" {
		return "", false
	}
	return strings.CutPrefix(jobDefinitionID, processDefinitionKey+":")
}
