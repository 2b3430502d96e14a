package workflow

import (
	"context"
	"testing"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/internal/insertcalls"
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

// jobPriority reads a job's priority back as a worker would.
func jobPriority(ctx context.Context, t *testing.T, engine *Engine, jobID int64) *int64 {
	t.Helper()
	job, err := engine.Driver().GetExecutor().JobGetByID(ctx, &riverdriver.JobGetByIDParams{ID: jobID, Schema: engine.config.Schema})
	require.NoError(t, err)
	jc, err := JobContextOf(job)
	require.NoError(t, err)
	return jc.Priority
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
	require.ErrorContains(t, err, "is `riverbpmn migrate up` applied?")
}

// TestUndeclaredProcessDefinitionRefused: an engine that declares process
// definitions refuses, on every insert call, a job whose context names a
// process definition it does not declare, naming the key; nothing of the
// batch is inserted. An engine that declares none takes any key.
func TestUndeclaredProcessDefinitionRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	for _, call := range insertcalls.Six {
		t.Run(call.Name, func(t *testing.T) {
			t.Parallel()
			engine, schema := testEngineWithConfig(t, orderConfig())
			client := newInsertClient(t, engine, schema)
			args := []river.JobArgs{shipArgs{OrderID: "1"}, shipArgs{OrderID: "2"}}
			opts := []*river.InsertOpts{
				JobContext{ProcessInstanceID: "pi-1", ProcessDefinitionKey: "order", ActivityID: "ship"}.InsertOpts(),
				JobContext{ProcessInstanceID: "pi-2", ProcessDefinitionKey: "ordre"}.InsertOpts(),
			}
			err := call.Insert(ctx, client, args, opts)
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
