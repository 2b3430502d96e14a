package workflow

import (
	"context"
	"testing"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"
)

// TestJobDetails: the operator's view of a job with a context, of a plain
// River job, of one whose stored context is malformed, and of one with an
// unbounded cycle; an unknown id wraps ErrNotFound.
func TestJobDetails(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	config := kindConfig()
	config.DefaultRetryCycle = "R/PT1M"
	engine, schema := testEngineWithConfig(t, config)
	client, err := NewClient(engine, &river.Config{TestOnly: true})
	require.NoError(t, err)

	res, err := client.Insert(ctx, paymentArgs{}, JobContext{ProcessInstanceID: "pi-1", ProcessDefinitionKey: "order"}.InsertOpts())
	require.NoError(t, err)
	d, err := engine.JobDetails(ctx, res.Job.ID)
	require.NoError(t, err)
	require.Equal(t, "charge", d.Context.JobDefinitionID)
	require.Equal(t, 4, d.RetriesLeft, "R4: four executions, none done")
	require.False(t, d.RetriesUnbounded)
	require.Equal(t, "R4/PT1S", d.RetryCycle)
	require.NotNil(t, d.NextRunAt)
	require.Empty(t, d.Incidents)
	require.NotNil(t, d.ExclusiveWait)

	// A job of no job definition gets the engine's unbounded default cycle.
	res, err = client.Insert(ctx, shipArgs{}, JobContext{ProcessInstanceID: "pi-1", ProcessDefinitionKey: "refund"}.InsertOpts())
	require.NoError(t, err)
	d, err = engine.JobDetails(ctx, res.Job.ID)
	require.NoError(t, err)
	require.True(t, d.RetriesUnbounded)
	require.Equal(t, "R/PT1M", d.RetryCycle)

	// Plain and malformed jobs, inserted by a client on River's own driver.
	raw, err := river.NewClient(riverpgxv5.New(engine.dbPool), &river.Config{Schema: schema, TestOnly: true})
	require.NoError(t, err)
	res, err = raw.Insert(ctx, shipArgs{}, &river.InsertOpts{MaxAttempts: 7})
	require.NoError(t, err)
	d, err = engine.JobDetails(ctx, res.Job.ID)
	require.NoError(t, err)
	require.Nil(t, d.Context)
	require.Empty(t, d.ContextError)
	require.Equal(t, 7, d.RetriesLeft)
	require.Empty(t, d.RetryCycle)

	res, err = raw.Insert(ctx, shipArgs{}, &river.InsertOpts{Metadata: []byte(`{"bpmn": "nope"}`)})
	require.NoError(t, err)
	d, err = engine.JobDetails(ctx, res.Job.ID)
	require.NoError(t, err, "bad data in a job does not break the view")
	require.Nil(t, d.Context)
	require.NotEmpty(t, d.ContextError)
	require.Equal(t, rivertype.JobStateAvailable, d.Job.State)

	_, err = engine.JobDetails(ctx, 999_999_999)
	require.ErrorIs(t, err, ErrNotFound)
}
