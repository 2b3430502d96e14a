package workflow

import (
	"context"
	"errors"
	"log/slog"
	"testing"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/priority"
)

// kindConfig declares one process with two activities: "charge" (the only
// job definition of kind charge_payment) and two job definitions of kind
// ship_order ("ship" and "ship-express").
func kindConfig() *Config {
	return &Config{
		ProcessDefinitions: []ProcessDefinition{{Key: "order", Priority: priority.Constant(1)}, {Key: "refund"}},
		JobDefinitions: []JobDefinition{
			{ID: "charge", ProcessDefinitionKey: "order", ActivityID: "charge", Kind: "charge_payment", Priority: priority.Constant(7), RetryCycle: "R4/PT1S"},
			{ID: "ship", ProcessDefinitionKey: "order", ActivityID: "ship", Kind: "ship_order", Priority: priority.Constant(3)},
			{ID: "ship-express", ProcessDefinitionKey: "order", ActivityID: "ship_express", Kind: "ship_order", Priority: priority.Constant(9)},
		},
	}
}

// TestJobDefinitionResolvedByKind: a job context that names no job definition
// gets the one declared for its kind (and process and activity, where given);
// several candidates fail the insert naming the kind and the candidates.
func TestJobDefinitionResolvedByKind(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	engine, _ := testEngineWithConfig(t, kindConfig())
	client, err := NewClient(engine, &river.Config{TestOnly: true})
	require.NoError(t, err)

	insert := func(args river.JobArgs, jc JobContext) (*rivertype.JobRow, error) {
		res, err := client.Insert(ctx, args, jc.InsertOpts())
		if err != nil {
			return nil, err
		}
		return res.Job, nil
	}

	t.Run("UniqueKind", func(t *testing.T) {
		job, err := insert(paymentArgs{}, JobContext{ProcessInstanceID: "pi-1", ProcessDefinitionKey: "order"})
		require.NoError(t, err)
		jc, err := JobContextOf(job)
		require.NoError(t, err)
		require.Equal(t, "charge", jc.JobDefinitionID)
		require.Equal(t, "charge", jc.ActivityID, "the definition's activity is filled in")
		require.Equal(t, ptr(int64(7)), jc.Priority, "the activity's priority applies")
		require.Equal(t, "R4/PT1S", jc.RetryCycle, "the definition's retry cycle applies")
		require.Equal(t, 4, job.MaxAttempts)
	})
	t.Run("ActivityTellsApart", func(t *testing.T) {
		job, err := insert(shipArgs{}, JobContext{ProcessInstanceID: "pi-1", ProcessDefinitionKey: "order", ActivityID: "ship_express"})
		require.NoError(t, err)
		jc, err := JobContextOf(job)
		require.NoError(t, err)
		require.Equal(t, "ship-express", jc.JobDefinitionID)
		require.Equal(t, ptr(int64(9)), jc.Priority)
	})
	t.Run("SeveralCandidates", func(t *testing.T) {
		_, err := insert(shipArgs{}, JobContext{ProcessInstanceID: "pi-1", ProcessDefinitionKey: "order"})
		var jcErr *JobContextError
		require.ErrorAs(t, err, &jcErr)
		require.Equal(t, "job_definition_id", jcErr.Field)
		require.ErrorContains(t, err, `2 declared job definitions run kind "ship_order"`)
		require.ErrorContains(t, err, `("ship", "ship-express")`)
	})
	t.Run("OtherProcessNoDefinition", func(t *testing.T) {
		job, err := insert(paymentArgs{}, JobContext{ProcessInstanceID: "pi-2", ProcessDefinitionKey: "refund"})
		require.NoError(t, err)
		jc, err := JobContextOf(job)
		require.NoError(t, err)
		require.Empty(t, jc.JobDefinitionID, "charge belongs to process order, not refund")
		require.Equal(t, ptr(int64(0)), jc.Priority)
	})
	t.Run("OtherActivityNoDefinition", func(t *testing.T) {
		job, err := insert(paymentArgs{}, JobContext{ProcessInstanceID: "pi-1", ProcessDefinitionKey: "order", ActivityID: "charge_again"})
		require.NoError(t, err)
		jc, err := JobContextOf(job)
		require.NoError(t, err)
		require.Empty(t, jc.JobDefinitionID)
		require.Equal(t, ptr(int64(1)), jc.Priority, "the process's priority")
	})
	t.Run("OverrideReachesResolvedJobs", func(t *testing.T) {
		require.NoError(t, engine.SetOverridingJobPriority(ctx, "charge", 50, false))
		job, err := insert(paymentArgs{}, JobContext{ProcessInstanceID: "pi-3", ProcessDefinitionKey: "order"})
		require.NoError(t, err)
		require.Equal(t, ptr(int64(50)), jobPriority(ctx, t, engine, job.ID))
	})
}

