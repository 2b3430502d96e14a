package workflow

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"
)

// TestJobContextFoundByRiverMetadataFilter: River's job list filter by
// metadata (JobListParams.Metadata, containment with @>, which River UI's
// job search and River's own API use) finds a job in the labelled form by
// its process instance, by its process definition key, by its job
// definition and by two labels at once, and finds nothing for a value under
// another label; and the same containment is answered by River's GIN index
// on metadata.
func TestJobContextFoundByRiverMetadataFilter(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	engine, schema := testEngineWithConfig(t, &Config{
		ProcessDefinitions: []ProcessDefinition{
			{Key: "order", DeploymentID: "dep-2026-11", TenantID: "acme"},
			{Key: "invoice", DeploymentID: "dep-2026-11", TenantID: "acme"},
		},
		JobDefinitions: []JobDefinition{
			{ID: "order:reserve", ProcessDefinitionKey: "order", ActivityID: "reserve", Kind: shipArgs{}.Kind()},
			{ID: "invoice:reserve", ProcessDefinitionKey: "invoice", ActivityID: "reserve", Kind: shipArgs{}.Kind()},
		},
	})
	client := newInsertClient(t, engine, schema)

	jc := JobContext{ProcessInstanceID: "order-held-4711", JobDefinitionID: "order:reserve"}
	held, err := client.Insert(ctx, shipArgs{OrderID: "4711"}, jc.InsertOpts())
	require.NoError(t, err)
	other := jc
	other.ProcessInstanceID, other.JobDefinitionID = "invoice-1", "invoice:reserve"
	_, err = client.Insert(ctx, shipArgs{OrderID: "1"}, other.InsertOpts())
	require.NoError(t, err)
	plain, err := client.Insert(ctx, shipArgs{OrderID: "plain"}, nil)
	require.NoError(t, err)
	// What River UI shows: the labels, the definitions' deployment and
	// tenant, the activity left to the job definition's id.
	require.JSONEq(t, `{"bpmn": {"instance": "order-held-4711", "process": "order", "job": "order:reserve",
		"deployment": "dep-2026-11", "tenant": "acme"}}`, string(held.Job.Metadata))

	list := func(fragment string) []int64 {
		t.Helper()
		res, err := client.JobList(ctx, river.NewJobListParams().Metadata(fragment).First(100))
		require.NoError(t, err, fragment)
		var ids []int64
		for _, job := range res.Jobs {
			ids = append(ids, job.ID)
		}
		slices.Sort(ids)
		return ids
	}
	require.Equal(t, []int64{held.Job.ID}, list(`{"bpmn": {"instance": "order-held-4711"}}`), "by process instance")
	require.Equal(t, []int64{held.Job.ID}, list(`{"bpmn": {"process": "order"}}`), "by process definition key")
	require.Equal(t, []int64{held.Job.ID}, list(`{"bpmn": {"job": "order:reserve"}}`), "by job definition")
	require.Equal(t, []int64{held.Job.ID}, list(`{"bpmn": {"process": "order", "tenant": "acme"}}`), "by two labels")
	require.Len(t, list(`{"bpmn": {"tenant": "acme"}}`), 2, "by tenant")
	require.Empty(t, list(`{"bpmn": {"process": "order-held-4711"}}`), "a value under another label")
	require.Contains(t, list(`{}`), plain.Job.ID)

	// River's GIN index on metadata serves the containment.
	tx, err := engine.dbPool.Begin(ctx)
	require.NoError(t, err)
	defer func() { _ = tx.Rollback(ctx) }()
	_, err = tx.Exec(ctx, "SET LOCAL enable_seqscan = off")
	require.NoError(t, err)
	rows, err := tx.Query(ctx, fmt.Sprintf(`EXPLAIN SELECT id FROM %s.river_job WHERE metadata @> $1::jsonb`, pgx.Identifier{schema}.Sanitize()),
		`{"bpmn": {"instance": "order-held-4711"}}`)
	require.NoError(t, err)
	plan, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	require.Contains(t, fmt.Sprint(plan), "river_job_metadata_index", "plan: %v", plan)
}
