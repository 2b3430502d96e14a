package workflow

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/internal/insertcalls"
)

type shipArgs struct {
	OrderID string `json:"order_id"`
}

func (shipArgs) Kind() string { return "ship_order" }

// invoiceArgs carries its own job context.
type invoiceArgs struct {
	OrderID string `json:"order_id"`
	Context JobContext
}

func (invoiceArgs) Kind() string             { return "send_invoice" }
func (a invoiceArgs) JobContext() JobContext { return a.Context }

func validContext(instance string) JobContext {
	return JobContext{
		ProcessInstanceID:    instance,
		ProcessDefinitionKey: "order_process",
		ActivityID:           "ship",
		DeploymentID:         "deploy-1",
	}
}

// newInsertClient builds a client that only inserts (no queues), on the
// engine's driver with its middleware.
func newInsertClient(t *testing.T, engine *Engine, schema string) *river.Client[pgx.Tx] {
	t.Helper()
	client, err := river.NewClient(engine.Driver(), &river.Config{
		Middleware: []rivertype.Middleware{engine.Middleware()},
		Schema:     schema,
		TestOnly:   true,
	})
	require.NoError(t, err)
	return client
}

func countJobs(ctx context.Context, t *testing.T, engine *Engine, schema string) int {
	t.Helper()
	var n int
	require.NoError(t, engine.dbPool.QueryRow(ctx, fmt.Sprintf("SELECT count(*) FROM %s.river_job", pgx.Identifier{schema}.Sanitize())).Scan(&n))
	return n
}

func TestJobContextOnAllSixInsertCalls(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	for _, call := range insertcalls.Six {
		t.Run(call.Name, func(t *testing.T) {
			t.Parallel()
			engine, schema := testEngine(t)
			client := newInsertClient(t, engine, schema)

			// Three ways to carry a context, plus a plain River job, plus
			// user metadata next to a context.
			userMetadata, err := validContext("pi-3").AddToMetadata([]byte(`{"tenant": "acme"}`))
			require.NoError(t, err)
			args := []river.JobArgs{
				shipArgs{OrderID: "o-1"},
				invoiceArgs{OrderID: "o-2", Context: validContext("pi-2")},
				shipArgs{OrderID: "o-3"},
				shipArgs{OrderID: "plain"},
			}
			opts := []*river.InsertOpts{
				validContext("pi-1").InsertOpts(),
				nil,
				{Metadata: userMetadata, Queue: "other"},
				nil,
			}
			require.NoError(t, call.Insert(ctx, client, args, opts))

			jobs, err := engine.ProcessInstanceJobs(ctx, "pi-1")
			require.NoError(t, err)
			require.Len(t, jobs, 1)
			jc, err := JobContextOf(jobs[0])
			require.NoError(t, err)
			want := validContext("pi-1")
			want.RootProcessInstanceID = "pi-1" // a top-level instance is its own root
			want.Priority = ptr(int64(0))
			want.Exclusive = ptr(true)
			require.Equal(t, want, jc)

			jobs, err = engine.ProcessInstanceJobs(ctx, "pi-2")
			require.NoError(t, err)
			require.Len(t, jobs, 1)
			jc, err = JobContextOf(jobs[0])
			require.NoError(t, err)
			require.Equal(t, "pi-2", jc.ProcessInstanceID, "context from the args' JobContext method")

			jobs, err = engine.ProcessInstanceJobs(ctx, "pi-3")
			require.NoError(t, err)
			require.Len(t, jobs, 1)
			require.Equal(t, "other", jobs[0].Queue)
			require.Contains(t, string(jobs[0].Metadata), `"tenant": "acme"`, "user metadata kept")

			require.Equal(t, 4, countJobs(ctx, t, engine, schema))
		})
	}
}

