package telemetry

import (
	"encoding/json"
	"testing"

	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/exclusive"
	"github.com/riverbpmn/riverbpmn/internal/jobctx"
)

// contextReaderMetadata are metadata of every kind the readers meet: the
// labelled form and the array form (read in one pass), the object form of
// earlier migrations, escapes, values that are not strings, duplicate keys
// and no context at all.
var contextReaderMetadata = []string{
	`{"bpmn":["pi-1","order","task","order:task",50,true,null,"timer","R1/PT1S","acme","root"]}`,
	`{"bpmn": ["pi-1", "order"], "x": {"bpmn": [1]}, "y": "\"bpmn\""}`,
	`{"bpmn": ["sub-1", "order", null, null, null, true, null, null, null, null, "root-1"]}`,
	`{"bpmn": {"process_instance_id": "pi-1", "exclusive": true}}`,
	`{"bpmn": null}`, `{"bpmn": ["a\"b"]}`, `{"bpmn": [], "bpmn": ["x"]}`, `[]`, `{}`, `{"a": 1}`, `null`,
	`{"bpmn":{"instance":"pi-1","process":"order","job":"order:task","priority":50,"type":"timer","retry":"R1/PT1S","tenant":"acme","root":"r","parent":"p"}}`,
	`{"bpmn": {"job": "order:task", "process": "order", "exclusive": null, "activity": null, "instance": null}, "x": [1]}`,
	`{"bpmn": {"instance": "pi-1", "process_definition_key": "order"}}`,
	`{"bpmn": {"instance": "pi-1", "instance": null, "deployment": 5, "tenant": {"id": "t"}}}`,
	`{"bpmn": {"instance": "sub-1", "root": "root-1", "process": "order", "exclusive": false}}`,
	`{"bpmn": {"instance": "quote \" and \\ backslash", "process": "order", "tenant": "société"}}`,
	`{"bpmn": {"process": "order", "job": "order:start", "type": "timer", "exclusive": true}}`,
	`{"bpmn": {}}`,
}

// TestContextReader: the engine's JobReader reads a job's identity and
// class from its job context as the general reader (jobctx.FromMetadata)
// does, under every exclusive scope, whichever reader (the one-pass one or
// the general one) reads the metadata.
func TestContextReader(t *testing.T) {
	t.Parallel()

	type testBundle struct {
		readers []ContextReader
	}

	setup := func(t *testing.T) *testBundle {
		t.Helper()
		return &testBundle{readers: contextReaders()}
	}

	t.Run("AsGeneral", func(t *testing.T) {
		t.Parallel()
		bundle := setup(t)
		for _, metadata := range contextReaderMetadata {
			for _, r := range bundle.readers {
				requireIdentityAsGeneral(t, r, []byte(metadata))
			}
		}
	})

	t.Run("Forms", func(t *testing.T) {
		t.Parallel()
		r := setup(t).readers[0] // exclusive.ProcessInstance
		identity := func(metadata string) Identity { return r.Identity(&rivertype.JobRow{Metadata: []byte(metadata)}) }
		class := func(metadata string) Class { return r.Class(&rivertype.JobRow{Metadata: []byte(metadata)}) }

		legacy := `{"bpmn": {"process_instance_id": "pi-1", "process_definition_key": "order", "exclusive": true}}`
		require.Equal(t, "pi-1", identity(legacy).ExclusiveKey, "the object form of earlier migrations")
		require.True(t, class(legacy).Exclusive)
		require.Equal(t, Identity{}, identity(`{"a": 1}`))
		require.Equal(t, Identity{}, identity(`{"bpmn": null}`))
		require.Equal(t, Class{}, class(`{"a": 1}`))

		wantClass := Class{HasContext: true, Timer: true, Exclusive: true, JobDefinitionID: []byte("order:a"),
			ProcessDefinitionKey: []byte("order"), TenantID: []byte("acme"), RetryCycle: []byte("R1/PT1S")}
		require.Equal(t, wantClass, class(`{"bpmn": ["pi-1", "order", "a", "order:a", null, true, null, "timer", "R1/PT1S", "acme"]}`))
		// The same in the labelled form: exclusive by default, the activity
		// derived from the job definition.
		labelled := `{"bpmn": {"retry": "R1/PT1S", "type": "timer", "tenant": "acme", "job": "order:a", "process": "order", "instance": "pi-1"}}`
		require.Equal(t, wantClass, class(labelled))
		require.Equal(t, Identity{HasContext: true, ProcessInstanceID: "pi-1", ActivityID: "a", JobDefinitionID: "order:a", ProcessDefinitionKey: "order",
			TenantID: "acme", RetryCycle: "R1/PT1S", Timer: true, ExclusiveKey: "pi-1"}, identity(labelled))
		require.False(t, class(`{"bpmn": {"instance": "pi-1", "process": "order", "exclusive": null}}`).Exclusive, "null: not set")
	})

	t.Run("Scope", func(t *testing.T) {
		t.Parallel()
		metadata := []byte(`{"bpmn": {"instance": "sub-1", "root": "root-1", "process": "order"}}`)
		for scope, key := range map[exclusive.Scope]string{exclusive.ProcessInstance: "sub-1", exclusive.RootProcessInstance: "root-1", exclusive.None: ""} {
			r := ContextReader{Scope: scope}
			job := &rivertype.JobRow{Metadata: metadata}
			require.Equal(t, key, r.Identity(job).ExclusiveKey, "%s", scope)
			require.Equal(t, key != "", r.Class(job).Exclusive, "%s", scope)
		}
	})
}

