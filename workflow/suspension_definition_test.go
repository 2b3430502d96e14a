package workflow

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/exclusive"
	"github.com/riverbpmn/riverbpmn/suspension"
)

// TestSuspensionProcessDefinition: suspending a process definition suspends
// its job definitions and its jobs without one; activating one of its job
// definitions makes that definition's new jobs active again (Camunda's
// semantics); IncludeJobs reaches existing jobs; other processes are left
// alone.
func TestSuspensionProcessDefinition(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	engine, schema := suspEngine(t, exclusive.None)
	client := newSuspClient(t, engine, engine.Driver(), schema, newSuspRecorder())
	state := func(job *rivertype.JobRow) rivertype.JobState { return jobState(ctx, t, engine, job.ID).State }

	existing := insertSusp(ctx, t, client, suspArgs{Name: "old", JobDef: "susp_task"}, suspArgs{Name: "old-nodef"})
	res, err := engine.SuspendProcessDefinition(ctx, "susp_process", nil)
	require.NoError(t, err)
	require.Equal(t, []string{"susp_other", "susp_task"}, res.JobDefinitions)
	require.Zero(t, res.Jobs, "without IncludeJobs, existing jobs stay active")
	for _, job := range existing {
		require.Equal(t, rivertype.JobStateAvailable, state(job))
	}
	fresh := insertSusp(ctx, t, client,
		suspArgs{Name: "new", JobDef: "susp_task"},
		suspArgs{Name: "new-other", JobDef: "susp_other"},
		suspArgs{Name: "new-nodef"},
		suspArgs{Name: "unrelated", JobDef: "unrelated_task"},
	)
	require.Equal(t, []rivertype.JobState{rivertype.JobStatePending, rivertype.JobStatePending, rivertype.JobStatePending, rivertype.JobStateAvailable},
		[]rivertype.JobState{fresh[0].State, fresh[1].State, fresh[2].State, fresh[3].State})

	_, err = engine.ActivateJobDefinition(ctx, "susp_task", nil)
	require.NoError(t, err)
	again := insertSusp(ctx, t, client, suspArgs{Name: "again", JobDef: "susp_task"}, suspArgs{Name: "again-other", JobDef: "susp_other"})
	require.Equal(t, rivertype.JobStateAvailable, again[0].State, "its job definition is active again")
	require.Equal(t, rivertype.JobStatePending, again[1].State)

	res, err = engine.SuspendProcessDefinition(ctx, "susp_process", &SuspendOpts{IncludeJobs: true})
	require.NoError(t, err)
	require.EqualValues(t, 3, res.Jobs, "old, old-nodef and again")
	require.Equal(t, rivertype.JobStateAvailable, state(fresh[3]))
	res, err = engine.ActivateProcessDefinition(ctx, "susp_process", &SuspendOpts{IncludeJobs: true})
	require.NoError(t, err)
	require.EqualValues(t, 7, res.Jobs, "the 3 above and the 4 inserted suspended")
	for _, job := range append(append(existing, fresh...), again...) {
		require.Equal(t, rivertype.JobStateAvailable, state(job), describe(job))
	}
}

// TestSuspensionCascadeUsesIndexes: the batches of a job definition's and a
// process instance's cascade read their jobs over River's GIN index on
// metadata (by containment), not the whole table. (A process definition
// holds a large share of the jobs; walking the primary key is the planner's
// right choice for it.)
func TestSuspensionCascadeUsesIndexes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	engine, _ := suspEngine(t, exclusive.None)
	_, err := engine.dbPool.Exec(ctx, engine.sql(`
		INSERT INTO /* TEMPLATE: schema */river_job (args, kind, max_attempts, metadata, priority, queue, state)
		SELECT '{}', 'susp_test', 3,
			jsonb_build_object('bpmn', jsonb_build_object('process_definition_key', 'p' || (i % 10), 'job_definition_id', 'jd-' || (i % 50),
				'activity_id', 'a', 'process_instance_id', 'pi-' || (i % 5000))),
			1, 'default', 'available'
		FROM generate_series(1, 20000) AS i`))
	require.NoError(t, err)
	_, err = engine.dbPool.Exec(ctx, engine.sql(`ANALYZE /* TEMPLATE: schema */river_job`))
	require.NoError(t, err)
	for target, id := range map[suspension.TargetType]string{
		suspension.JobDefinition:   "jd-7",
		suspension.ProcessInstance: "pi-77",
	} {
		const index = "river_job_metadata_index"
		sql := suspension.CascadeBatchSQL(target, engine.config.Schema)
		rows, err := engine.dbPool.Query(ctx, "EXPLAIN "+sql, id, int64(0), 1000, true, string(target))
		require.NoError(t, err)
		lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
		require.NoError(t, err)
		plan := strings.Join(lines, "\n")
		require.Contains(t, plan, index, "%s cascade plan:\n%s", target, plan)
	}
}

// TestSuspensionExclusiveWaitWithoutScope: ExclusiveWait reports a suspended
// job's hold when exclusive execution is off, too.
func TestSuspensionExclusiveWaitWithoutScope(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	engine, schema := suspEngine(t, exclusive.None)
	client := newSuspClient(t, engine, engine.Driver(), schema, newSuspRecorder())
	jobs := insertSusp(ctx, t, client, suspArgs{Name: "a", Instance: "pi-w"})
	_, err := engine.SuspendJob(ctx, jobs[0].ID)
	require.NoError(t, err)
	wait, err := engine.ExclusiveWait(ctx, jobs[0].ID)
	require.NoError(t, err)
	require.Empty(t, wait.Key)
	require.NotNil(t, wait.Hold)
	require.Equal(t, rivertype.JobStateAvailable, wait.Hold.ReleaseTo)
	require.Zero(t, wait.KeyJobsSuspended)
}