func TestJobContextRejectsBadValues(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	long := strings.Repeat("x", MaxIdentifierBytes+1)
	cases := []struct {
		name           string
		jc             JobContext
		field, inError string
	}{
		{"EmptyRequired", JobContext{ProcessInstanceID: "pi"}, "process_definition_key", `process_definition_key "": is required`},
		{"Empty", JobContext{}, "process_definition_key", `process_definition_key "": is required and must not be empty (the job context is empty)`},
		{"TooLong", JobContext{ProcessDefinitionKey: "p", ActivityID: long}, "activity_id", `activity_id "xxxxxxxx`},
		{"ControlCharacter", JobContext{ProcessDefinitionKey: "p", ProcessInstanceID: "pi\n1"}, "process_instance_id", `process_instance_id "pi\n1": contains control character U+000A`},
		{"NUL", JobContext{ProcessDefinitionKey: "p", DeploymentID: "d\x00"}, "deployment_id", `deployment_id "d\x00": contains control character U+0000`},
		{"InvalidUTF8", JobContext{ProcessDefinitionKey: "p", JobDefinitionID: "j\xff"}, "job_definition_id", `job_definition_id "j\xff": is not valid UTF-8`},
		{"RootWithoutInstance", JobContext{ProcessDefinitionKey: "p", RootProcessInstanceID: "root"}, "root_process_instance_id", `root_process_instance_id "root": requires process_instance_id`},
		{"ParentWithoutInstance", JobContext{ProcessDefinitionKey: "p", ParentProcessInstanceID: "caller"}, "parent_process_instance_id", `parent_process_instance_id "caller": requires process_instance_id`},
		{"ParentIsItself", JobContext{ProcessDefinitionKey: "p", ProcessInstanceID: "pi", ParentProcessInstanceID: "pi"}, "parent_process_instance_id", `parent_process_instance_id "pi": is the process instance itself`},
		{"ParentControlCharacter", JobContext{ProcessDefinitionKey: "p", ProcessInstanceID: "pi", ParentProcessInstanceID: "c	"}, "parent_process_instance_id", `parent_process_instance_id "c\t": contains control character U+0009`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var ctxErr *JobContextError
			require.ErrorAs(t, tc.jc.Validate(), &ctxErr)
			require.Equal(t, tc.field, ctxErr.Field)

			engine, schema := testEngine(t)
			client := newInsertClient(t, engine, schema)
			for _, call := range insertcalls.Six {
				// A valid job before the bad one: nothing at all is inserted
				// (for Insert the two are separate calls, so only the bad one
				// is tried).
				if call.Name == "Insert" {
					continue
				}
				err := call.Insert(ctx, client,
					[]river.JobArgs{shipArgs{OrderID: "ok"}, invoiceArgs{Context: tc.jc}},
					[]*river.InsertOpts{validContext("pi-ok").InsertOpts(), nil})
				require.ErrorAs(t, err, &ctxErr, call.Name)
				require.Contains(t, err.Error(), tc.inError, call.Name)
				require.Zero(t, countJobs(ctx, t, engine, schema), "%s inserted a job", call.Name)
			}
			for _, call := range insertcalls.Six {
				err := call.Insert(ctx, client, []river.JobArgs{shipArgs{}}, []*river.InsertOpts{tc.jc.InsertOpts()})
				require.ErrorAs(t, err, &ctxErr, call.Name)
				require.Zero(t, countJobs(ctx, t, engine, schema), "%s inserted a job", call.Name)
			}
		})
	}

	t.Run("LongValueIsShortenedInTheMessage", func(t *testing.T) {
		err := JobContext{ProcessDefinitionKey: long}.Validate()
		require.ErrorContains(t, err, fmt.Sprintf(`... (%d bytes): is %d bytes long, more than the maximum of 255`, len(long), len(long)))
		require.Less(t, len(err.Error()), 200)
	})

	t.Run("GivenTwice", func(t *testing.T) {
		engine, schema := testEngine(t)
		client := newInsertClient(t, engine, schema)
		_, err := client.Insert(ctx, invoiceArgs{Context: validContext("a")}, validContext("b").InsertOpts())
		require.ErrorContains(t, err, "job context given twice")
		require.Zero(t, countJobs(ctx, t, engine, schema))
	})

	t.Run("MalformedInMetadata", func(t *testing.T) {
		engine, schema := testEngine(t)
		client := newInsertClient(t, engine, schema)
		_, err := client.Insert(ctx, shipArgs{}, &river.InsertOpts{Metadata: []byte(`{"bpmn": {"process_definition_key": 42}}`)})
		require.ErrorContains(t, err, `job context in metadata["bpmn"] is malformed`)
		require.Zero(t, countJobs(ctx, t, engine, schema))
	})

	t.Run("MetadataNotAnObject", func(t *testing.T) {
		_, err := validContext("x").AddToMetadata([]byte(`[1, 2]`))
		require.ErrorContains(t, err, `job metadata must be a JSON object to hold a job context, got "[1, 2]"`)
	})
}

