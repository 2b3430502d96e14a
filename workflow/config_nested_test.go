package workflow_test

import (
	"context"
	"testing"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdbtest"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/priority"
	"github.com/riverbpmn/riverbpmn/retrypolicy"
	"github.com/riverbpmn/riverbpmn/riverbpmntest"
	"github.com/riverbpmn/riverbpmn/workflow"
)

type nestedArgs struct{}

func (nestedArgs) Kind() string { return "config_nested" }

// TestConfigNested: the deprecated flat fields DefaultRetryCycle and
// DisablePrioritizedJobs are honoured when their nested fields
// (Retry.DefaultCycle, Priority.Disabled) are zero, the nested ones win
// alone, and a cycle set both ways differently is refused at NewEngine,
// naming both fields.
func TestConfigNested(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	// insert inserts a plain River job through an engine with config and
	// returns its max_attempts (from the default cycle) and priority.
	insert := func(t *testing.T, config *workflow.Config) (int, int) {
		t.Helper()
		schema := riverdbtest.TestSchema(ctx, t, riverbpmntest.Driver(t), nil)
		bundle := riverbpmntest.New(ctx, t, schema, &riverbpmntest.Opts{Config: config})
		res, err := bundle.Client.Insert(ctx, nestedArgs{}, nil)
		require.NoError(t, err)
		return res.Job.MaxAttempts, res.Job.Priority
	}

	t.Run("FlatRetryCycleHonoured", func(t *testing.T) {
		t.Parallel()
		maxAttempts, _ := insert(t, &workflow.Config{DefaultRetryCycle: "R4/PT1M"})
		require.Equal(t, 4, maxAttempts, "R4: four executions")
	})

	t.Run("NestedRetryCycle", func(t *testing.T) {
		t.Parallel()
		maxAttempts, _ := insert(t, &workflow.Config{Retry: retrypolicy.Config{DefaultCycle: "R2/PT1M"}})
		require.Equal(t, 2, maxAttempts)
		maxAttempts, _ = insert(t, &workflow.Config{Retry: retrypolicy.Config{DefaultCycle: "R2/PT1M"}, DefaultRetryCycle: "R2/PT1M"})
		require.Equal(t, 2, maxAttempts, "both set to the same cycle is no conflict")
	})

	t.Run("BothDifferentRefused", func(t *testing.T) {
		t.Parallel()
		_, err := workflow.NewEngine(nil, &workflow.Config{Retry: retrypolicy.Config{DefaultCycle: "R2/PT1M"}, DefaultRetryCycle: "R3/PT1M"})
		require.ErrorContains(t, err, `Config.Retry.DefaultCycle "R2/PT1M" and the deprecated Config.DefaultRetryCycle "R3/PT1M" differ`)
	})

	t.Run("InvalidCycleNamesTheFieldSet", func(t *testing.T) {
		t.Parallel()
		_, err := workflow.NewEngine(nil, &workflow.Config{DefaultRetryCycle: "R3"})
		require.ErrorContains(t, err, `DefaultRetryCycle "R3"`)
		_, err = workflow.NewEngine(nil, &workflow.Config{Retry: retrypolicy.Config{DefaultCycle: "R3"}})
		require.ErrorContains(t, err, `Retry.DefaultCycle "R3"`)
	})

	// Either switch turns prioritised jobs off: a job's own priority is
	// not applied.
	t.Run("PrioritiesOff", func(t *testing.T) {
		t.Parallel()
		for _, config := range []*workflow.Config{{DisablePrioritizedJobs: true}, {Priority: priority.Config{Disabled: true}}} {
			schema := riverdbtest.TestSchema(ctx, t, riverbpmntest.Driver(t), nil)
			bundle := riverbpmntest.New(ctx, t, schema, &riverbpmntest.Opts{Config: config})
			res, err := bundle.Client.Insert(ctx, nestedCtxArgs{}, &river.InsertOpts{})
			require.NoError(t, err)
			jc, err := workflow.JobContextOf(res.Job)
			require.NoError(t, err)
			require.True(t, jc.Priority == nil || *jc.Priority == 0, "priority %v applied with prioritised jobs off", jc.Priority)
		}
		// The control: with prioritised jobs on, the job gets its 9.
		schema := riverdbtest.TestSchema(ctx, t, riverbpmntest.Driver(t), nil)
		bundle := riverbpmntest.New(ctx, t, schema, nil)
		res, err := bundle.Client.Insert(ctx, nestedCtxArgs{}, nil)
		require.NoError(t, err)
		jc, err := workflow.JobContextOf(res.Job)
		require.NoError(t, err)
		require.NotNil(t, jc.Priority)
		require.EqualValues(t, 9, *jc.Priority)
	})
}

// nestedCtxArgs is a job with a job context that asks for priority 9.
type nestedCtxArgs struct{}

func (nestedCtxArgs) Kind() string { return "config_nested_ctx" }

func (nestedCtxArgs) JobContext() workflow.JobContext {
	p := int64(9)
	return workflow.JobContext{ProcessDefinitionKey: "p", ProcessInstanceID: "pi-1", Priority: &p}
}
