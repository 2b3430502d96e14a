package jobctx

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestLabels: the one-pass reader knows each label of the labelled form at
// its position, and nothing else as a label (the JSON names of the object
// form of earlier migrations included); the position constants name the
// fields of Names.
func TestLabels(t *testing.T) {
	t.Parallel()

	t.Run("LabelPosition", func(t *testing.T) {
		t.Parallel()
		for position, label := range Labels {
			require.Equal(t, position, labelPosition([]byte(label)), label)
		}
		for _, notLabel := range append([]string{"", "Instance", "instances", "inst", "bpmn", "process_key"}, Names[:]...) {
			if slices.Contains(Labels[:], notLabel) {
				continue // priority and exclusive: a label and a JSON name
			}
			require.Equal(t, -1, labelPosition([]byte(notLabel)), notLabel)
		}
	})

	t.Run("Positions", func(t *testing.T) {
		t.Parallel()
		for position, name := range map[int]string{Instance: "process_instance_id", Process: "process_definition_key",
			Activity: "activity_id", Job: "job_definition_id", Priority: "priority", Exclusive: "exclusive", Deployment: "deployment_id",
			Type: "job_type", Retry: "retry_cycle", Tenant: "tenant_id", Root: "root_process_instance_id", Parent: "parent_process_instance_id"} {
			require.Equal(t, name, Names[position])
		}
		require.Equal(t, "exclusive", Labels[Exclusive], "read by its JSON name and its label alike")
	})
}

