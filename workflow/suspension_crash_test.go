package workflow

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/exclusive"
	"github.com/riverbpmn/riverbpmn/internal/longtest"
)

const suspCrashChildEnv = "RIVERBPMN_SUSPENSION_CRASH_SCHEMA"

// TestSuspensionCrashChild is the leader process of
// TestSuspensionScheduledSurvivesLeaderKill; it does nothing in a normal run.
func TestSuspensionCrashChild(t *testing.T) {
	schema := os.Getenv(suspCrashChildEnv)
	if schema == "" {
		t.Skip("runs only as the child of TestSuspensionScheduledSurvivesLeaderKill")
	}
	ctx := context.Background()
	config := suspConfig()
	config.Schema = schema
	config.ExclusiveScope = exclusive.None // as the parent's engine
	engine, err := NewEngine(testPool(t), config)
	require.NoError(t, err)
	client := newSuspClientWithID(t, engine, schema, "crash-child")
	require.NoError(t, client.Start(ctx))
	time.Sleep(time.Minute) // killed long before
}

// TestSuspensionScheduledSurvivesLeaderKill: a suspension is scheduled while
// the leader is another OS process, which is then killed with SIGKILL before
// the suspension is due. The client started next becomes leader (once River's
// leadership of the dead process expires) and applies it.
func TestSuspensionScheduledSurvivesLeaderKill(t *testing.T) {
	longtest.Skip(t)
	t.Parallel()
	ctx := context.Background()
	engine, schema := suspEngine(t, exclusive.None)

	child := exec.Command(os.Args[0], "-test.run=^TestSuspensionCrashChild$", "-test.count=1")
	child.Env = append(os.Environ(), suspCrashChildEnv+"="+schema)
	require.NoError(t, child.Start())
	t.Cleanup(func() { _ = child.Process.Kill(); _ = child.Wait() })
	leader := func() string {
		var id string
		_ = engine.dbPool.QueryRow(ctx, engine.sql(`SELECT leader_id FROM /* TEMPLATE: schema */river_leader`)).Scan(&id)
		return id
	}
	require.Eventually(t, func() bool { return leader() == "crash-child" }, 30*time.Second, 20*time.Millisecond, "the child never became leader")

	// Scheduled an hour ahead, so that no leader's scheduler makes it
	// available (and a client works it) before the suspension is applied.
	job, err := engine.dbPool.Exec(ctx, engine.sql(`
		INSERT INTO /* TEMPLATE: schema */river_job (args, kind, max_attempts, metadata, priority, queue, scheduled_at, state)
		VALUES ('{}', 'susp_test', 3, '{"bpmn": {"process_definition_key": "susp_process", "job_definition_id": "susp_task"}}', 1, 'default', now() + interval '1 hour', 'scheduled')`))
	require.NoError(t, err)
	require.EqualValues(t, 1, job.RowsAffected())
	due := time.Now().Add(2 * time.Second)
	res, err := engine.SuspendJobDefinition(ctx, "susp_task", &SuspendOpts{IncludeJobs: true, At: due})
	require.NoError(t, err)
	require.NoError(t, child.Process.Kill()) // SIGKILL
	killedAt := time.Now()
	_ = child.Wait()

	client := newSuspClientWithID(t, engine, schema, "after-crash")
	require.NoError(t, client.Start(ctx))
	var (
		appliedAt, dueAt time.Time
		appliedBy        string
	)
	require.Eventually(t, func() bool {
		err := engine.dbPool.QueryRow(ctx, engine.sql(`SELECT applied_at, due_at, applied_by FROM /* TEMPLATE: schema */river_bpmn_suspension_schedule WHERE id = $1 AND applied_at IS NOT NULL`), res.ScheduledID).Scan(&appliedAt, &dueAt, &appliedBy)
		return err == nil
	}, 60*time.Second, 50*time.Millisecond, "the scheduled suspension was never applied")
	t.Logf("leader killed %s before the suspension was due; applied %s after it was due, by %s (new leader: %s)",
		dueAt.Sub(killedAt).Round(time.Millisecond), appliedAt.Sub(dueAt).Round(time.Millisecond), appliedBy, leader())
	require.False(t, appliedAt.Before(dueAt), "applied before it was due")
	require.True(t, strings.HasSuffix(appliedBy, "/"+strconv.Itoa(os.Getpid())), "applied by %s, not this process", appliedBy)
	var pending int
	require.NoError(t, engine.dbPool.QueryRow(ctx, engine.sql(`SELECT count(*) FROM /* TEMPLATE: schema */river_job WHERE state = 'pending'`)).Scan(&pending))
	require.Equal(t, 1, pending)
}

// newSuspClientWithID is newSuspClient with a client id, on the engine's
// driver.
func newSuspClientWithID(t *testing.T, engine *Engine, schema, id string) *river.Client[pgx.Tx] {
	t.Helper()
	workers := river.NewWorkers()
	rec := newSuspRecorder()
	river.AddWorker(workers, &suspWorker{rec: rec})
	client, err := river.NewClient(engine.Driver(), &river.Config{
		ID:                id,
		FetchPollInterval: suspPoll,
		Middleware:        []rivertype.Middleware{engine.Middleware()},
		Queues:            map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 2}},
		Schema:            schema,
		TestOnly:          true,
		Workers:           workers,
	})
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = client.StopAndCancel(ctx)
	})
	return client
}