// TestClientConfig: the one-call wiring sets middleware, retry policy, schema
// and logger, keeps what the caller set, and rejects a second schema.
func TestClientConfig(t *testing.T) {
	t.Parallel()
	engine, err := NewEngine(nil, &Config{Schema: "bpmn"})
	require.NoError(t, err)

	t.Run("Defaults", func(t *testing.T) {
		config, err := engine.ClientConfig(nil)
		require.NoError(t, err)
		require.Equal(t, []rivertype.Middleware{engine.Middleware()}, config.Middleware)
		require.IsType(t, &RetryPolicy{}, config.RetryPolicy)
		require.Equal(t, "bpmn", config.Schema)
		require.Nil(t, config.Logger, "River's default logger, as a stock client")
	})
	t.Run("KeepsCallersAndDoesNotModifyIt", func(t *testing.T) {
		other := &river.MiddlewareDefaults{}
		fallback := &river.DefaultClientRetryPolicy{}
		given := &river.Config{Middleware: []rivertype.Middleware{other}, RetryPolicy: fallback, Schema: "bpmn", MaxAttempts: 9}
		config, err := engine.ClientConfig(given)
		require.NoError(t, err)
		require.Equal(t, []rivertype.Middleware{engine.Middleware(), other}, config.Middleware, "the engine's first")
		require.Equal(t, &RetryPolicy{Fallback: fallback}, config.RetryPolicy, "the caller's policy decides for plain jobs")
		require.Equal(t, 9, config.MaxAttempts)
		require.Equal(t, []rivertype.Middleware{other}, given.Middleware, "the caller's config is untouched")
		require.Nil(t, given.Logger)

		again, err := engine.ClientConfig(config)
		require.NoError(t, err)
		require.Equal(t, config.Middleware, again.Middleware, "wiring twice adds nothing")
		require.Same(t, config.RetryPolicy, again.RetryPolicy)
	})
	t.Run("LegacyMiddlewareFields", func(t *testing.T) {
		insertOnly := &river.JobInsertMiddlewareDefaults{}
		config, err := engine.ClientConfig(&river.Config{JobInsertMiddleware: []rivertype.JobInsertMiddleware{insertOnly}})
		require.NoError(t, err)
		require.Empty(t, config.Middleware, "River refuses a config that mixes Middleware with the older fields")
		require.Equal(t, []rivertype.JobInsertMiddleware{engine.middleware, insertOnly}, config.JobInsertMiddleware)
		require.Equal(t, []rivertype.WorkerMiddleware{engine.middleware}, config.WorkerMiddleware)
		_, err = river.NewClient(engine.Driver(), config)
		require.NoError(t, err)
	})
	t.Run("SecondSchemaRejected", func(t *testing.T) {
		_, err := engine.ClientConfig(&river.Config{Schema: "elsewhere"})
		require.ErrorContains(t, err, `river.Config.Schema "elsewhere" differs from workflow.Config.Schema "bpmn"`)
	})
}

