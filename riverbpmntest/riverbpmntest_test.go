package riverbpmntest_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdbtest"
	"github.com/riverqueue/river/rivershared/util/testutil"
	"github.com/riverqueue/river/rivertest"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/riverbpmntest"
	"github.com/riverbpmn/riverbpmn/workflow"
)

// TestNew: one call gives an engine configured as asked and a client, both
// on the test's schema, which has both migration lines and is named after
// the test's package; the caller's configurations are not changed.
func TestNew(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	config := orderConfig()
	clientConfig := &river.Config{MaxAttempts: 7}

	schema := riverdbtest.TestSchema(ctx, t, riverbpmntest.Driver(t), nil)
	bundle := riverbpmntest.New(ctx, t, schema, &riverbpmntest.Opts{Config: config, ClientConfig: clientConfig})

	require.Equal(t, schema, bundle.Schema)
	require.True(t, strings.HasPrefix(schema, "riverbpmntest_t_"), "named after the calling package: %s", schema)
	require.Empty(t, config.Schema, "the caller's Config is copied")
	require.Empty(t, clientConfig.Schema, "the caller's ClientConfig is copied")
	mainVersions, bpmnVersions, err := workflow.MigrationVersions(ctx, bundle.DBPool, schema)
	require.NoError(t, err)
	require.NotEmpty(t, mainVersions)
	require.NotEmpty(t, bpmnVersions)
	state, err := bundle.Engine.JobDefinition(ctx, "charge-async")
	require.NoError(t, err)
	require.Equal(t, "charge", state.Kind)
	res, err := bundle.Client.Insert(ctx, ChargeArgs{OrderID: "1"}, nil)
	require.NoError(t, err)
	rivertest.RequireInserted(ctx, t, bundle.Engine.Driver(), ChargeArgs{}, &rivertest.RequireInsertedOpts{Schema: schema, MaxAttempts: 3})
	require.Equal(t, schema, bundle.Schema, "the client inserts into the test schema")
	require.NotZero(t, res.Job.ID)
}

// TestNewDefaults: without options, the engine has the zero configuration
// and the client is insert-only.
func TestNewDefaults(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	schema := riverdbtest.TestSchema(ctx, t, riverbpmntest.Driver(t), nil)
	bundle := riverbpmntest.New(ctx, t, schema, nil)
	res, err := bundle.Client.Insert(ctx, ChargeArgs{OrderID: "1"}, nil)
	require.NoError(t, err)
	require.Equal(t, schema, bundle.Schema)
	jc, err := workflow.JobContextOf(res.Job)
	require.NoError(t, err)
	require.Equal(t, "order-1", jc.ProcessInstanceID)
}

// TestNewStopsStartedClient: a client the test started is stopped when the
// test ends.
func TestNewStopsStartedClient(t *testing.T) {
	t.Parallel()
	var client *river.Client[pgx.Tx]
	t.Run("Inner", func(t *testing.T) {
		ctx := context.Background()
		workers := river.NewWorkers()
		river.AddWorker(workers, &ChargeWorker{})
		schema := riverdbtest.TestSchema(ctx, t, riverbpmntest.Driver(t), nil)
		bundle := riverbpmntest.New(ctx, t, schema, &riverbpmntest.Opts{
			Config:       orderConfig(),
			ClientConfig: &river.Config{Queues: map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 1}}, Workers: workers},
		})
		require.NoError(t, bundle.Client.Start(ctx))
		client = bundle.Client
	})
	select {
	case <-client.Stopped():
	case <-time.After(time.Second):
		t.Fatal("the client still runs after its test ended")
	}
}

// TestNewRefuses: an empty schema and a configuration NewEngine refuses fail
// the test with the reason.
func TestNewRefuses(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	mockT := testutil.NewMockT(t)
	require.Nil(t, riverbpmntest.New(ctx, mockT, "", nil))
	require.True(t, mockT.Failed)
	require.Contains(t, mockT.LogOutput(), "riverbpmntest: New: schema is empty")

	schema := riverdbtest.TestSchema(ctx, t, riverbpmntest.Driver(t), nil)
	mockT = testutil.NewMockT(t)
	require.Nil(t, riverbpmntest.New(ctx, mockT, schema, &riverbpmntest.Opts{Config: &workflow.Config{ExclusiveBatch: -1}}))
	require.True(t, mockT.Failed)
	require.Contains(t, mockT.LogOutput(), "Config.ExclusiveBatch must not be negative, got -1")
}
