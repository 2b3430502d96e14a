package workflow

import (
	"context"
	"testing"
	"time"

	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/exclusive"
	"github.com/riverbpmn/riverbpmn/suspension"
)

// TestApplyScheduledSuspensionNow reproduces Camunda's
// ProcessDefinitionSuspensionTest.testDelayedSuspendProcessDefinition (and
// testDelayedActivateProcessDefinition), here on a job definition:
// a suspension scheduled for later is applied at once when its job is
// executed by hand (managementService.executeJob); riverbpmn keeps the
// delayed change as a row, applied now by ApplyScheduledSuspension, after
// which it is no longer pending and is not applied again.
func TestApplyScheduledSuspensionNow(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	engine, schema := suspEngine(t, exclusive.None)
	client := newSuspClient(t, engine, engine.Driver(), schema, newSuspRecorder())
	jobs := insertSusp(ctx, t, client, suspArgs{Name: "waiting", JobDef: "susp_task"})

	res, err := engine.SuspendJobDefinition(ctx, "susp_task", &SuspendOpts{IncludeJobs: true, At: time.Now().Add(time.Hour)})
	require.NoError(t, err)
	require.NotZero(t, res.ScheduledID)
	require.Equal(t, rivertype.JobStateAvailable, jobState(ctx, t, engine, jobs[0].ID).State, "not yet")

	change, applied, err := engine.ApplyScheduledSuspension(ctx, res.ScheduledID)
	require.NoError(t, err)
	require.Equal(t, suspension.Change{Type: suspension.JobDefinition, ID: "susp_task", Suspend: true, IncludeJobs: true}, change.Change)
	require.True(t, applied.Changed)
	require.EqualValues(t, 1, applied.Jobs)
	require.Equal(t, rivertype.JobStatePending, jobState(ctx, t, engine, jobs[0].ID).State)
	state, err := engine.JobDefinition(ctx, "susp_task")
	require.NoError(t, err)
	require.True(t, state.Suspended)
	pending, err := engine.ScheduledSuspensions(ctx)
	require.NoError(t, err)
	require.Empty(t, pending)

	_, _, err = engine.ApplyScheduledSuspension(ctx, res.ScheduledID)
	require.ErrorIs(t, err, suspension.ErrScheduleApplied)
	_, _, err = engine.ApplyScheduledSuspension(ctx, 1<<40)
	require.ErrorIs(t, err, ErrNotFound)
}
