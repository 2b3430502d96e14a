package riverbpmntest_test

import (
	"context"
	"testing"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdbtest"
	"github.com/riverqueue/river/rivertest"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/riverbpmntest"
	"github.com/riverbpmn/riverbpmn/workflow"
)

// The tests docs/guides/testing.md shows: a user's worker tested with
// riverbpmntest and rivertest.

// ChargeArgs is the job of the "charge" service task of process "order".
type ChargeArgs struct {
	OrderID string `json:"order_id"`
}

func (ChargeArgs) Kind() string { return "charge" }

// JobContext places the job in its process instance.
func (a ChargeArgs) JobContext() workflow.JobContext {
	return workflow.JobContext{ProcessDefinitionKey: "order", ProcessInstanceID: "order-" + a.OrderID}
}

// ChargeWorker charges an order.
type ChargeWorker struct {
	river.WorkerDefaults[ChargeArgs]
}

func (ChargeWorker) Work(ctx context.Context, job *river.Job[ChargeArgs]) error { return nil }

func orderConfig() *workflow.Config {
	return &workflow.Config{
		ProcessDefinitions: []workflow.ProcessDefinition{{Key: "order"}},
		JobDefinitions: []workflow.JobDefinition{
			{ID: "charge-async", ProcessDefinitionKey: "order", ActivityID: "charge", Kind: "charge", RetryCycle: "R3/PT5M"},
		},
	}
}

func TestChargeInserted(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	config := orderConfig()

	schema := riverdbtest.TestSchema(ctx, t, riverbpmntest.Driver(t), nil)
	bundle := riverbpmntest.New(ctx, t, schema, &riverbpmntest.Opts{Config: config})

	_, err := bundle.Client.Insert(ctx, ChargeArgs{OrderID: "42"}, nil)
	require.NoError(t, err)

	// The job definition's retry cycle R3/PT5M gives three attempts.
	job := rivertest.RequireInserted(ctx, t, bundle.Engine.Driver(), ChargeArgs{},
		&rivertest.RequireInsertedOpts{Schema: schema, MaxAttempts: 3})
	jc, err := workflow.JobContextOf(job.JobRow)
	require.NoError(t, err)
	require.Equal(t, "charge-async", jc.JobDefinitionID)
}

func TestChargeWorked(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	schema := riverdbtest.TestSchema(ctx, t, riverbpmntest.Driver(t), nil)
	bundle := riverbpmntest.New(ctx, t, schema, &riverbpmntest.Opts{Config: orderConfig()})

	config, err := bundle.Engine.ClientConfig(&river.Config{Schema: schema})
	require.NoError(t, err)
	worker := rivertest.NewWorker(t, bundle.Engine.Driver(), config, &ChargeWorker{})
	tx, err := bundle.DBPool.Begin(ctx)
	require.NoError(t, err)
	defer tx.Rollback(ctx)

	res, err := worker.Work(ctx, t, tx, ChargeArgs{OrderID: "42"}, nil)
	require.NoError(t, err)
	require.Equal(t, river.EventKindJobCompleted, res.EventKind)
}

func TestChargeByARunningClient(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	workers := river.NewWorkers()
	river.AddWorker(workers, &ChargeWorker{})
	schema := riverdbtest.TestSchema(ctx, t, riverbpmntest.Driver(t), nil)
	bundle := riverbpmntest.New(ctx, t, schema, &riverbpmntest.Opts{
		Config: orderConfig(),
		ClientConfig: &river.Config{
			Queues:  map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 2}},
			Workers: workers,
		},
	})
	completed, cancel := bundle.Client.Subscribe(river.EventKindJobCompleted)
	defer cancel()
	require.NoError(t, bundle.Client.Start(ctx)) // stopped when the test ends

	res, err := bundle.Client.Insert(ctx, ChargeArgs{OrderID: "42"}, nil)
	require.NoError(t, err)
	event := <-completed
	require.Equal(t, res.Job.ID, event.Job.ID)
}
