package workflow_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdbtest"
	"github.com/riverqueue/river/rivershared/riversharedtest"
	"github.com/riverqueue/river/rivertest"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/riverbpmntest"
	"github.com/riverbpmn/riverbpmn/workflow"
)

// These tests use every rivertest and riverdbtest helper that takes a driver
// (or its type) with *workflow.Driver, as a user's tests would: "you keep
// rivertest".

type packArgs struct {
	OrderID string `json:"order_id"`
}

func (packArgs) Kind() string { return "pack_order" }

func (a packArgs) JobContext() workflow.JobContext {
	return workflow.JobContext{ProcessInstanceID: "order-" + a.OrderID, ProcessDefinitionKey: "order"}
}

func rivertestConfig(schema string) *workflow.Config {
	return &workflow.Config{
		Schema:             schema,
		ProcessDefinitions: []workflow.ProcessDefinition{{Key: "order"}},
		JobDefinitions: []workflow.JobDefinition{
			{ID: "pack-async", ProcessDefinitionKey: "order", ActivityID: "pack", Kind: "pack_order", RetryCycle: "R2/PT1S"},
		},
	}
}

// rivertestTx returns an engine and a test transaction
// (riverdbtest.TestTx) on a schema with both migration lines applied.
func rivertestTx(t *testing.T) (*workflow.Engine, pgx.Tx, string) {
	t.Helper()
	ctx := context.Background()
	tx, schema := riverdbtest.TestTx(ctx, t, riverbpmntest.Driver(t), nil)
	return riverbpmntest.New(ctx, t, schema, &riverbpmntest.Opts{Config: rivertestConfig(schema)}).Engine, tx, schema
}

// rivertestSchema returns an engine on a fresh test schema
// (riverdbtest.TestSchema) with both migration lines applied.
func rivertestSchema(t *testing.T) (*workflow.Engine, string) {
	t.Helper()
	ctx := context.Background()
	schema := riverdbtest.TestSchema(ctx, t, riverbpmntest.Driver(t), nil)
	return riverbpmntest.New(ctx, t, schema, &riverbpmntest.Opts{Config: rivertestConfig(schema)}).Engine, schema
}

func insertClient(t *testing.T, engine *workflow.Engine) *river.Client[pgx.Tx] {
	t.Helper()
	client, err := workflow.NewClient(engine, &river.Config{TestOnly: true})
	require.NoError(t, err)
	return client
}

func TestRiverdbtestTestSchema(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	engine, schema := rivertestSchema(t)
	mainVersions, bpmnVersions, err := workflow.MigrationVersions(ctx, riversharedtest.DBPool(ctx, t), schema)
	require.NoError(t, err)
	require.NotEmpty(t, mainVersions)
	require.NotEmpty(t, bpmnVersions, "TestSchema applies riverbpmn's line too")
	_, err = engine.JobDefinition(ctx, "pack-async")
	require.NoError(t, err)
}

func TestRiverdbtestTestTx(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	engine, tx, schema := rivertestTx(t)
	res, err := insertClient(t, engine).InsertTx(ctx, tx, packArgs{OrderID: "1"}, nil)
	require.NoError(t, err)
	jc, err := workflow.JobContextOf(res.Job)
	require.NoError(t, err)
	require.Equal(t, "pack-async", jc.JobDefinitionID)
	var bpmnVersion int
	require.NoError(t, tx.QueryRow(ctx, "SELECT max(version) FROM "+pgx.Identifier{schema}.Sanitize()+".river_migration WHERE line = $1", workflow.MigrationLine).Scan(&bpmnVersion))
	require.Positive(t, bpmnVersion, "TestTx's schema has riverbpmn's line")
}

func TestRiverdbtestTestTxPgxDriver(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	engine, err := workflow.NewEngine(riversharedtest.DBPool(ctx, t), rivertestConfig(""))
	require.NoError(t, err)
	tx, schema := riverdbtest.TestTxPgxDriver(ctx, t, engine.Driver(), nil)
	require.NotEmpty(t, schema)
	var tables int
	require.NoError(t, tx.QueryRow(ctx, "SELECT count(*) FROM pg_tables WHERE schemaname = $1 AND tablename LIKE 'river_bpmn_%'", schema).Scan(&tables))
	require.Positive(t, tables, "riverbpmn's tables are in the test transaction's schema")
	// The transaction's search_path is the schema: an engine on the
	// search_path inserts there.
	res, err := insertClient(t, engine).InsertTx(ctx, tx, packArgs{OrderID: "1"}, nil)
	require.NoError(t, err)
	require.Equal(t, 2, res.Job.MaxAttempts, "the job definition's R2 cycle")
}

func TestRivertestRequireInserted(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	engine, schema := rivertestSchema(t)
	_, err := insertClient(t, engine).Insert(ctx, packArgs{OrderID: "1"}, nil)
	require.NoError(t, err)
	job := rivertest.RequireInserted(ctx, t, engine.Driver(), packArgs{}, &rivertest.RequireInsertedOpts{Schema: schema, MaxAttempts: 2})
	require.Equal(t, "1", job.Args.OrderID)
}