// TestJobContextReadInWorker works jobs on a real client and reads their
// context inside the worker with one call.
func TestJobContextReadInWorker(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	engine, schema := testEngine(t)

	var (
		mu   sync.Mutex
		seen = map[string]JobContext{}
		errs []error
	)
	workers := river.NewWorkers()
	river.AddWorker(workers, river.WorkFunc(func(ctx context.Context, job *river.Job[shipArgs]) error {
		jc, err := JobContextOf(job.JobRow)
		mu.Lock()
		defer mu.Unlock()
		if errors.Is(err, ErrNoJobContext) {
			seen[job.Args.OrderID] = JobContext{}
			return nil
		}
		if err != nil {
			errs = append(errs, err)
			return nil
		}
		seen[job.Args.OrderID] = jc
		return nil
	}))

	client, err := river.NewClient(engine.Driver(), &river.Config{
		FetchCooldown:     10 * time.Millisecond,
		FetchPollInterval: 20 * time.Millisecond,
		Middleware:        []rivertype.Middleware{engine.Middleware()},
		Queues:            map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 5}},
		Schema:            schema,
		TestOnly:          true,
		Workers:           workers,
	})
	require.NoError(t, err)

	subscribeChan, cancel := client.Subscribe(river.EventKindJobCompleted)
	defer cancel()
	require.NoError(t, client.Start(ctx))
	t.Cleanup(func() { require.NoError(t, client.Stop(ctx)) })

	_, err = client.Insert(ctx, shipArgs{OrderID: "with"}, validContext("pi-w").InsertOpts())
	require.NoError(t, err)
	_, err = client.Insert(ctx, shipArgs{OrderID: "without"}, nil)
	require.NoError(t, err)

	for range 2 {
		select {
		case <-subscribeChan:
		case <-time.After(10 * time.Second):
			require.FailNow(t, "timed out waiting for jobs to complete")
		}
	}

	mu.Lock()
	defer mu.Unlock()
	require.Empty(t, errs)
	require.Equal(t, "pi-w", seen["with"].ProcessInstanceID)
	require.Equal(t, "order_process", seen["with"].ProcessDefinitionKey)
	require.Equal(t, JobContext{}, seen["without"])
}

// TestJobContextOfTamperedRow: a context edited into an invalid state in the
// table is reported by JobContextOf, naming the problem, instead of being
// returned as if valid.
func TestJobContextOfTamperedRow(t *testing.T) {
	t.Parallel()
	_, err := JobContextOf(&rivertype.JobRow{ID: 7, Metadata: []byte(`{"bpmn": {"process_definition_key": ""}}`)})
	require.ErrorContains(t, err, `process_definition_key "": is required`)

	_, err = JobContextOf(&rivertype.JobRow{ID: 7, Metadata: []byte(`{"bpmn": "nope"}`)})
	require.ErrorContains(t, err, "malformed")

	_, err = JobContextOf(&rivertype.JobRow{ID: 7, Metadata: []byte(`{"other": {"bpmn": 1}}`)})
	require.ErrorIs(t, err, ErrNoJobContext, "the key only counts at the top level")
}

func ptr[T any](v T) *T { return &v }