// TestUnwiredClientRefused: a client on the engine's driver without the
// engine's middleware, or with another schema than the engine's, refuses to
// start and to insert. Nothing is written.
func TestUnwiredClientRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	engine, schema := testEngineWithConfig(t, kindConfig())
	workers := river.NewWorkers()
	river.AddWorker(workers, river.WorkFunc(func(ctx context.Context, job *river.Job[shipArgs]) error { return nil }))

	t.Run("NoMiddlewareStart", func(t *testing.T) {
		client, err := river.NewClient(engine.Driver(), &river.Config{
			Queues: map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 1}}, Schema: schema, TestOnly: true, Workers: workers,
		})
		require.NoError(t, err)
		err = client.Start(ctx)
		require.ErrorIs(t, err, ErrClientNotWired)
		require.ErrorContains(t, err, "river.Config.Middleware lacks engine.Middleware()")
		require.ErrorContains(t, err, "workflow.NewClient(engine, config)")
	})
	t.Run("NoMiddlewareInsert", func(t *testing.T) {
		client, err := river.NewClient(engine.Driver(), &river.Config{Schema: schema, TestOnly: true})
		require.NoError(t, err)
		_, err = client.Insert(ctx, shipArgs{}, JobContext{ProcessDefinitionKey: "order", ActivityID: "ship"}.InsertOpts())
		require.ErrorIs(t, err, ErrClientNotWired)
		_, err = client.InsertMany(ctx, []river.InsertManyParams{{Args: shipArgs{}}})
		require.ErrorIs(t, err, ErrClientNotWired, "plain jobs too: the client is not wired")
	})
	t.Run("OtherSchemaInsert", func(t *testing.T) {
		client, err := river.NewClient(engine.Driver(), &river.Config{
			Middleware: []rivertype.Middleware{engine.Middleware()}, Schema: "public", TestOnly: true,
		})
		require.NoError(t, err)
		_, err = client.Insert(ctx, shipArgs{}, nil)
		require.ErrorIs(t, err, ErrClientNotWired)
		require.ErrorContains(t, err, `river.Config.Schema is "public" but workflow.Config.Schema is "`+schema+`"`)
	})
	t.Run("OtherSchemaStart", func(t *testing.T) {
		_, other := testEngine(t) // another schema, with both lines applied
		client, err := river.NewClient(engine.Driver(), &river.Config{
			Logger:     slog.New(slog.DiscardHandler),
			Middleware: []rivertype.Middleware{engine.Middleware()},
			Queues:     map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 1}}, Schema: other, TestOnly: true, Workers: workers,
		})
		require.NoError(t, err)
		err = client.Start(ctx)
		require.ErrorIs(t, err, ErrClientNotWired)
		require.ErrorContains(t, err, `river.Config.Schema is "`+other+`" but workflow.Config.Schema is "`+schema+`"`)
	})
	t.Run("OtherEnginesMiddleware", func(t *testing.T) {
		other, err := NewEngine(engine.dbPool, &Config{Schema: schema})
		require.NoError(t, err)
		client, err := river.NewClient(engine.Driver(), &river.Config{
			Middleware: []rivertype.Middleware{other.Middleware()},
			Queues:     map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 1}}, Schema: schema, TestOnly: true, Workers: workers,
		})
		require.NoError(t, err)
		require.ErrorIs(t, client.Start(ctx), ErrClientNotWired)
	})
	t.Run("WiredStartsAndInserts", func(t *testing.T) {
		client, err := NewClient(engine, &river.Config{
			Queues: map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 1}}, TestOnly: true, Workers: workers,
		})
		require.NoError(t, err)
		require.NoError(t, client.Start(ctx))
		t.Cleanup(func() { require.NoError(t, client.Stop(context.Background())) })
		_, err = client.Insert(ctx, shipArgs{}, JobContext{ProcessDefinitionKey: "order", ActivityID: "ship"}.InsertOpts())
		require.NoError(t, err)
	})
	var count int
	require.NoError(t, engine.dbPool.QueryRow(ctx, "SELECT count(*) FROM "+schema+".river_job WHERE kind = $1", wiringProbeArgs{}.Kind()).Scan(&count))
	require.Zero(t, count, "the start probe writes nothing")
	require.False(t, errors.Is(errWiringProbeOK, ErrClientNotWired))
}
