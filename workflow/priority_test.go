package workflow

import (
	"context"
	"math"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/priority"
)

type paymentArgs struct {
	CustomerStatus string `json:"customer_status"`
}

func (paymentArgs) Kind() string { return "charge_payment" }

// orderConfig declares a process with priority 5 and three job definitions:
// one whose activity priority is the VIP function, one with a constant
// activity priority, one without (so the process's applies).
func orderConfig() *Config {
	return &Config{
		ProcessDefinitions: []ProcessDefinition{
			{Key: "order", Priority: priority.Constant(5), DeploymentID: "dep-1"},
			{Key: "unprioritised"},
		},
		JobDefinitions: []JobDefinition{
			{ID: "charge", ProcessDefinitionKey: "order", ActivityID: "charge", Kind: "charge_payment",
				Priority: priority.FromArgs(func(a paymentArgs) int64 {
					if a.CustomerStatus == "VIP" {
						return 10
					}
					return 0
				})},
			{ID: "ship", ProcessDefinitionKey: "order", ActivityID: "ship", Kind: "ship_order", Priority: priority.Constant(-3)},
			{ID: "ship-plain", ProcessDefinitionKey: "order", ActivityID: "ship_plain", Kind: "ship_order"},
		},
	}
}

func defContext(instance, jobDefinitionID string) JobContext {
	return JobContext{ProcessInstanceID: instance, JobDefinitionID: jobDefinitionID}
}

// jobPriority reads a job's priority back as a worker would.
func jobPriority(ctx context.Context, t *testing.T, engine *Engine, jobID int64) *int64 {
	t.Helper()
	job, err := engine.Driver().GetExecutor().JobGetByID(ctx, &riverdriver.JobGetByIDParams{ID: jobID, Schema: engine.config.Schema})
	require.NoError(t, err)
	jc, err := JobContextOf(job)
	require.NoError(t, err)
	return jc.Priority
}

func insertJob(ctx context.Context, t *testing.T, client *river.Client[pgx.Tx], args river.JobArgs, opts *river.InsertOpts) int64 {
	t.Helper()
	res, err := client.Insert(ctx, args, opts)
	require.NoError(t, err)
	return res.Job.ID
}

func TestPriorityPrecedence(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	engine, schema := testEngineWithConfig(t, orderConfig())
	client := newInsertClient(t, engine, schema)

	cases := []struct {
		name string
		args river.JobArgs
		opts *river.InsertOpts
		want int64
	}{
		{"ActivityFunctionVIP", paymentArgs{CustomerStatus: "VIP"}, defContext("pi-1", "charge").InsertOpts(), 10},
		{"ActivityFunctionRegularWinsOverProcess", paymentArgs{CustomerStatus: "regular"}, defContext("pi-1", "charge").InsertOpts(), 0},
		{"ActivityConstant", shipArgs{}, defContext("pi-1", "ship").InsertOpts(), -3},
		{"Process", shipArgs{}, defContext("pi-1", "ship-plain").InsertOpts(), 5},
		// Activity "wrap" has no job definition of kind ship_order.
		{"ProcessWithoutJobDefinition", shipArgs{}, JobContext{ProcessDefinitionKey: "order", ActivityID: "wrap"}.InsertOpts(), 5},
		{"ExplicitBelowDeclarations", shipArgs{}, JobContext{ProcessDefinitionKey: "order", ActivityID: "wrap", Priority: ptr(int64(99))}.InsertOpts(), 5},
		{"Explicit", shipArgs{}, JobContext{ProcessDefinitionKey: "unprioritised", Priority: ptr(int64(99))}.InsertOpts(), 99},
		{"Default", shipArgs{}, JobContext{ProcessDefinitionKey: "unprioritised"}.InsertOpts(), 0},
		{"PlainJobExplicit", shipArgs{}, JobContext{Priority: ptr(int64(math.MinInt64))}.InsertOpts(), math.MinInt64},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			id := insertJob(ctx, t, client, tc.args, tc.opts)
			require.Equal(t, ptr(tc.want), jobPriority(ctx, t, engine, id))
		})
	}

	t.Run("OverrideWinsOverActivity", func(t *testing.T) {
		require.NoError(t, engine.SetOverridingJobPriority(ctx, "charge", 42, false))
		id := insertJob(ctx, t, client, paymentArgs{CustomerStatus: "VIP"}, defContext("pi-2", "charge").InsertOpts())
		require.Equal(t, ptr(int64(42)), jobPriority(ctx, t, engine, id))
		require.NoError(t, engine.ClearOverridingJobPriority(ctx, "charge"))
	})

	t.Run("PlainRiverJobHasNone", func(t *testing.T) {
		res, err := client.Insert(ctx, shipArgs{}, nil)
		require.NoError(t, err)
		_, err = JobContextOf(res.Job)
		require.ErrorIs(t, err, ErrNoJobContext, "a plain job has priority 0 by having none")
		require.JSONEq(t, `{}`, string(res.Job.Metadata))
	})

	t.Run("VisibleInRiverUIMetadata", func(t *testing.T) {
		res, err := client.Insert(ctx, paymentArgs{CustomerStatus: "VIP"}, defContext("pi-3", "charge").InsertOpts())
		require.NoError(t, err)
		// The compact form, in the documented order; the root is left out: a
		// top-level instance is its own root.
		require.JSONEq(t, `{"bpmn": ["pi-3", "order", "charge", "charge", 10, true, "dep-1"]}`, string(res.Job.Metadata))
		jc, err := JobContextOf(res.Job)
		require.NoError(t, err)
		require.Equal(t, "pi-3", jc.RootProcessInstanceID, "read back, a top-level instance is its own root")

		// A called instance's job keeps its root in metadata.
		called := defContext("pi-4", "charge")
		called.RootProcessInstanceID = "pi-top"
		res, err = client.Insert(ctx, paymentArgs{CustomerStatus: "VIP"}, called.InsertOpts())
		require.NoError(t, err)
		require.JSONEq(t, `{"bpmn": ["pi-4", "order", "charge", "charge", 10, true, "dep-1", null, null, null, "pi-top"]}`, string(res.Job.Metadata))
		jc, err = JobContextOf(res.Job)
		require.NoError(t, err)
		require.Equal(t, "pi-top", jc.RootProcessInstanceID)

		// A row written before the root was left out reads the same.
		old := *res.Job
		old.Metadata = []byte(`{"bpmn": {"process_instance_id": "pi-3", "root_process_instance_id": "pi-3", "process_definition_key": "order"}}`)
		jc, err = JobContextOf(&old)
		require.NoError(t, err)
		require.Equal(t, "pi-3", jc.RootProcessInstanceID)
	})

	t.Run("DefinitionMismatches", func(t *testing.T) {
		_, err := client.Insert(ctx, shipArgs{}, defContext("pi", "charge").InsertOpts())
		require.ErrorContains(t, err, `job_definition_id "charge": runs kind "charge_payment", but the job is of kind "ship_order"`)
		_, err = client.Insert(ctx, shipArgs{}, defContext("pi", "nope").InsertOpts())
		require.ErrorContains(t, err, `job_definition_id "nope": is not a declared job definition`)
		_, err = client.Insert(ctx, shipArgs{}, JobContext{JobDefinitionID: "ship", ActivityID: "other"}.InsertOpts())
		require.ErrorContains(t, err, `activity_id "other": differs from job definition "ship"'s "ship"`)
	})
}