// TestRead: the one-pass reader (Read) reads what the general reader
// (FromMetadata, then Fields.Field) reads, for every stored form of the job
// context and whatever the metadata around it, and reads the labelled and
// array forms itself unless a string has escapes.
func TestRead(t *testing.T) {
	t.Parallel()

	// OnePass: read says whether Read reads the metadata itself (true) or
	// leaves it to the general reader.
	t.Run("OnePass", func(t *testing.T) {
		t.Parallel()
		for metadata, read := range map[string]bool{
			// As River's jsonb column gives it back: spaces after colons and commas.
			`{"bpmn": ["pi-1", "order", "task", "order:task", 50, true, null, "timer", "R1/PT1S", "acme"], "river:log": [{"log": "x"}]}`:                                                  true,
			`{"bpmn": {"instance": "pi-1", "process": "order", "job": "order:task", "priority": 50, "type": "timer", "retry": "R1/PT1S", "tenant": "acme"}, "river:log": [{"log": "x"}]}`: true,
			// The labelled form: labels in any order, spacing, defaults, null.
			`{"bpmn": {"tenant": "acme", "job": "order:task", "process": "order", "instance": "pi-1"}}`:              true,
			`{"bpmn":{"instance":"pi-1","process":"order","exclusive":false}}`:                                       true,
			`{"bpmn" : { "instance" : "pi-1" , "process" : "order" , "exclusive" : null } }`:                         true,
			`{"bpmn": {"instance": null, "process": "order"}}`:                                                       true,
			`{"bpmn": {"process": "order", "exclusive": true}}`:                                                      true,
			`{"bpmn": {"process": "order", "job": "order:task", "activity": null}}`:                                  true,
			`{"bpmn": {"process": "order", "job": "order:task", "activity": "other"}}`:                               true,
			`{"bpmn": {"process": "order", "job": "order:"}}`:                                                        true,
			`{"bpmn": {"process": "order", "job": "orders:task"}}`:                                                   true,
			`{"bpmn": {"process": "order", "job": "order"}}`:                                                         true,
			`{"bpmn": {"process": "", "job": ":task"}}`:                                                              true,
			`{"bpmn": {"process": 5, "job": "5:task"}}`:                                                              true,
			`{"bpmn": {"process": null, "job": "order:task"}}`:                                                       true,
			`{"bpmn": {"job": "order:task"}}`:                                                                        true,
			`{"bpmn": {"process": "order", "job": null}}`:                                                            true,
			`{"bpmn": {"instance": "sub-1", "root": "root-1", "parent": "root-1", "process": "order"}}`:              true,
			`{"bpmn": {"instance": "pi-1", "root": null, "priority": null, "deployment": "dep-1", "type": "timer"}}`: true,
			`{"bpmn": {"instance": "pi-1", "instance": null, "process": "order"}}`:                                   true, // the last of duplicate labels
			`{"bpmn": {"instance": null, "instance": "pi-2", "exclusive": true, "exclusive": false}}`:                true,
			`{"bpmn": {"instance": 7, "tenant": true, "retry": -1.5e3, "type": false}}`:                              true,
			`{"bpmn": {}}`: true,
			`{"bpmn": {"instance": "pi-1"}, "bpmn": ["pi-2", "order"]}`: true,
			`{"bpmn": ["pi-2", "order"], "bpmn": {"instance": "pi-1"}}`: true,
			`{"bpmn": {"instance": "pi-1"}, "bpmn": null}`:              true,
			`{"bpmn": null, "bpmn": {"instance": "pi-1"}}`:              true,
			// The object form of earlier migrations, alone or mixed with labels.
			`{"bpmn": {"process_instance_id": "pi-1", "process_definition_key": "order", "exclusive": true}}`: false,
			`{"bpmn": {"process_instance_id": "pi-1"}}`:                                                       false,
			`{"bpmn": {"instance": "pi-1", "process_instance_id": "pi-2", "process": "order"}}`:               false,
			`{"bpmn": {"instance": "pi-1", "activity_id": "task", "process": "order", "job": "order:x"}}`:     false,
			`{"bpmn": {"instance": "pi-1", "a_later_label": "x"}}`:                                            false,
			`{"bpmn": {"instance": "a\"b", "process": "order"}}`:                                              false, // escapes
			`{"bpmn": {"inst\u0061nce": "pi-1"}}`:                                                             false,
			`{"bpmn": {"instance": "pi-1", "tenant": {"id": "acme"}}}`:                                        false, // not a plain value
			`{"bpmn": {"instance": "pi-1", "tenant": ["acme"]}}`:                                              false,
			"{\"bpmn\": {\"instance\": \"pi-\xff\"}}":                                                         false, // not UTF-8
			// The array form.
			`{"bpmn": ["pi-1", "order"], "bpmn": null}`:                                                           true, // the last of duplicate keys
			`{"bpmn": null, "bpmn": ["pi-2", "order", null, "d"]}`:                                                true,
			`{"bp\u006dn": ["pi-1", "order"]}`:                                                                    true,  // a key with escapes: no context, to both readers
			`{"\u0062pmn": ["pi-2"], "bpmn": {"instance": "pi-1"}}`:                                               false, // a key with escapes and a context
			`{"bpmn": ["pi-1", "order", "a", "d", 1, true, "dep", "async", "R1/PT1S", "t", "root", "extra", 12]}`: true,
			`{"bpmn": []}`: true, `{"bpmn": 5}`: false, `{"bpmn": "pi-1"}`: false, `{"bpmn": [["nested"]]}`: false, `{"bpmn": [1, 2, 3, 4, 5, "true"]}`: true,
			`{"a": 1}`: true, `{"bpmn": null}`: true, `{}`: true, `[]`: true, `"bpmn"`: false, `null`: true,
		} {
			requireReadAsGeneral(t, []byte(metadata))
			var c Text
			_, ok := Read([]byte(metadata), &c)
			require.Equal(t, read, ok, "read in one pass: %s", metadata)
		}
	})

	// Around: the context is found whatever the metadata around it holds,
	// in either form; a string with escapes leaves it to the general reader.
	t.Run("Around", func(t *testing.T) {
		t.Parallel()
		for _, stored := range []string{
			`{"instance":"order-4711","process":"order","activity":"charge","job":"charge-async","priority":7,"retry":"R3/PT5M","tenant":"acme"}`,
			`{"instance":"sub-1","process":"order","type":"timer","root":"root-1","parent":"mid-1"}`,
			`{"instance":"commande-été","process":"commande","tenant":"société"}`,
			`{"instance":"quote \" and \\ backslash","process":"order"}`,
			`["order, with a comma","order",null,null,null,false]`,
			`["pi-1","order","reserve","order:reserve",null,true,"dep-1","async"]`,
			`[null,null,null,null,7,null,null,null,"R1/PT1S"]`,
		} {
			for _, around := range []string{`{"bpmn":%s}`, `{"other": {"bpmn": [1]}, "x": "\"bpmn\":[\"no\"]", "bpmn":%s}`, `{"z": [{"a": "}"}, 1.5e3, null], "bpmn": %s, "y": "]"}`} {
				metadata := []byte(stringsReplace(around, stored))
				requireReadAsGeneral(t, metadata)
				var c Text
				found, ok := Read(metadata, &c)
				require.Equal(t, !bytes.ContainsRune([]byte(stored), '\\'), ok, "read in one pass unless escaped: %s", metadata)
				require.Equal(t, ok, found, "%s", metadata)
			}
		}
	})

	t.Run("Defaults", func(t *testing.T) {
		t.Parallel()
		var c Text
		found, ok := Read([]byte(`{"bpmn": {"retry": "R1/PT1S", "type": "timer", "job": "order:a", "process": "order", "instance": "pi-1"}}`), &c)
		require.True(t, found)
		require.True(t, ok)
		require.True(t, c.Exclusive, "exclusive by default in a context with an instance")
		require.Equal(t, "a", string(c.Texts[Activity]), "the activity derived from the job definition")
		found, ok = Read([]byte(`{"bpmn": {"instance": "pi-1", "process": "order", "exclusive": null}}`), &c)
		require.True(t, found)
		require.True(t, ok)
		require.False(t, c.Exclusive, "null: not set")
	})
}

