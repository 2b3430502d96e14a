package lifecycle_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivershared/riversharedtest"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/internal/longtest"
	"github.com/riverbpmn/riverbpmn/lifecycle"
	"github.com/riverbpmn/riverbpmn/workflow"
)

const crashChildEnv = "RIVERBPMN_LIFECYCLE_CRASH_SCHEMA"

// TestLifecycleCrashChild is the worker process of
// TestDependenciesSurviveWorkerKill; it does nothing in a normal run.
func TestLifecycleCrashChild(t *testing.T) {
	schema := os.Getenv(crashChildEnv)
	if schema == "" {
		t.Skip("runs only as the child of TestDependenciesSurviveWorkerKill")
	}
	ctx := context.Background()
	engine, err := workflow.NewEngine(riversharedtest.DBPool(ctx, t), lcConfig(schema))
	require.NoError(t, err)
	workers := river.NewWorkers()
	river.AddWorker(workers, river.WorkFunc(func(ctx context.Context, job *river.Job[lcArgs]) error {
		time.Sleep(30 * time.Millisecond)
		return nil
	}))
	config, err := engine.ClientConfig(&river.Config{
		ID: "crash-child", Schema: schema, Workers: workers, Logger: quietLogger(),
		FetchCooldown: 10 * time.Millisecond, FetchPollInterval: 10 * time.Second,
		Queues: map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 8}},
	})
	require.NoError(t, err)
	client, err := river.NewClient(engine.Driver(), config)
	require.NoError(t, err)
	require.NoError(t, client.Start(ctx))
	time.Sleep(time.Minute) // killed long before
}

// TestDependenciesSurviveWorkerKill: a DAG is worked by another OS process,
// killed with SIGKILL half way; a new client (rescuing the jobs the dead
// one was running) finishes it. Every release happened in the transaction
// that completed the prerequisite, so none is lost: every job completes, and
// none started before its prerequisites completed (from the database's
// timestamps).
func TestDependenciesSurviveWorkerKill(t *testing.T) {
	longtest.Skip(t)
	t.Parallel()
	ctx := context.Background()
	f := setup(t)
	d := randomDAG(uint64(time.Now().UnixNano()), 200, 5, 30, 30)
	ids := make([]int64, 200)
	for _, level := range d.levels {
		params := make([]river.InsertManyParams, len(level))
		for k, job := range level {
			pre := make([]int64, len(d.prereqs[job]))
			for m, p := range d.prereqs[job] {
				pre[m] = ids[p]
			}
			params[k] = river.InsertManyParams{Args: lcArgs{Name: fmt.Sprint(job)}, InsertOpts: insertOpts(t, "", lifecycle.Opts{DependsOn: pre})}
		}
		res, err := f.client.InsertMany(ctx, params)
		require.NoError(t, err)
		for k, r := range res {
			ids[level[k]] = r.Job.ID
		}
	}

	table := pgx.Identifier{f.schema, "river_job"}.Sanitize()
	completed := func() int {
		var n int
		require.NoError(t, f.pool.QueryRow(ctx, fmt.Sprintf(`SELECT count(*) FROM %s WHERE state = 'completed'`, table)).Scan(&n))
		return n
	}
	child := exec.Command(os.Args[0], "-test.run=^TestLifecycleCrashChild$", "-test.count=1")
	child.Env = append(os.Environ(), crashChildEnv+"="+f.schema)
	require.NoError(t, child.Start())
	t.Cleanup(func() { _ = child.Process.Kill(); _ = child.Wait() })
	require.Eventually(t, func() bool { return completed() >= 60 }, 60*time.Second, 10*time.Millisecond)
	require.NoError(t, child.Process.Kill()) // SIGKILL
	_ = child.Wait()
	atKill := completed()
	t.Logf("killed the worker process with %d of 200 jobs completed", atKill)
	require.Less(t, atKill, 200)

	rec := newRecorder()
	workers := river.NewWorkers()
	river.AddWorker(workers, river.WorkFunc(rec.work))
	config, err := f.engine.ClientConfig(&river.Config{
		ID: "survivor", Schema: f.schema, Workers: workers, Logger: quietLogger(),
		RescueStuckJobsAfter: 2 * time.Second, JobTimeout: time.Second, FetchPollInterval: time.Second,
		Queues: map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 8}},
	})
	require.NoError(t, err)
	survivor, err := river.NewClient(f.engine.Driver(), config)
	require.NoError(t, err)
	require.NoError(t, survivor.Start(ctx))
	t.Cleanup(func() { _ = survivor.Stop(context.Background()) })
	require.Eventually(t, func() bool { return completed() == 200 }, 90*time.Second, 50*time.Millisecond)

	// From the database: each job's last run began after every prerequisite
	// was finalized.
	var violations int
	require.NoError(t, f.pool.QueryRow(ctx, fmt.Sprintf(`
		SELECT count(*)
		FROM %s AS dep
		JOIN %s AS d ON d.job_id = dep.id
		JOIN %s AS pre ON pre.id = d.prerequisite_id
		WHERE dep.attempted_at < pre.finalized_at`, table, pgx.Identifier{f.schema, "river_bpmn_dependency"}.Sanitize(), table)).Scan(&violations))
	require.Zero(t, violations)
}