// TestJobContextLabelledForm: a context with every field set is stored as
// the documented labelled object and read back whole; the array of
// migration riverbpmn/016 and the object of earlier migrations read the
// same; the defaults the form leaves out read back; a malformed context is
// an error naming the field; and migration riverbpmn/028's SQL accessors
// read every field as Go does, river_bpmn_ctx_object giving Go's object
// form.
func TestJobContextLabelledForm(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	priority, exclusiveFlag := int64(-7), false
	full := JobContext{
		ProcessInstanceID: "sub", RootProcessInstanceID: "top", ProcessDefinitionKey: "invoice",
		ActivityID: "approve", JobDefinitionID: "invoice:approve", DeploymentID: "dep-7",
		JobType: JobTypeTimer, Priority: &priority, Exclusive: &exclusiveFlag, RetryCycle: "R3/PT1S", TenantID: "acme",
	}
	metadata, err := full.AddToMetadata([]byte(`{"mine": 1}`))
	require.NoError(t, err)
	require.JSONEq(t, `{"mine": 1, "bpmn": {"instance": "sub", "root": "top", "process": "invoice",
		"job": "invoice:approve", "priority": -7, "exclusive": false, "deployment": "dep-7", "type": "timer",
		"retry": "R3/PT1S", "tenant": "acme"}}`, string(metadata), "the activity the job definition names is left out")
	got, err := JobContextOf(&rivertype.JobRow{ID: 1, Metadata: metadata})
	require.NoError(t, err)
	require.Equal(t, full, got)

	object, err := json.Marshal(map[string]any{"bpmn": full})
	require.NoError(t, err)
	got, err = JobContextOf(&rivertype.JobRow{ID: 2, Metadata: object})
	require.NoError(t, err)
	require.Equal(t, full, got, "the object form of migrations before 016 reads the same")
	array, err := full.compactJSON()
	require.NoError(t, err)
	got, err = JobContextOf(&rivertype.JobRow{ID: 2, Metadata: []byte(`{"bpmn": ` + string(array) + `}`)})
	require.NoError(t, err)
	require.Equal(t, full, got, "the array of migration 016 reads the same")

	zero, yes := int64(0), true
	defaults := JobContext{ProcessInstanceID: "pi", ProcessDefinitionKey: "p", Priority: &zero, Exclusive: &yes}
	metadata, err = defaults.AddToMetadata(nil)
	require.NoError(t, err)
	require.JSONEq(t, `{"bpmn": {"instance": "pi", "process": "p"}}`, string(metadata),
		"priority 0, exclusive with an instance and the root equal to the instance are left out")
	got, err = JobContextOf(&rivertype.JobRow{ID: 3, Metadata: metadata})
	require.NoError(t, err)
	defaults.RootProcessInstanceID = "pi"
	require.Equal(t, defaults, got, "what is left out reads back")

	noActivity := JobContext{ProcessInstanceID: "pi", ProcessDefinitionKey: "p", JobDefinitionID: "p:x", Exclusive: &yes}
	metadata, err = noActivity.addResolvedToMetadata(nil, true)
	require.NoError(t, err)
	require.JSONEq(t, `{"bpmn": {"instance": "pi", "process": "p", "job": "p:x", "activity": null, "priority": null}}`, string(metadata),
		"an activity that would be derived is null when there is none; a resolved nil priority is null")
	got, err = JobContextOf(&rivertype.JobRow{ID: 4, Metadata: metadata})
	require.NoError(t, err)
	noActivity.RootProcessInstanceID = "pi"
	require.Equal(t, noActivity, got)

	plain := JobContext{Priority: &priority, Exclusive: &yes}
	metadata, err = plain.AddToMetadata(nil)
	require.NoError(t, err)
	require.JSONEq(t, `{"bpmn": {"priority": -7, "exclusive": true}}`, string(metadata), "exclusive without an instance is written")

	called := JobContext{ProcessInstanceID: "sub", RootProcessInstanceID: "top", ParentProcessInstanceID: "mid", ProcessDefinitionKey: "p"}
	metadata, err = called.AddToMetadata(nil)
	require.NoError(t, err)
	require.JSONEq(t, `{"bpmn": {"instance": "sub", "process": "p", "root": "top", "parent": "mid"}}`, string(metadata))

	_, err = JobContextOf(&rivertype.JobRow{ID: 5, Metadata: []byte(`{"bpmn": ["pi", "p", null, null, 1, true, null, null, null, null, null, "x", "y"]}`)})
	require.ErrorContains(t, err, "job context array has 13 elements, more than the 12 known fields")
	_, err = JobContextOf(&rivertype.JobRow{ID: 6, Metadata: []byte(`{"bpmn": {"instance": "pi", "process": "p", "priority": "high"}}`)})
	require.ErrorContains(t, err, `job context in metadata["bpmn"] is malformed`)
	require.ErrorContains(t, err, `field "priority" (label "priority")`)
	_, err = JobContextOf(&rivertype.JobRow{ID: 7, Metadata: []byte(`{"bpmn": {"instance": 7, "process": "p"}}`)})
	require.ErrorContains(t, err, `field "process_instance_id" (label "instance")`)

	engine, _ := testEngine(t)
	full.ParentProcessInstanceID = "mid"
	contexts := map[string]JobContext{"full": full, "defaults": defaults, "noActivity": noActivity, "plain": plain, "called": called}
	for name, jc := range contexts {
		metadata, err = jc.addResolvedToMetadata(nil, true)
		require.NoError(t, err)
		want, err := JobContextOf(&rivertype.JobRow{ID: 8, Metadata: metadata})
		require.NoError(t, err)
		var (
			instance, definition, activity, jobDefinition, deployment, retryCycle, tenant, root, parent *string
			gotPriority                                                                                 int64
			isExclusive                                                                                 *bool
			isTimer                                                                                     bool
			asObject                                                                                    string
		)
		require.NoError(t, engine.dbPool.QueryRow(ctx, engine.sql(`
			SELECT /* TEMPLATE: schema */river_bpmn_ctx_instance($1), /* TEMPLATE: schema */river_bpmn_ctx_definition($1),
				/* TEMPLATE: schema */river_bpmn_ctx_activity($1), /* TEMPLATE: schema */river_bpmn_ctx_job_definition($1),
				/* TEMPLATE: schema */river_bpmn_ctx_deployment($1), /* TEMPLATE: schema */river_bpmn_ctx_retry_cycle($1),
				/* TEMPLATE: schema */river_bpmn_ctx_tenant($1), /* TEMPLATE: schema */river_bpmn_ctx_root($1),
				/* TEMPLATE: schema */river_bpmn_ctx_parent($1), /* TEMPLATE: schema */river_bpmn_ctx_priority($1),
				/* TEMPLATE: schema */river_bpmn_ctx_exclusive($1),
				/* TEMPLATE: schema */river_bpmn_ctx_is_timer($1), /* TEMPLATE: schema */river_bpmn_ctx_object($1::jsonb -> 'bpmn')::text`),
			metadata).Scan(&instance, &definition, &activity, &jobDefinition, &deployment, &retryCycle, &tenant, &root, &parent,
			&gotPriority, &isExclusive, &isTimer, &asObject))
		str := func(s *string) string {
			if s == nil {
				return ""
			}
			return *s
		}
		stored := want.stored()
		require.Equal(t, []string{want.ProcessInstanceID, want.ProcessDefinitionKey, want.ActivityID, want.JobDefinitionID,
			want.DeploymentID, want.RetryCycle, want.TenantID, stored.RootProcessInstanceID, want.ParentProcessInstanceID},
			[]string{str(instance), str(definition), str(activity), str(jobDefinition), str(deployment), str(retryCycle),
				str(tenant), str(root), str(parent)}, name)
		wantPriority := int64(0)
		if want.Priority != nil {
			wantPriority = *want.Priority
		}
		require.Equal(t, wantPriority, gotPriority, name)
		require.Equal(t, want.Exclusive != nil && *want.Exclusive, isExclusive != nil && *isExclusive, name)
		require.Equal(t, want.JobType == JobTypeTimer, isTimer, name)
		wantObject, err := json.Marshal(stored)
		require.NoError(t, err)
		if stored.ProcessDefinitionKey == "" { // json.Marshal writes it empty; no stored form holds it so
			wantObject = bytes.Replace(wantObject, []byte(`"process_definition_key":"",`), nil, 1)
			wantObject = bytes.Replace(wantObject, []byte(`,"process_definition_key":""`), nil, 1)
		}
		require.JSONEq(t, string(wantObject), asObject, "%s: river_bpmn_ctx_object gives Go's object form", name)

		// The field reader of single fields (exclusive key, retry cycle,
		// telemetry) reads as the accessors do.
		fields, found, err := metadataContextFields(metadata)
		require.NoError(t, err)
		require.True(t, found)
		require.Equal(t, isExclusive != nil && *isExclusive, string(fields.field("exclusive")) == "true", name)
		if activity != nil {
			require.JSONEq(t, fmt.Sprintf("%q", *activity), string(fields.field("activity_id")), name)
		} else {
			require.Nil(t, fields.field("activity_id"), name)
		}
	}

	// The priority accessor reads integers in bigint's range, 0 otherwise.
	for value, want := range map[string]int64{
		"7": 7, "-7": -7, "1e2": 100, "1.0": 0, "1.5": 0, `"7"`: 0, "true": 0, "null": 0, "1e30": 0,
		"9223372036854775807": 9223372036854775807, "-9223372036854775808": -9223372036854775808, "9223372036854775808": 0,
	} {
		var got int64
		require.NoError(t, engine.dbPool.QueryRow(ctx, engine.sql(`SELECT /* TEMPLATE: schema */river_bpmn_ctx_priority($1::jsonb)`),
			fmt.Sprintf(`{"bpmn": {"process": "p", "priority": %s}}`, value)).Scan(&got))
		require.Equal(t, want, got, value)
	}
}