func TestRivertestRequireInsertedTx(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	engine, tx, schema := rivertestTx(t)
	_, err := insertClient(t, engine).InsertTx(ctx, tx, packArgs{OrderID: "1"}, nil)
	require.NoError(t, err)
	job := rivertest.RequireInsertedTx[*workflow.Driver](ctx, t, tx, packArgs{}, &rivertest.RequireInsertedOpts{Schema: schema, MaxAttempts: 2})
	require.Equal(t, "1", job.Args.OrderID)
}

func TestRivertestRequireNotInserted(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	engine, schema := rivertestSchema(t)
	rivertest.RequireNotInserted(ctx, t, engine.Driver(), packArgs{}, &rivertest.RequireInsertedOpts{Schema: schema})
}

func TestRivertestRequireNotInsertedTx(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	engine, tx, schema := rivertestTx(t)
	_, err := insertClient(t, engine).InsertTx(ctx, tx, packArgs{OrderID: "1"}, nil)
	require.NoError(t, err)
	// Inserted, but not with these options.
	rivertest.RequireNotInsertedTx[*workflow.Driver](ctx, t, tx, packArgs{}, &rivertest.RequireInsertedOpts{Schema: schema, MaxAttempts: 25})
}

func TestRivertestRequireManyInserted(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	engine, schema := rivertestSchema(t)
	_, err := insertClient(t, engine).InsertMany(ctx, []river.InsertManyParams{{Args: packArgs{OrderID: "1"}}, {Args: packArgs{OrderID: "2"}}})
	require.NoError(t, err)
	jobs := rivertest.RequireManyInserted(ctx, t, engine.Driver(), []rivertest.ExpectedJob{
		{Args: packArgs{}, Opts: &rivertest.RequireInsertedOpts{Schema: schema}},
		{Args: packArgs{}, Opts: &rivertest.RequireInsertedOpts{Schema: schema}},
	})
	require.Len(t, jobs, 2)
}

func TestRivertestRequireManyInsertedTx(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	engine, tx, schema := rivertestTx(t)
	_, err := insertClient(t, engine).InsertManyTx(ctx, tx, []river.InsertManyParams{{Args: packArgs{OrderID: "1"}}, {Args: packArgs{OrderID: "2"}}})
	require.NoError(t, err)
	jobs := rivertest.RequireManyInsertedTx[*workflow.Driver](ctx, t, tx, []rivertest.ExpectedJob{
		{Args: packArgs{}, Opts: &rivertest.RequireInsertedOpts{Schema: schema}},
		{Args: packArgs{}, Opts: &rivertest.RequireInsertedOpts{Schema: schema}},
	})
	require.Len(t, jobs, 2)
}

type packWorker struct {
	river.WorkerDefaults[packArgs]
	fail bool
}

func (w *packWorker) Work(ctx context.Context, job *river.Job[packArgs]) error {
	if w.fail {
		return context.DeadlineExceeded
	}
	return nil
}

func TestRivertestWorker(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	engine, tx, schema := rivertestTx(t)

	config, err := engine.ClientConfig(&river.Config{Logger: riversharedtest.Logger(t)})
	require.NoError(t, err)
	require.Equal(t, schema, config.Schema)
	worker := rivertest.NewWorker(t, engine.Driver(), config, &packWorker{})
	res, err := worker.Work(ctx, t, tx, packArgs{OrderID: "1"}, nil)
	require.NoError(t, err)
	require.Equal(t, river.EventKindJobCompleted, res.EventKind)
	jc, err := workflow.JobContextOf(res.Job)
	require.NoError(t, err)
	require.Equal(t, "pack-async", jc.JobDefinitionID)

	// WorkJob, with a failure: the job's retry cycle (R2/PT1S) decides.
	failing := rivertest.NewWorker(t, engine.Driver(), config, &packWorker{fail: true})
	inserted, err := insertClient(t, engine).InsertTx(ctx, tx, packArgs{OrderID: "2"}, nil)
	require.NoError(t, err)
	res, err = failing.WorkJob(ctx, t, tx, inserted.Job)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Equal(t, river.EventKindJobFailed, res.EventKind)
	// River stores a retry due within its scheduler interval as available
	// with a future scheduled_at.
	require.Contains(t, []rivertype.JobState{rivertype.JobStateAvailable, rivertype.JobStateRetryable}, res.Job.State)
	require.WithinRange(t, res.Job.ScheduledAt, res.Job.AttemptedAt.Add(900_000_000), res.Job.AttemptedAt.Add(5_000_000_000), "PT1S after the attempt")

	// A worker whose config is not wired to the engine says so.
	unwired := rivertest.NewWorker(t, engine.Driver(), &river.Config{}, &packWorker{})
	_, err = unwired.Work(ctx, t, tx, packArgs{OrderID: "3"}, nil)
	require.ErrorIs(t, err, workflow.ErrClientNotWired)
}

func TestRivertestWorkContext(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	engine, _ := rivertestSchema(t)
	client := insertClient(t, engine)
	workCtx := rivertest.WorkContext(ctx, client)
	require.Same(t, client, river.ClientFromContext[pgx.Tx](workCtx))
}
