package retrypolicy_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdbtest"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/exclusive"
	"github.com/riverbpmn/riverbpmn/retrypolicy"
	"github.com/riverbpmn/riverbpmn/riverbpmntest"
	"github.com/riverbpmn/riverbpmn/workflow"
)

// The tests of this file's package run the retry mechanism as an engine
// wires it (package workflow), on the test database: TEST_DATABASE_URL, as
// River's tests.

// retryConfig declares the process and job definitions the retry tests use:
// one job definition per cycle, all of kind retryArgs, and defaultCycle as
// the engine's default.
func retryConfig(defaultCycle string, cycles map[string]string) *workflow.Config {
	config := &workflow.Config{
		Retry:              retrypolicy.Config{DefaultCycle: defaultCycle},
		ProcessDefinitions: []workflow.ProcessDefinition{{Key: "order_process"}},
		// The retry timelines measure the wait River's retry policy decides
		// from the end of the worker's Work; exclusivity (on by default)
		// gives the job's key back in between, a statement that on a loaded
		// machine takes longer than the timelines' slack.
		Exclusive: exclusive.Config{Scope: exclusive.None},
	}
	for id, cycle := range cycles {
		config.JobDefinitions = append(config.JobDefinitions, workflow.JobDefinition{
			ID: id, ProcessDefinitionKey: "order_process", ActivityID: "act-" + id, Kind: retryArgs{}.Kind(), RetryCycle: cycle,
		})
	}
	return config
}

type retryArgs struct {
	Name string `json:"name"`
}

func (retryArgs) Kind() string { return "retry_test" }

// jobOf returns a job context of job definition jobDefinitionID in process
// instance instance.
func jobOf(jobDefinitionID, instance string) workflow.JobContext {
	return workflow.JobContext{JobDefinitionID: jobDefinitionID, ProcessInstanceID: instance}
}

func mustMetadata(t *testing.T, jc workflow.JobContext) []byte {
	t.Helper()
	metadata, err := jc.AddToMetadata(nil)
	require.NoError(t, err)
	return metadata
}

// testEngine returns an engine configured by config on a test schema of its
// own, with an insert-only client of workflow.NewClient (riverbpmntest).
func testEngine(t *testing.T, config *workflow.Config) *riverbpmntest.Bundle {
	t.Helper()
	ctx := context.Background()
	schema := riverdbtest.TestSchema(ctx, t, riverbpmntest.Driver(t), nil)
	return riverbpmntest.New(ctx, t, schema, &riverbpmntest.Opts{Config: config})
}

// allJobs returns every job of client's schema.
func allJobs(ctx context.Context, t *testing.T, client *river.Client[pgx.Tx]) []*rivertype.JobRow {
	t.Helper()
	res, err := client.JobList(ctx, river.NewJobListParams().First(10_000))
	require.NoError(t, err)
	return res.Jobs
}

// jobsByName returns every job of client's schema by its retryArgs name.
func jobsByName(ctx context.Context, t *testing.T, client *river.Client[pgx.Tx]) map[string]*rivertype.JobRow {
	t.Helper()
	byName := map[string]*rivertype.JobRow{}
	for _, job := range allJobs(ctx, t, client) {
		var args retryArgs
		require.NoError(t, json.Unmarshal(job.EncodedArgs, &args))
		byName[args.Name] = job
	}
	return byName
}