// TestJobContextCompactCodec holds the compact form's hand-written encoder
// and decoder to encoding/json: the bytes are json.Marshal's of the array
// (escapes included), and every value reads back, escaped or not.
func TestJobContextCompactCodec(t *testing.T) {
	t.Parallel()
	priority, exclusiveFlag := int64(0), true
	for _, text := range []string{"plain", `quo"te`, `back\slash`, "<b>&amp;", "é-ü", "line\u2028sep", "日本", "a/b"} {
		jc := JobContext{
			ProcessInstanceID: text, ProcessDefinitionKey: "p" + text, ActivityID: text, TenantID: text,
			RootProcessInstanceID: text + "-root", Priority: &priority, Exclusive: &exclusiveFlag,
		}
		got, err := jc.compactJSON()
		require.NoError(t, err)
		want, err := json.Marshal([]any{text, "p" + text, text, nil, priority, exclusiveFlag, nil, nil, nil, text, text + "-root"})
		require.NoError(t, err)
		require.Equal(t, string(want), string(got), "%q", text)

		var back JobContext
		require.NoError(t, json.Unmarshal(got, &back))
		require.Equal(t, jc, back, "%q", text)
	}

	noFlags := JobContext{ProcessInstanceID: "pi", ProcessDefinitionKey: "p", JobDefinitionID: "p:a"}
	got, err := noFlags.compactJSON()
	require.NoError(t, err)
	require.Equal(t, `["pi","p",null,"p:a"]`, string(got), "trailing nulls left out, a nil priority and exclusive among them")
	onlyPriority := JobContext{Priority: &priority}
	got, err = onlyPriority.compactJSON()
	require.NoError(t, err)
	require.Equal(t, `[null,null,null,null,0]`, string(got), "a zero priority is a value")

	var jc JobContext
	err = json.Unmarshal([]byte(`["pi", 7]`), &jc)
	require.ErrorContains(t, err, `field "process_definition_key" (position 1)`)
	err = json.Unmarshal([]byte(`["pi", "p", null, null, 1, "yes"]`), &jc)
	require.ErrorContains(t, err, `field "exclusive" (position 5)`)
}