func TestPrioritizedJobsSwitchedOff(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	config := orderConfig()
	config.DisablePrioritizedJobs = true
	engine, schema := testEngineWithConfig(t, config)
	client := newInsertClient(t, engine, schema)

	require.NoError(t, engine.SetOverridingJobPriority(ctx, "charge", 42, false))
	for _, opts := range []*river.InsertOpts{
		defContext("pi", "charge").InsertOpts(),
		JobContext{ProcessDefinitionKey: "unprioritised", Priority: ptr(int64(7))}.InsertOpts(),
	} {
		id := insertJob(ctx, t, client, paymentArgs{CustomerStatus: "VIP"}, opts)
		require.Nil(t, jobPriority(ctx, t, engine, id), "no priority is written, so every job counts as 0, overrides included")
	}
}

// TestClientStartFailsWithoutMigrations: a client with job definitions on a
// schema without riverbpmn's line refuses to start, saying what to run.
func TestClientStartFailsWithoutMigrations(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, stockSchema := testStockSchema(t)
	config := orderConfig()
	config.Schema = stockSchema
	engine, err := NewEngine(testPool(t), config)
	require.NoError(t, err)
	workers := river.NewWorkers()
	river.AddWorker(workers, river.WorkFunc(func(ctx context.Context, job *river.Job[shipArgs]) error { return nil }))
	client, err := NewClient(engine, &river.Config{
		Queues: map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 1}}, Schema: stockSchema, TestOnly: true, Workers: workers,
	})
	require.NoError(t, err)
	err = client.Start(ctx)
	require.ErrorContains(t, err, "is `riverbpmn migrate-up` applied?")
}

// TestUndeclaredProcessDefinitionRefused: an engine that declares process
// definitions refuses, on every insert call, a job whose context names a
// process definition it does not declare, naming the key; nothing of the
// batch is inserted. An engine that declares none takes any key.
func TestUndeclaredProcessDefinitionRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	for _, call := range sixInsertCalls {
		t.Run(call.name, func(t *testing.T) {
			t.Parallel()
			engine, schema := testEngineWithConfig(t, orderConfig())
			client := newInsertClient(t, engine, schema)
			args := []river.JobArgs{shipArgs{OrderID: "1"}, shipArgs{OrderID: "2"}}
			opts := []*river.InsertOpts{
				JobContext{ProcessInstanceID: "pi-1", ProcessDefinitionKey: "order", ActivityID: "ship"}.InsertOpts(),
				JobContext{ProcessInstanceID: "pi-2", ProcessDefinitionKey: "ordre"}.InsertOpts(),
			}
			err := call.insert(ctx, client, args, opts)
			require.ErrorContains(t, err, `process_definition_key "ordre": is not a declared process definition`)
			var jobContextErr *JobContextError
			require.ErrorAs(t, err, &jobContextErr)
			require.Equal(t, "ordre", jobContextErr.Value)
			var refused int
			require.NoError(t, engine.dbPool.QueryRow(ctx, renderSQL(`SELECT count(*) FROM /* TEMPLATE: schema */river_job WHERE args->>'order_id' = '2'`, schema)).Scan(&refused))
			require.Zero(t, refused, "the refused job is not inserted (nor, in one call, its batch)")
		})
	}

	t.Run("EngineDeclaringNoProcess", func(t *testing.T) {
		t.Parallel()
		engine, schema := testEngine(t)
		client := newInsertClient(t, engine, schema)
		_, err := client.Insert(ctx, shipArgs{}, JobContext{ProcessInstanceID: "pi-1", ProcessDefinitionKey: "anything"}.InsertOpts())
		require.NoError(t, err)
	})
}