// TestContextReaderClassAllocatesNothing: Class reads both forms the
// middleware writes without allocating (not parallel: AllocsPerRun).
func TestContextReaderClassAllocatesNothing(t *testing.T) {
	for _, metadata := range []string{
		`{"bpmn": {"instance": "order-4711", "process": "order", "job": "order:charge", "priority": null, "retry": "R3/PT5M"}, "river:log": [{"log": "x"}]}`,
		`{"bpmn": ["order-4711", "order", "charge", "order:charge", null, true, null, null, "R3/PT5M", "acme"], "river:log": [{"log": "x"}]}`,
	} {
		job := &rivertype.JobRow{Metadata: []byte(metadata)}
		for _, r := range contextReaders() {
			require.Zero(t, testing.AllocsPerRun(100, func() { _ = r.Class(job) }), "%s", metadata)
		}
	}
}

// FuzzContextReader: for any metadata River can hold (a JSON value), the
// engine's JobReader reads what the general reader reads.
func FuzzContextReader(f *testing.F) {
	for _, seed := range contextReaderMetadata {
		f.Add([]byte(seed))
	}
	readers := contextReaders()
	f.Fuzz(func(t *testing.T, metadata []byte) {
		if !json.Valid(metadata) {
			t.Skip("River's metadata is jsonb: always valid JSON")
		}
		for _, r := range readers {
			requireIdentityAsGeneral(t, r, metadata)
		}
	})
}

// contextReaders returns a reader of each exclusive scope.
func contextReaders() []ContextReader {
	return []ContextReader{{Scope: exclusive.ProcessInstance}, {Scope: exclusive.RootProcessInstance}, {Scope: exclusive.None}}
}

// requireIdentityAsGeneral checks that r's Identity and Class read metadata
// as the general reader (jobctx.FromMetadata) does.
func requireIdentityAsGeneral(t testing.TB, r ContextReader, metadata []byte) {
	t.Helper()
	want := Identity{}
	if fields, found, err := jobctx.FromMetadata(metadata); found && err == nil {
		want = r.identityOf(fields.Field)
	}
	job := &rivertype.JobRow{Metadata: metadata}
	require.Equal(t, want, r.Identity(job), "identity of %s", metadata)
	type class struct {
		HasContext, Timer, Exclusive                                bool
		JobDefinitionID, ProcessDefinitionKey, TenantID, RetryCycle string
	}
	text := func(c Class) class {
		return class{c.HasContext, c.Timer, c.Exclusive, string(c.JobDefinitionID), string(c.ProcessDefinitionKey), string(c.TenantID), string(c.RetryCycle)}
	}
	require.Equal(t, text(ClassOf(want)), text(r.Class(job)), "class of %s", metadata)
}
