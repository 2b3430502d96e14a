package lifecycle_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdbtest"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/hold"
	"github.com/riverbpmn/riverbpmn/lifecycle"
	"github.com/riverbpmn/riverbpmn/riverbpmntest"
	"github.com/riverbpmn/riverbpmn/workflow"
)

// lcArgs is the job of these tests; Instance gives it a job context.
type lcArgs struct {
	Name     string `json:"name"`
	Instance string `json:"instance,omitempty"`
	// FailOnce makes the first attempt fail.
	FailOnce bool `json:"fail_once,omitempty"`
	// FailAlways makes every attempt fail.
	FailAlways bool `json:"fail_always,omitempty"`
}

func (lcArgs) Kind() string { return "lc_test" }

type fixture struct {
	pool   *pgxpool.Pool
	schema string
	engine *workflow.Engine
	client *river.Client[pgx.Tx]
}

func lcConfig(schema string) *workflow.Config {
	return &workflow.Config{
		Schema:             schema,
		ProcessDefinitions: []workflow.ProcessDefinition{{Key: "lc_process"}},
		Lifecycle:          lifecycle.Config{ExpiryServiceInterval: 200 * time.Millisecond},
	}
}

// setup returns a migrated schema, an engine on it and an insert-only client.
func setup(t *testing.T) *fixture {
	t.Helper()
	ctx := context.Background()
	schema := riverdbtest.TestSchema(ctx, t, riverbpmntest.Driver(t), nil)
	b := riverbpmntest.New(ctx, t, schema, &riverbpmntest.Opts{Config: lcConfig(schema), ClientConfig: &river.Config{}})
	return &fixture{pool: b.DBPool, schema: schema, engine: b.Engine, client: b.Client}
}

// insertOpts returns insert options with o and, for an instance, a job
// context.
func insertOpts(t *testing.T, instance string, o lifecycle.Opts) *river.InsertOpts {
	t.Helper()
	opts := &river.InsertOpts{}
	if instance != "" {
		opts = workflow.JobContext{ProcessDefinitionKey: "lc_process", ProcessInstanceID: instance}.InsertOpts()
	}
	opts, err := o.Apply(opts)
	require.NoError(t, err)
	return opts
}

func (f *fixture) insert(t *testing.T, args lcArgs, o lifecycle.Opts) *rivertype.JobRow {
	t.Helper()
	res, err := f.client.Insert(context.Background(), args, insertOpts(t, args.Instance, o))
	require.NoError(t, err)
	return res.Job
}

func (f *fixture) job(t *testing.T, id int64) *rivertype.JobRow {
	t.Helper()
	job, err := f.client.JobGet(context.Background(), id)
	require.NoError(t, err)
	return job
}

// reasons checks package hold's invariant for a job and returns its reasons.
func (f *fixture) reasons(t *testing.T, id int64) []hold.Reason {
	t.Helper()
	rows, err := hold.Reasons(context.Background(), f.pool, f.schema, id)
	require.NoError(t, err)
	job := f.job(t, id)
	state, err := hold.Of(job.Metadata)
	require.NoError(t, err)
	if len(rows) == 0 {
		require.Nil(t, state, "job %d: no reason rows but a hold in metadata", id)
		return nil
	}
	require.NotNil(t, state)
	require.Equal(t, rows, state.Reasons)
	require.Equal(t, rivertype.JobStatePending, job.State)
	return rows
}
