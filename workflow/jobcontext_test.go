package workflow

import (
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

// insertCall is one of River's six insert calls, inserting n jobs built by
// args with options opts.
type insertCall struct {
	name   string
	insert func(ctx context.Context, client *river.Client[pgx.Tx], args []river.JobArgs, opts []*river.InsertOpts) error
}

func manyParams(args []river.JobArgs, opts []*river.InsertOpts) []river.InsertManyParams {
	params := make([]river.InsertManyParams, len(args))
	for i := range args {
		params[i] = river.InsertManyParams{Args: args[i], InsertOpts: opts[i]}
	}
	return params
}

func withTx(ctx context.Context, client *river.Client[pgx.Tx], fn func(tx pgx.Tx) error) error {
	tx, err := client.Driver().GetExecutor().Begin(ctx)
	if err != nil {
		return err
	}
	pgxTx := client.Driver().UnwrapTx(tx)
	if err := fn(pgxTx); err != nil {
		_ = pgxTx.Rollback(ctx)
		return err
	}
	return pgxTx.Commit(ctx)
}

var sixInsertCalls = []insertCall{
	{"Insert", func(ctx context.Context, c *river.Client[pgx.Tx], args []river.JobArgs, opts []*river.InsertOpts) error {
		for i := range args {
			if _, err := c.Insert(ctx, args[i], opts[i]); err != nil {
				return err
			}
		}
		return nil
	}},
	{"InsertTx", func(ctx context.Context, c *river.Client[pgx.Tx], args []river.JobArgs, opts []*river.InsertOpts) error {
		return withTx(ctx, c, func(tx pgx.Tx) error {
			for i := range args {
				if _, err := c.InsertTx(ctx, tx, args[i], opts[i]); err != nil {
					return err
				}
			}
			return nil
		})
	}},
	{"InsertMany", func(ctx context.Context, c *river.Client[pgx.Tx], args []river.JobArgs, opts []*river.InsertOpts) error {
		_, err := c.InsertMany(ctx, manyParams(args, opts))
		return err
	}},
	{"InsertManyTx", func(ctx context.Context, c *river.Client[pgx.Tx], args []river.JobArgs, opts []*river.InsertOpts) error {
		return withTx(ctx, c, func(tx pgx.Tx) error {
			_, err := c.InsertManyTx(ctx, tx, manyParams(args, opts))
			return err
		})
	}},
	{"InsertManyFast", func(ctx context.Context, c *river.Client[pgx.Tx], args []river.JobArgs, opts []*river.InsertOpts) error {
		_, err := c.InsertManyFast(ctx, manyParams(args, opts))
		return err
	}},
	{"InsertManyFastTx", func(ctx context.Context, c *river.Client[pgx.Tx], args []river.JobArgs, opts []*river.InsertOpts) error {
		return withTx(ctx, c, func(tx pgx.Tx) error {
			_, err := c.InsertManyFastTx(ctx, tx, manyParams(args, opts))
			return err
		})
	}},
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

	for _, call := range sixInsertCalls {
		t.Run(call.name, func(t *testing.T) {
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
			require.NoError(t, call.insert(ctx, client, args, opts))

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
		{"ParentWithoutInstance", JobContext{ProcessDefinitionKey: "p", ParentProcessInstanceID: "up"}, "parent_process_instance_id", `parent_process_instance_id "up": requires process_instance_id`},
		{"ParentIsInstance", JobContext{ProcessDefinitionKey: "p", ProcessInstanceID: "pi", ParentProcessInstanceID: "pi"}, "parent_process_instance_id", `parent_process_instance_id "pi": equals process_instance_id`},
		{"ParentControlCharacter", JobContext{ProcessDefinitionKey: "p", ProcessInstanceID: "pi", ParentProcessInstanceID: "u\tp"}, "parent_process_instance_id", `parent_process_instance_id "u\tp": contains control character U+0009`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var ctxErr *JobContextError
			require.ErrorAs(t, tc.jc.Validate(), &ctxErr)
			require.Equal(t, tc.field, ctxErr.Field)

			engine, schema := testEngine(t)
			client := newInsertClient(t, engine, schema)
			for _, call := range sixInsertCalls {
				// A valid job before the bad one: nothing at all is inserted
				// (for Insert the two are separate calls, so only the bad one
				// is tried).
				if call.name == "Insert" {
					continue
				}
				err := call.insert(ctx, client,
					[]river.JobArgs{shipArgs{OrderID: "ok"}, invoiceArgs{Context: tc.jc}},
					[]*river.InsertOpts{validContext("pi-ok").InsertOpts(), nil})
				require.ErrorAs(t, err, &ctxErr, call.name)
				require.Contains(t, err.Error(), tc.inError, call.name)
				require.Zero(t, countJobs(ctx, t, engine, schema), "%s inserted a job", call.name)
			}
			for _, call := range sixInsertCalls {
				err := call.insert(ctx, client, []river.JobArgs{shipArgs{}}, []*river.InsertOpts{tc.jc.InsertOpts()})
				require.ErrorAs(t, err, &ctxErr, call.name)
				require.Zero(t, countJobs(ctx, t, engine, schema), "%s inserted a job", call.name)
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
// migration riverbpmn/016 and the object of migrations before it read the
// same; what the labelled form leaves out (a true exclusive, the activity
// the job definition names, the root equal to the instance) reads back; an
// array longer than the known fields is an error naming its length; and
// migration riverbpmn/026's SQL accessors read every field of every form as
// Go does, river_bpmn_ctx_object giving Go's object form.
func TestJobContextLabelledForm(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	priority, exclusiveFlag := int64(-7), false
	full := JobContext{
		ProcessInstanceID: "sub", RootProcessInstanceID: "top", ParentProcessInstanceID: "mid", ProcessDefinitionKey: "invoice",
		ActivityID: "approve", JobDefinitionID: "invoice:approve", DeploymentID: "dep-7",
		JobType: JobTypeTimer, Priority: &priority, Exclusive: &exclusiveFlag, RetryCycle: "R3/PT1S", TenantID: "acme",
	}
	metadata, err := full.AddToMetadata([]byte(`{"mine": 1}`))
	require.NoError(t, err)
	require.JSONEq(t, `{"mine": 1, "bpmn": {"instance": "sub", "process": "invoice", "job": "invoice:approve",
		"priority": -7, "exclusive": false, "deployment": "dep-7", "type": "timer", "retry": "R3/PT1S",
		"tenant": "acme", "root": "top", "parent": "mid"}}`, string(metadata), "the activity is the job definition's")
	got, err := JobContextOf(&rivertype.JobRow{ID: 1, Metadata: metadata})
	require.NoError(t, err)
	require.Equal(t, full, got)

	object, err := json.Marshal(map[string]any{"bpmn": full})
	require.NoError(t, err)
	got, err = JobContextOf(&rivertype.JobRow{ID: 2, Metadata: object})
	require.NoError(t, err)
	require.Equal(t, full, got, "the object form reads the same")

	withoutParent := full
	withoutParent.ParentProcessInstanceID = ""
	array, err := withoutParent.compactJSON()
	require.NoError(t, err)
	got, err = JobContextOf(&rivertype.JobRow{ID: 3, Metadata: []byte(`{"bpmn": ` + string(array) + `}`)})
	require.NoError(t, err)
	require.Equal(t, withoutParent, got, "the array form reads the same")

	trueFlag, zero := true, int64(0)
	for _, tc := range []struct {
		name   string
		jc     JobContext
		stored string
	}{
		{"Short", JobContext{ProcessInstanceID: "pi", ProcessDefinitionKey: "p", Priority: &zero, Exclusive: &trueFlag},
			`{"instance": "pi", "process": "p"}`},
		{"Unresolved", JobContext{ProcessInstanceID: "pi", ProcessDefinitionKey: "p"},
			`{"instance": "pi", "process": "p"}`},
		{"OnlyDefaults", JobContext{Priority: &zero, Exclusive: &trueFlag}, `{"exclusive": true}`},
		{"NoInstanceNotExclusive", JobContext{Priority: &zero, Exclusive: ptr(false)}, `{"exclusive": false}`},
		{"OtherJobDefinition", JobContext{ProcessInstanceID: "pi", ProcessDefinitionKey: "p", ActivityID: "a", JobDefinitionID: "q:a", Priority: &zero, Exclusive: &trueFlag},
			`{"instance": "pi", "process": "p", "activity": "a", "job": "q:a"}`},
		{"OtherActivity", JobContext{ProcessInstanceID: "pi", ProcessDefinitionKey: "p", ActivityID: "b", JobDefinitionID: "p:a", Priority: &zero, Exclusive: &trueFlag},
			`{"instance": "pi", "process": "p", "activity": "b", "job": "p:a"}`},
		{"NoActivity", JobContext{ProcessInstanceID: "pi", ProcessDefinitionKey: "p", JobDefinitionID: "p:a", Priority: &zero, Exclusive: &trueFlag},
			`{"instance": "pi", "process": "p", "activity": null, "job": "p:a"}`},
		{"ColonInKey", JobContext{ProcessInstanceID: "pi", ProcessDefinitionKey: "p:x", ActivityID: "a", JobDefinitionID: "p:x:a", Priority: &zero, Exclusive: &trueFlag},
			`{"instance": "pi", "process": "p:x", "job": "p:x:a"}`},
		{"RootIsInstance", JobContext{ProcessInstanceID: "pi", RootProcessInstanceID: "pi", ProcessDefinitionKey: "p", Priority: &zero, Exclusive: &trueFlag},
			`{"instance": "pi", "process": "p"}`},
	} {
		metadata, err := tc.jc.AddToMetadata(nil)
		require.NoError(t, err, tc.name)
		require.JSONEq(t, `{"bpmn": `+tc.stored+`}`, string(metadata), tc.name)
		var back JobContext
		require.NoError(t, json.Unmarshal([]byte(tc.stored), &back), tc.name)
		want := tc.jc
		if want.RootProcessInstanceID == want.ProcessInstanceID {
			want.RootProcessInstanceID = ""
		}
		// What is not given reads as the defaults (as the middleware
		// resolves a context without declarations).
		if want.Priority == nil {
			want.Priority = &zero
		}
		if want.Exclusive == nil && want.ProcessInstanceID != "" {
			want.Exclusive = &trueFlag
		}
		require.Equal(t, want, back, tc.name)
	}

	_, err = JobContextOf(&rivertype.JobRow{ID: 3, Metadata: []byte(`{"bpmn": ["pi", "p", null, null, 1, true, null, null, null, null, null, "x", "y"]}`)})
	require.ErrorContains(t, err, "job context array has 13 elements, more than the 11 known fields")
	_, err = JobContextOf(&rivertype.JobRow{ID: 4, Metadata: []byte(`{"bpmn": ["pi", "p", null, null, "high"]}`)})
	require.ErrorContains(t, err, `job context in metadata["bpmn"] is malformed`)
	require.ErrorContains(t, err, "priority")
	_, err = JobContextOf(&rivertype.JobRow{ID: 5, Metadata: []byte(`{"bpmn": {"process": "p", "priority": "high"}}`)})
	require.ErrorContains(t, err, `priority`)

	// The SQL accessors read every form as Go does.
	engine, _ := testEngine(t)
	labelled, err := full.AddToMetadata(nil)
	require.NoError(t, err)
	for _, form := range []struct {
		name     string
		metadata []byte
		want     JobContext
	}{
		{"labelled", labelled, full},
		{"array", []byte(`{"bpmn": ` + string(array) + `}`), withoutParent},
		{"object", object, full},
	} {
		var (
			instance, definition, activity, jobDefinition, deployment, retryCycle, tenant, root, parent *string
			gotPriority                                                                                 int64
			isExclusive, isTimer                                                                        bool
			asObject                                                                                    string
		)
		require.NoError(t, engine.dbPool.QueryRow(ctx, engine.sql(`
			SELECT /* TEMPLATE: schema */river_bpmn_ctx_instance($1), /* TEMPLATE: schema */river_bpmn_ctx_definition($1),
				/* TEMPLATE: schema */river_bpmn_ctx_activity($1), /* TEMPLATE: schema */river_bpmn_ctx_job_definition($1),
				/* TEMPLATE: schema */river_bpmn_ctx_deployment($1), /* TEMPLATE: schema */river_bpmn_ctx_retry_cycle($1),
				/* TEMPLATE: schema */river_bpmn_ctx_tenant($1), /* TEMPLATE: schema */river_bpmn_ctx_root($1),
				/* TEMPLATE: schema */river_bpmn_ctx_parent($1),
				/* TEMPLATE: schema */river_bpmn_ctx_priority($1), /* TEMPLATE: schema */river_bpmn_ctx_exclusive($1),
				/* TEMPLATE: schema */river_bpmn_ctx_is_timer($1), /* TEMPLATE: schema */river_bpmn_ctx_object($1::jsonb -> 'bpmn')::text`),
			form.metadata).Scan(&instance, &definition, &activity, &jobDefinition, &deployment, &retryCycle, &tenant, &root, &parent,
			&gotPriority, &isExclusive, &isTimer, &asObject))
		str := func(s *string) string {
			if s == nil {
				return ""
			}
			return *s
		}
		require.Equal(t, []string{form.want.ProcessInstanceID, form.want.ProcessDefinitionKey, form.want.ActivityID, form.want.JobDefinitionID,
			form.want.DeploymentID, form.want.RetryCycle, form.want.TenantID, form.want.RootProcessInstanceID, form.want.ParentProcessInstanceID},
			[]string{str(instance), str(definition), str(activity), str(jobDefinition), str(deployment), str(retryCycle), str(tenant), str(root), str(parent)}, form.name)
		require.Equal(t, priority, gotPriority, form.name)
		require.False(t, isExclusive, form.name)
		require.True(t, isTimer, form.name)
		want, err := json.Marshal(form.want)
		require.NoError(t, err)
		require.JSONEq(t, string(want), asObject, "river_bpmn_ctx_object gives Go's object form (%s)", form.name)
	}

	// What the labelled form leaves out reads back in SQL as in Go: the
	// default exclusive, the activity of the job definition (not of one
	// whose id only looks like it, nor where the activity is null), the
	// absent root; the object of older migrations has no such defaults.
	for _, tc := range []struct {
		metadata       string
		activity       *string
		exclusive      *bool
		instance, root *string
	}{
		{`{"bpmn": {"instance": "pi", "process": "p", "job": "p:a"}}`, ptr("a"), ptr(true), ptr("pi"), nil},
		{`{"bpmn": {"process": "p", "job": "p:a", "activity": null, "exclusive": false}}`, nil, ptr(false), nil, nil},
		{`{"bpmn": {"process": "p", "job": "px:a"}}`, nil, nil, nil, nil},
		{`{"bpmn": {"instance": "pi", "process": "p%", "job": "p%:a_b"}}`, ptr("a_b"), ptr(true), ptr("pi"), nil},
		{`{"bpmn": {"process": "", "job": ":a"}}`, nil, nil, nil, nil},
		{`{"bpmn": {"instance": "pi", "process": "p", "job": "p:a", "exclusive": null}}`, ptr("a"), ptr(false), ptr("pi"), nil},
		{`{"bpmn": {"process_instance_id": "pi", "priority": 3}}`, nil, nil, ptr("pi"), nil},
		{`{"bpmn": {"deployment_id": "d", "priority": 3}}`, nil, nil, nil, nil},
		{`{"bpmn": {"process_definition_key": "p", "job_definition_id": "p:a"}}`, nil, nil, nil, nil},
		{`{"bpmn": ["pi", "p", null, "p:a"]}`, nil, nil, ptr("pi"), nil},
		{`{"bpmn": {"instance": "pi", "root": "top"}}`, nil, ptr(true), ptr("pi"), ptr("top")},
	} {
		var (
			activity, instance, root *string
			isExclusive              *bool
		)
		require.NoError(t, engine.dbPool.QueryRow(ctx, engine.sql(`
			SELECT /* TEMPLATE: schema */river_bpmn_ctx_activity($1), /* TEMPLATE: schema */river_bpmn_ctx_exclusive($1),
				/* TEMPLATE: schema */river_bpmn_ctx_instance($1), /* TEMPLATE: schema */river_bpmn_ctx_root($1)`),
			tc.metadata).Scan(&activity, &isExclusive, &instance, &root))
		require.Equal(t, tc.activity, activity, tc.metadata)
		require.Equal(t, tc.exclusive, isExclusive, tc.metadata)
		require.Equal(t, tc.instance, instance, tc.metadata)
		require.Equal(t, tc.root, root, tc.metadata)

		fields, found, err := metadataContextFields([]byte(tc.metadata))
		require.NoError(t, err)
		require.True(t, found)
		var goActivity *string
		if raw := fields.field("activity_id"); raw != nil {
			goActivity = new(string)
			require.NoError(t, json.Unmarshal(raw, goActivity))
		}
		require.Equal(t, tc.activity, goActivity, "Go reads as SQL: %s", tc.metadata)
		var goExclusive *bool
		if raw := fields.field("exclusive"); raw != nil {
			goExclusive = new(bool)
			if json.Unmarshal(raw, goExclusive) != nil {
				goExclusive = ptr(false)
			}
		}
		if tc.exclusive != nil && !*tc.exclusive {
			require.True(t, goExclusive == nil || !*goExclusive, "Go reads as SQL: %s", tc.metadata)
		} else {
			require.Equal(t, tc.exclusive, goExclusive, "Go reads as SQL: %s", tc.metadata)
		}
	}

	// The priority accessor reads integers in bigint's range, 0 otherwise.
	for value, want := range map[string]int64{
		"7": 7, "-7": -7, "1e2": 100, "1.0": 0, "1.5": 0, `"7"`: 0, "true": 0, "null": 0, "1e30": 0,
		"9223372036854775807": 9223372036854775807, "-9223372036854775808": -9223372036854775808, "9223372036854775808": 0,
	} {
		for _, form := range []string{`{"bpmn": [null, "p", null, null, %s]}`, `{"bpmn": {"priority": %s}}`,
			`{"bpmn": {"process_definition_key": "p", "priority": %s}}`} {
			var got int64
			require.NoError(t, engine.dbPool.QueryRow(ctx, engine.sql(`SELECT /* TEMPLATE: schema */river_bpmn_ctx_priority($1::jsonb)`),
				fmt.Sprintf(form, value)).Scan(&got))
			require.Equal(t, want, got, form, value)
		}
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

// TestJobContextParentInstance: the parent process instance is stored when
// set and read back in Go and by river_bpmn_ctx_parent; given without a
// root, the parent is the root (a call from a top-level instance); a
// top-level instance has none.
func TestJobContextParentInstance(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	engine, schema := testEngine(t)
	client := newInsertClient(t, engine, schema)
	for _, tc := range []struct {
		name                 string
		jc                   JobContext
		stored               string
		wantRoot, wantParent string
	}{
		{"CalledFromTop", JobContext{ProcessInstanceID: "sub", ProcessDefinitionKey: "p", ParentProcessInstanceID: "top"},
			`{"instance": "sub", "process": "p", "root": "top", "parent": "top"}`, "top", "top"},
		{"Deeper", JobContext{ProcessInstanceID: "leaf", ProcessDefinitionKey: "p", ParentProcessInstanceID: "mid", RootProcessInstanceID: "top"},
			`{"instance": "leaf", "process": "p", "root": "top", "parent": "mid"}`, "top", "mid"},
		{"TopLevel", JobContext{ProcessInstanceID: "top", ProcessDefinitionKey: "p"},
			`{"instance": "top", "process": "p"}`, "top", ""},
	} {
		for _, opts := range []*river.InsertOpts{tc.jc.InsertOpts(), nil} {
			var (
				res *rivertype.JobInsertResult
				err error
			)
			if opts != nil {
				res, err = client.Insert(ctx, shipArgs{OrderID: tc.name}, opts)
			} else {
				res, err = client.Insert(ctx, invoiceArgs{Context: tc.jc}, nil)
			}
			require.NoError(t, err, tc.name)
			require.JSONEq(t, `{"bpmn": `+tc.stored+`}`, string(res.Job.Metadata), tc.name)
			jc, err := JobContextOf(res.Job)
			require.NoError(t, err, tc.name)
			require.Equal(t, tc.wantRoot, jc.RootProcessInstanceID, tc.name)
			require.Equal(t, tc.wantParent, jc.ParentProcessInstanceID, tc.name)
			var parent *string
			require.NoError(t, engine.dbPool.QueryRow(ctx, engine.sql(`SELECT /* TEMPLATE: schema */river_bpmn_ctx_parent(metadata)
				FROM /* TEMPLATE: schema */river_job WHERE id = $1`), res.Job.ID).Scan(&parent))
			if tc.wantParent == "" {
				require.Nil(t, parent, tc.name)
			} else {
				require.Equal(t, tc.wantParent, *parent, tc.name)
			}
		}
	}
}
