package priority_test

import (
	"context"
	"math"
	"testing"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdbtest"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/priority"
	"github.com/riverbpmn/riverbpmn/riverbpmntest"
	"github.com/riverbpmn/riverbpmn/workflow"
)

type paymentArgs struct {
	CustomerStatus string `json:"customer_status"`
}

func (paymentArgs) Kind() string { return "charge_payment" }

type shipArgs struct{}

func (shipArgs) Kind() string { return "ship_order" }

// orderConfig declares a process with priority 5 and three job definitions:
// one whose activity priority is the VIP function, one with a constant
// activity priority, one without (so the process's applies).
func orderConfig() *workflow.Config {
	return &workflow.Config{
		ProcessDefinitions: []workflow.ProcessDefinition{
			{Key: "order", Priority: priority.Constant(5), DeploymentID: "dep-1"},
			{Key: "unprioritised"},
		},
		JobDefinitions: []workflow.JobDefinition{
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

func of(instance, jobDefinitionID string) *river.InsertOpts {
	return workflow.JobContext{ProcessInstanceID: instance, JobDefinitionID: jobDefinitionID}.InsertOpts()
}

func ptr(v int64) *int64 { return &v }

// TestPrioritiesAtInsert: a job's priority follows Camunda's precedence at
// insert, through the engine's middleware: the job definition's overriding
// priority, else the activity's (a constant or a function of the args),
// else the process's, else a value given at insert, else 0; with
// prioritised jobs switched off, none is written.
func TestPrioritiesAtInsert(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	setup := func(t *testing.T, config *workflow.Config) *riverbpmntest.Bundle {
		t.Helper()
		schema := riverdbtest.TestSchema(ctx, t, riverbpmntest.Driver(t), nil)
		return riverbpmntest.New(ctx, t, schema, &riverbpmntest.Opts{Config: config})
	}

	// priorityOf inserts a job and reads its priority back as a worker would.
	priorityOf := func(t *testing.T, bundle *riverbpmntest.Bundle, args river.JobArgs, opts *river.InsertOpts) *int64 {
		t.Helper()
		res, err := bundle.Client.Insert(ctx, args, opts)
		require.NoError(t, err)
		jc, err := workflow.JobContextOf(res.Job)
		require.NoError(t, err)
		return jc.Priority
	}

	t.Run("Precedence", func(t *testing.T) {
		t.Parallel()
		bundle := setup(t, orderConfig())
		cases := []struct {
			name string
			args river.JobArgs
			opts *river.InsertOpts
			want int64
		}{
			{"ActivityFunctionVIP", paymentArgs{CustomerStatus: "VIP"}, of("pi-1", "charge"), 10},
			{"ActivityFunctionRegularWinsOverProcess", paymentArgs{CustomerStatus: "regular"}, of("pi-1", "charge"), 0},
			{"ActivityConstant", shipArgs{}, of("pi-1", "ship"), -3},
			{"Process", shipArgs{}, of("pi-1", "ship-plain"), 5},
			// Activity "wrap" has no job definition of kind ship_order.
			{"ProcessWithoutJobDefinition", shipArgs{}, workflow.JobContext{ProcessDefinitionKey: "order", ActivityID: "wrap"}.InsertOpts(), 5},
			{"ExplicitBelowDeclarations", shipArgs{}, workflow.JobContext{ProcessDefinitionKey: "order", ActivityID: "wrap", Priority: ptr(99)}.InsertOpts(), 5},
			{"Explicit", shipArgs{}, workflow.JobContext{ProcessDefinitionKey: "unprioritised", Priority: ptr(99)}.InsertOpts(), 99},
			{"Default", shipArgs{}, workflow.JobContext{ProcessDefinitionKey: "unprioritised"}.InsertOpts(), 0},
			{"PlainJobExplicit", shipArgs{}, workflow.JobContext{Priority: ptr(math.MinInt64)}.InsertOpts(), math.MinInt64},
		}
		for _, tc := range cases {
			require.Equal(t, ptr(tc.want), priorityOf(t, bundle, tc.args, tc.opts), tc.name)
		}

		// The overriding priority wins over the activity's.
		_, err := bundle.Engine.Definitions().SetOverridingPriority(ctx, "charge", 42, false)
		require.NoError(t, err)
		require.Equal(t, ptr(42), priorityOf(t, bundle, paymentArgs{CustomerStatus: "VIP"}, of("pi-2", "charge")))
		require.NoError(t, bundle.Engine.Definitions().ClearOverridingPriority(ctx, "charge"))

		// A plain River job has priority 0 by having no job context.
		res, err := bundle.Client.Insert(ctx, shipArgs{}, nil)
		require.NoError(t, err)
		_, err = workflow.JobContextOf(res.Job)
		require.ErrorIs(t, err, workflow.ErrNoJobContext)
		require.JSONEq(t, `{}`, string(res.Job.Metadata))
	})

	// The priority is in the job's metadata, as River UI shows it, in the
	// labelled form (the root left out for a top-level instance, which is
	// its own root, and exclusive, true by default with an instance).
	t.Run("VisibleInRiverUIMetadata", func(t *testing.T) {
		t.Parallel()
		bundle := setup(t, orderConfig())
		res, err := bundle.Client.Insert(ctx, paymentArgs{CustomerStatus: "VIP"}, of("pi-3", "charge"))
		require.NoError(t, err)
		require.JSONEq(t, `{"bpmn": {"instance": "pi-3", "process": "order", "activity": "charge", "job": "charge",
			"priority": 10, "deployment": "dep-1"}}`, string(res.Job.Metadata))
		jc, err := workflow.JobContextOf(res.Job)
		require.NoError(t, err)
		require.Equal(t, "pi-3", jc.RootProcessInstanceID, "read back, a top-level instance is its own root")

		// A called instance's job keeps its root in metadata.
		called := workflow.JobContext{ProcessInstanceID: "pi-4", JobDefinitionID: "charge", RootProcessInstanceID: "pi-top"}
		res, err = bundle.Client.Insert(ctx, paymentArgs{CustomerStatus: "VIP"}, called.InsertOpts())
		require.NoError(t, err)
		require.JSONEq(t, `{"bpmn": {"instance": "pi-4", "process": "order", "activity": "charge", "job": "charge",
			"priority": 10, "deployment": "dep-1", "root": "pi-top"}}`, string(res.Job.Metadata))
		jc, err = workflow.JobContextOf(res.Job)
		require.NoError(t, err)
		require.Equal(t, "pi-top", jc.RootProcessInstanceID)

		// A row written before the root was left out reads the same.
		old := *res.Job
		old.Metadata = []byte(`{"bpmn": {"process_instance_id": "pi-3", "root_process_instance_id": "pi-3", "process_definition_key": "order"}}`)
		jc, err = workflow.JobContextOf(&old)
		require.NoError(t, err)
		require.Equal(t, "pi-3", jc.RootProcessInstanceID)
	})

	// A job context that contradicts its job definition is refused, naming
	// the field.
	t.Run("DefinitionMismatches", func(t *testing.T) {
		t.Parallel()
		bundle := setup(t, orderConfig())
		_, err := bundle.Client.Insert(ctx, shipArgs{}, of("pi", "charge"))
		require.ErrorContains(t, err, `job_definition_id "charge": runs kind "charge_payment", but the job is of kind "ship_order"`)
		_, err = bundle.Client.Insert(ctx, shipArgs{}, of("pi", "nope"))
		require.ErrorContains(t, err, `job_definition_id "nope": is not a declared job definition`)
		_, err = bundle.Client.Insert(ctx, shipArgs{}, workflow.JobContext{JobDefinitionID: "ship", ActivityID: "other"}.InsertOpts())
		require.ErrorContains(t, err, `activity_id "other": differs from job definition "ship"'s "ship"`)
	})

	// With Config.Priority.Disabled no priority is written, so every job
	// counts as 0, overrides included.
	t.Run("SwitchedOff", func(t *testing.T) {
		t.Parallel()
		config := orderConfig()
		config.Priority = priority.Config{Disabled: true}
		bundle := setup(t, config)
		_, err := bundle.Engine.Definitions().SetOverridingPriority(ctx, "charge", 42, false)
		require.NoError(t, err)
		for _, opts := range []*river.InsertOpts{
			of("pi", "charge"),
			workflow.JobContext{ProcessDefinitionKey: "unprioritised", Priority: ptr(7)}.InsertOpts(),
		} {
			require.Nil(t, priorityOf(t, bundle, paymentArgs{CustomerStatus: "VIP"}, opts))
		}
	})
}