// TestJobContextParentIsTheRootByDefault: a job of a called instance that
// names its caller and no root gets the caller as its root (a top-level
// caller is the root of what it calls), stored with the parent; naming both
// keeps both.
func TestJobContextParentIsTheRootByDefault(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	engine, schema := testEngine(t)
	client := newInsertClient(t, engine, schema)

	called := JobContext{ProcessInstanceID: "called", ParentProcessInstanceID: "caller", ProcessDefinitionKey: "p"}
	deeper := JobContext{ProcessInstanceID: "deeper", ParentProcessInstanceID: "called", RootProcessInstanceID: "caller", ProcessDefinitionKey: "p"}
	for _, jc := range []JobContext{called, deeper} {
		_, err := client.Insert(ctx, shipArgs{OrderID: jc.ProcessInstanceID}, jc.InsertOpts())
		require.NoError(t, err)
	}
	for id, want := range map[string][2]string{"called": {"caller", "caller"}, "deeper": {"caller", "called"}} {
		jobs, err := engine.ProcessInstanceJobs(ctx, id)
		require.NoError(t, err)
		require.Len(t, jobs, 1)
		got, err := JobContextOf(jobs[0])
		require.NoError(t, err)
		require.Equal(t, want, [2]string{got.RootProcessInstanceID, got.ParentProcessInstanceID}, id)
	}
}
