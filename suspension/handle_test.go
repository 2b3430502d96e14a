package suspension_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/riverqueue/river/riverdbtest"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/riverbpmntest"
	"github.com/riverbpmn/riverbpmn/suspension"
	"github.com/riverbpmn/riverbpmn/workflow"
)

// TestSuspensions tests the suspensions handle (workflow.Engine.Suspensions)
// beyond what the suspension tests of package workflow show of suspending
// and activating: its two listings, and the configuration it is built from.
func TestSuspensions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	// setup returns an engine declaring five job definitions, jd-0 to jd-4,
	// of process definition "p".
	setup := func(t *testing.T, config *workflow.Config) *riverbpmntest.Bundle {
		t.Helper()
		if config == nil {
			config = &workflow.Config{}
		}
		config.ProcessDefinitions = []workflow.ProcessDefinition{{Key: "p"}}
		for i := range 5 {
			config.JobDefinitions = append(config.JobDefinitions, workflow.JobDefinition{
				ID: fmt.Sprintf("jd-%d", i), ProcessDefinitionKey: "p", ActivityID: fmt.Sprintf("a%d", i), Kind: fmt.Sprintf("k%d", i),
			})
		}
		schema := riverdbtest.TestSchema(ctx, t, riverbpmntest.Driver(t), nil)
		return riverbpmntest.New(ctx, t, schema, &riverbpmntest.Opts{Config: config})
	}

	// List: pages of suspended targets, oldest first, hold each once; the
	// last page's Next is empty; Type filters; a foreign cursor is refused
	// naming the field and the value. An unknown definition wraps
	// workflow.ErrNotFound.
	t.Run("List", func(t *testing.T) {
		t.Parallel()
		handle := setup(t, nil).Engine.Suspensions()
		for i := range 5 {
			_, err := handle.SuspendJobDefinition(ctx, fmt.Sprintf("jd-%d", i), nil)
			require.NoError(t, err)
		}
		_, err := handle.SuspendProcessDefinition(ctx, "p", nil)
		require.NoError(t, err)

		var got []string
		params := &suspension.ListParams{Limit: 2}
		for pages := 1; ; pages++ {
			res, err := handle.List(ctx, params)
			require.NoError(t, err)
			require.NotEmpty(t, res.Items)
			for _, s := range res.Items {
				got = append(got, string(s.Type)+" "+s.ID)
			}
			if res.Next == "" {
				require.Equal(t, 3, pages)
				break
			}
			params.After = res.Next
		}
		require.Len(t, got, 6)
		require.ElementsMatch(t, []string{"job_definition jd-0", "job_definition jd-1", "job_definition jd-2", "job_definition jd-3", "job_definition jd-4", "process_definition p"}, got)

		res, err := handle.List(ctx, &suspension.ListParams{Type: suspension.ProcessDefinition})
		require.NoError(t, err)
		require.Len(t, res.Items, 1)
		require.Empty(t, res.Next)

		_, err = handle.List(ctx, &suspension.ListParams{After: "yesterday"})
		require.ErrorContains(t, err, `suspension: ListParams.After "yesterday" is not a cursor`)
		_, err = handle.SuspendJobDefinition(ctx, "no-such", nil)
		require.ErrorIs(t, err, workflow.ErrNotFound)
	})

	// ListScheduled: changes scheduled for later, in due order, a page at a
	// time; one applied early leaves the listing.
	t.Run("ListScheduled", func(t *testing.T) {
		t.Parallel()
		handle := setup(t, nil).Engine.Suspensions()
		var ids []int64
		for i := range 3 {
			out, err := handle.SuspendJobDefinition(ctx, fmt.Sprintf("jd-%d", i), &suspension.Opts{At: time.Now().Add(time.Duration(3-i) * time.Hour)})
			require.NoError(t, err)
			require.NotZero(t, out.ScheduledID)
			ids = append(ids, out.ScheduledID)
		}
		var got []int64
		params := &suspension.ListScheduledParams{Limit: 2}
		for {
			res, err := handle.ListScheduled(ctx, params)
			require.NoError(t, err)
			for _, s := range res.Items {
				got = append(got, s.ID)
			}
			if res.Next == "" {
				break
			}
			params.After = res.Next
		}
		require.Equal(t, []int64{ids[2], ids[1], ids[0]}, got, "in due order")

		_, out, err := handle.ApplyScheduled(ctx, ids[1])
		require.NoError(t, err)
		require.True(t, out.Changed)
		res, err := handle.ListScheduled(ctx, nil)
		require.NoError(t, err)
		require.Len(t, res.Items, 2)
		_, _, err = handle.ApplyScheduled(ctx, 1<<40)
		require.ErrorIs(t, err, workflow.ErrNotFound)
	})

	// Config: Config.Suspension.ServiceInterval and the deprecated
	// Config.SuspensionServiceInterval set to different values are refused
	// naming both; the deprecated one alone is accepted (and honoured: the
	// leader's service uses it when the nested one is zero).
	t.Run("Config", func(t *testing.T) {
		t.Parallel()
		_, err := workflow.NewEngine(nil, &workflow.Config{Suspension: suspension.Config{ServiceInterval: time.Second}, SuspensionServiceInterval: time.Minute})
		require.ErrorContains(t, err, "Config.Suspension.ServiceInterval (1s) and the deprecated Config.SuspensionServiceInterval (1m0s) differ")
		_, err = workflow.NewEngine(nil, &workflow.Config{SuspensionServiceInterval: time.Minute})
		require.NoError(t, err)
		_, err = workflow.NewEngine(nil, &workflow.Config{Suspension: suspension.Config{ServiceInterval: time.Minute}, SuspensionServiceInterval: time.Minute})
		require.NoError(t, err, "the same value twice is no conflict")
	})
}