// TestReadAllocatesNothing: Read reads both forms, and metadata without a
// context, without allocating (not parallel: AllocsPerRun).
func TestReadAllocatesNothing(t *testing.T) {
	for _, metadata := range []string{
		`{"bpmn": {"instance": "order-4711", "process": "order", "job": "order:charge", "priority": null, "retry": "R3/PT5M"}, "river:log": [{"log": "x"}]}`,
		`{"bpmn": ["order-4711", "order", "charge", "order:charge", null, true, null, null, "R3/PT5M"], "river:log": [{"log": "x"}]}`,
		`{"river:log": [{"log": "x"}]}`,
	} {
		data := []byte(metadata)
		var c Text
		require.Zero(t, testing.AllocsPerRun(100, func() { _, _ = Read(data, &c) }), "%s", metadata)
	}
}

// FuzzRead: for any metadata River can hold (a JSON value), the one-pass
// reader reads what the general reader reads.
func FuzzRead(f *testing.F) {
	for _, seed := range []string{
		`{"bpmn":["pi-1","order","task","order:task",50,true,null,"timer","R1/PT1S","acme","root"]}`,
		`{"bpmn": ["pi-1", "order"], "x": {"bpmn": [1]}, "y": "\"bpmn\""}`,
		`{"bpmn": {"process_instance_id": "pi-1", "exclusive": true}}`,
		`{"bpmn": null}`, `{"bpmn": ["a\"b"]}`, `{"bpmn": [], "bpmn": ["x"]}`, `[]`, `{}`,
		`{"bpmn":{"instance":"pi-1","process":"order","job":"order:task","priority":50,"type":"timer","retry":"R1/PT1S","tenant":"acme","root":"r","parent":"p"}}`,
		`{"bpmn": {"job": "order:task", "process": "order", "exclusive": null, "activity": null, "instance": null}, "x": [1]}`,
		`{"bpmn": {"instance": "pi-1", "process_definition_key": "order"}}`,
		`{"bpmn": {"instance": "pi-1", "instance": null, "deployment": 5, "tenant": {"id": "t"}}}`,
		`{"bpmn": {}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, metadata []byte) {
		if !json.Valid(metadata) {
			t.Skip("River's metadata is jsonb: always valid JSON")
		}
		requireReadAsGeneral(t, metadata)
	})
}

// requireReadAsGeneral checks that Read, when it reads metadata itself,
// reads what the general reader reads: whether there is a context, the
// text of each string field (a string read the general way: escapes
// decoded, "" for what is not a string) and the exclusive flag (JSON true).
func requireReadAsGeneral(t testing.TB, metadata []byte) {
	t.Helper()
	var c Text
	found, ok := Read(metadata, &c)
	if !ok {
		return // the caller reads the general way
	}
	fields, generalFound, err := FromMetadata(metadata)
	require.Equal(t, generalFound && err == nil, found, "found in %s", metadata)
	if !found {
		return
	}
	for position, name := range Names {
		raw := fields.Field(name)
		want, plain := PlainString(raw)
		if !plain && (raw == nil || json.Unmarshal(raw, &want) != nil) {
			want = ""
		}
		require.Equal(t, want, string(c.Texts[position]), "%s of %s", name, metadata)
	}
	require.Equal(t, bytes.Equal(bytes.TrimSpace(fields.Field("exclusive")), []byte("true")), c.Exclusive, "exclusive of %s", metadata)
}

func stringsReplace(format, stored string) string { return strings.Replace(format, "%s", stored, 1) }
