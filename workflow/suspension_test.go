package workflow

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/exclusive"
	"github.com/riverbpmn/riverbpmn/hold"
	"github.com/riverbpmn/riverbpmn/priority"
)

// TestSuspensionWithClients: jobs of a suspended job definition and of a
// suspended process instance, present and inserted later, are not run within
// 3 poll intervals while other jobs are, and run right after activation.
func TestSuspensionWithClients(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	engine, schema := suspEngine(t, exclusive.None)
	rec := newSuspRecorder()
	client := newSuspClient(t, engine, engine.Driver(), schema, rec)

	before := insertSusp(ctx, t, client,
		suspArgs{Name: "jd-1", JobDef: "susp_task", Instance: "pi-a"},
		suspArgs{Name: "jd-2", JobDef: "susp_task", Instance: "pi-b"},
		suspArgs{Name: "pi-1", JobDef: "susp_other", Instance: "pi-x"},
		suspArgs{Name: "pi-2", Instance: "pi-x"},
	)
	res, err := engine.SuspendJobDefinition(ctx, "susp_task", &SuspendOpts{IncludeJobs: true})
	require.NoError(t, err)
	require.True(t, res.Changed)
	require.EqualValues(t, 2, res.Jobs)
	res, err = engine.SuspendProcessInstance(ctx, "pi-x")
	require.NoError(t, err)
	require.EqualValues(t, 2, res.Jobs)
	after := insertSusp(ctx, t, client,
		suspArgs{Name: "jd-3", JobDef: "susp_task", Instance: "pi-c"},
		suspArgs{Name: "pi-3", JobDef: "susp_other", Instance: "pi-x"},
	)
	suspended := append(before, after...)
	for _, job := range suspended {
		got := jobState(ctx, t, engine, job.ID)
		require.Equal(t, rivertype.JobStatePending, got.State, describe(got))
		require.True(t, IsJobSuspended(got))
	}
	controls := insertSusp(ctx, t, client,
		suspArgs{Name: "ctl-1", JobDef: "susp_other", Instance: "pi-y"},
		suspArgs{Name: "ctl-2", Instance: "pi-z"},
	)
	plain, err := client.Insert(ctx, suspPlainArgs{Name: "plain"}, nil)
	require.NoError(t, err)

	require.NoError(t, client.Start(ctx))
	waitFinished(t, rec, 10*time.Second, append(idsOf(controls), plain.Job.ID)...)
	time.Sleep(3 * suspPoll) // three more polls
	for _, job := range suspended {
		require.Empty(t, rec.startsOf(job.ID), "suspended job %d ran", job.ID)
	}

	activatedAt := time.Now()
	res, err = engine.ActivateJobDefinition(ctx, "susp_task", &SuspendOpts{IncludeJobs: true})
	require.NoError(t, err)
	require.EqualValues(t, 3, res.Jobs)
	res, err = engine.ActivateProcessInstance(ctx, "pi-x")
	require.NoError(t, err)
	require.EqualValues(t, 3, res.Jobs)
	waitFinished(t, rec, 10*time.Second, idsOf(suspended)...)
	var latest time.Duration
	for _, job := range suspended {
		starts := rec.startsOf(job.ID)
		require.Len(t, starts, 1)
		require.True(t, starts[0].After(activatedAt), "job %d started before its activation", job.ID)
		latest = max(latest, starts[0].Sub(activatedAt))
	}
	t.Logf("last suspended job started %s after the activation call began (poll interval %s)", latest, suspPoll)
	// Woken by the release's notification: well within a few poll intervals
	// even on a loaded machine.
	require.Less(t, latest, 5*time.Second)
}

// TestSuspensionInsertRace: with inserts of a job definition's jobs under way
// through all six insert calls, SuspendJobDefinition with IncludeJobs leaves
// no job of the definition active; an insert in flight when the suspension
// commits is waited for.
func TestSuspensionInsertRace(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	engine, schema := suspEngine(t, exclusive.None)
	client := newSuspClient(t, engine, engine.Driver(), schema, newSuspRecorder())

	// An insert under way: its transaction inserted a job (not suspended
	// then) and has not committed. The suspension waits for it. Once with
	// nothing suspended (the first suspension waits for every inserting
	// transaction), once with another target suspended (the suspension waits
	// for the inserts of its own lock bucket).
	for _, otherSuspended := range []bool{false, true} {
		if otherSuspended {
			insertSusp(ctx, t, client, suspArgs{Name: "other", Instance: "pi-other"})
			_, err := engine.SuspendProcessInstance(ctx, "pi-other")
			require.NoError(t, err)
		}
		tx, err := engine.dbPool.Begin(ctx)
		require.NoError(t, err)
		inFlight, err := client.InsertTx(ctx, tx, suspArgs{Name: "in-flight", JobDef: "susp_task"}, nil)
		require.NoError(t, err)
		require.Equal(t, rivertype.JobStateAvailable, inFlight.Job.State)
		done := make(chan error, 1)
		go func() {
			_, err := engine.SuspendJobDefinition(ctx, "susp_task", &SuspendOpts{IncludeJobs: true})
			done <- err
		}()
		select {
		case err := <-done:
			t.Fatalf("the suspension committed while an insert of the definition was under way (other suspended: %t, err %v)", otherSuspended, err)
		case <-time.After(300 * time.Millisecond):
		}
		require.NoError(t, tx.Commit(ctx))
		require.NoError(t, <-done)
		require.Equal(t, rivertype.JobStatePending, jobState(ctx, t, engine, inFlight.Job.ID).State)
		_, err = engine.ActivateJobDefinition(ctx, "susp_task", &SuspendOpts{IncludeJobs: true})
		require.NoError(t, err)
	}

	// Six inserters, one per insert call, while the suspension runs.
	var (
		stop     atomic.Bool
		inserted atomic.Int64
		wg       sync.WaitGroup
		errs     = make(chan error, 6)
	)
	inserters := []func(n int) error{
		func(n int) error {
			_, err := client.Insert(ctx, suspArgs{Name: fmt.Sprint(n), JobDef: "susp_task"}, nil)
			return err
		},
		func(n int) error {
			return pgx.BeginFunc(ctx, engine.dbPool, func(tx pgx.Tx) error {
				_, err := client.InsertTx(ctx, tx, suspArgs{Name: fmt.Sprint(n), JobDef: "susp_task"}, nil)
				return err
			})
		},
		func(n int) error {
			_, err := client.InsertMany(ctx, []river.InsertManyParams{{Args: suspArgs{Name: fmt.Sprint(n), JobDef: "susp_task"}}, {Args: suspArgs{Name: fmt.Sprint(n), JobDef: "susp_task"}}})
			return err
		},
		func(n int) error {
			return pgx.BeginFunc(ctx, engine.dbPool, func(tx pgx.Tx) error {
				_, err := client.InsertManyTx(ctx, tx, []river.InsertManyParams{{Args: suspArgs{Name: fmt.Sprint(n), JobDef: "susp_task"}}})
				return err
			})
		},
		func(n int) error {
			_, err := client.InsertManyFast(ctx, []river.InsertManyParams{{Args: suspArgs{Name: fmt.Sprint(n), JobDef: "susp_task"}}, {Args: suspArgs{Name: fmt.Sprint(n), JobDef: "susp_task"}}})
			return err
		},
		func(n int) error {
			return pgx.BeginFunc(ctx, engine.dbPool, func(tx pgx.Tx) error {
				_, err := client.InsertManyFastTx(ctx, tx, []river.InsertManyParams{{Args: suspArgs{Name: fmt.Sprint(n), JobDef: "susp_task"}}})
				return err
			})
		},
	}
	for _, insert := range inserters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; !stop.Load(); n++ {
				if err := insert(n); err != nil {
					errs <- err
					return
				}
				inserted.Add(1)
			}
		}()
	}
	time.Sleep(200 * time.Millisecond)
	res, err := engine.SuspendJobDefinition(ctx, "susp_task", &SuspendOpts{IncludeJobs: true})
	require.NoError(t, err)
	atSuspension := inserted.Load()
	time.Sleep(200 * time.Millisecond)
	stop.Store(true)
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.Greater(t, inserted.Load(), atSuspension, "inserts went on after the suspension")

	var total, active int
	require.NoError(t, engine.dbPool.QueryRow(ctx, engine.sql(`
		SELECT count(*), count(*) FILTER (WHERE state <> 'pending')
		FROM /* TEMPLATE: schema */river_job
		WHERE /* TEMPLATE: schema */river_bpmn_ctx_job_definition(metadata) = 'susp_task'`)).Scan(&total, &active))
	t.Logf("%d jobs inserted by six concurrent insert calls, %d of them before the suspension returned (cascade: %d jobs, %d batches)", total, atSuspension, res.Jobs, res.Batches)
	require.Positive(t, total)
	require.Zero(t, active, "jobs of the suspended definition escaped the suspension")

	// Every held job is consistent (package hold's invariant).
	var mismatched int
	require.NoError(t, engine.dbPool.QueryRow(ctx, engine.sql(`
		SELECT count(*) FROM /* TEMPLATE: schema */river_job
		WHERE /* TEMPLATE: schema */river_bpmn_ctx_job_definition(metadata) = 'susp_task'
			AND (metadata -> 'bpmn_hold' -> 'reasons') IS DISTINCT FROM /* TEMPLATE: schema */river_bpmn_hold_reasons(id)`)).Scan(&mismatched))
	require.Zero(t, mismatched)
}

// TestSuspensionRunningJob: a job suspended while it runs finishes its
// execution; when that execution fails, it is not retried until activated;
// when it succeeds, it is completed.
func TestSuspensionRunningJob(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	engine, schema := suspEngine(t, exclusive.None)
	rec := newSuspRecorder()
	client := newSuspClient(t, engine, engine.Driver(), schema, rec)
	jobs := insertSusp(ctx, t, client,
		suspArgs{Name: "fails", JobDef: "susp_task", Instance: "pi-run", Block: true},
		suspArgs{Name: "succeeds", JobDef: "susp_task", Instance: "pi-run2", Block: true},
	)
	failing, succeeding := jobs[0], jobs[1]
	require.NoError(t, client.Start(ctx))
	for range 2 {
		<-rec.started
	}
	changed, err := engine.SuspendJob(ctx, failing.ID)
	require.NoError(t, err)
	require.True(t, changed)
	_, err = engine.SuspendProcessInstance(ctx, "pi-run2")
	require.NoError(t, err)
	require.Equal(t, rivertype.JobStateRunning, jobState(ctx, t, engine, failing.ID).State, "a running job is not interrupted")

	rec.release(failing.ID, errSuspTestFailure)
	rec.release(succeeding.ID, nil)
	waitFinished(t, rec, 10*time.Second, failing.ID, succeeding.ID)
	require.Eventually(t, func() bool {
		return jobState(ctx, t, engine, failing.ID).State == rivertype.JobStatePending &&
			jobState(ctx, t, engine, succeeding.ID).State == rivertype.JobStateCompleted
	}, 10*time.Second, 10*time.Millisecond)
	failed := jobState(ctx, t, engine, failing.ID)
	state, err := JobHold(failed)
	require.NoError(t, err)
	// River asks for available when the retry is due within its scheduler's
	// threshold (soonRetry: a millisecond), retryable otherwise.
	require.Contains(t, []rivertype.JobState{rivertype.JobStateAvailable, rivertype.JobStateRetryable}, state.ReleaseTo)
	require.Len(t, failed.Errors, 1)
	completed := jobState(ctx, t, engine, succeeding.ID)
	require.False(t, IsJobSuspended(completed))

	time.Sleep(3 * suspPoll)
	require.Len(t, rec.startsOf(failing.ID), 1, "a failed suspended job was retried before its activation")

	// Taken before the call: a client may start the job between the
	// activation's commit and the call's return.
	activating := time.Now()
	changed, err = engine.ActivateJob(ctx, failing.ID)
	require.NoError(t, err)
	require.True(t, changed)
	select {
	case id := <-rec.started:
		require.Equal(t, failing.ID, id)
	case <-time.After(10 * time.Second):
		t.Fatal("the activated job was not retried")
	}
	starts := rec.startsOf(failing.ID)
	require.Len(t, starts, 2)
	require.True(t, starts[1].After(activating), "the job was retried before its activation")
	rec.release(failing.ID, nil)
	waitFinished(t, rec, 10*time.Second, failing.ID)
	require.Eventually(t, func() bool {
		return jobState(ctx, t, engine, failing.ID).State == rivertype.JobStateCompleted
	}, 10*time.Second, 10*time.Millisecond)
	require.Equal(t, 2, jobState(ctx, t, engine, failing.ID).Attempt)
}

// TestSuspensionExclusive: a suspended job neither holds nor blocks its
// exclusive key; ExclusiveWait says it is suspended.
func TestSuspensionExclusive(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	engine, schema := suspEngine(t, exclusive.ProcessInstance)
	rec := newSuspRecorder()
	client := newSuspClient(t, engine, engine.Driver(), schema, rec)
	jobs := insertSusp(ctx, t, client,
		suspArgs{Name: "first", Instance: "pi-ex"},
		suspArgs{Name: "second", Instance: "pi-ex"},
		suspArgs{Name: "third", Instance: "pi-ex"},
	)
	_, err := engine.SuspendJob(ctx, jobs[0].ID)
	require.NoError(t, err)
	wait, err := engine.ExclusiveWait(ctx, jobs[0].ID)
	require.NoError(t, err)
	require.NotNil(t, wait.Hold)
	require.True(t, wait.Hold.Has(hold.Suspended))
	require.Equal(t, "pi-ex", wait.Key)
	require.Equal(t, 1, wait.KeyJobsSuspended)
	require.False(t, wait.Waiting)
	wait, err = engine.ExclusiveWait(ctx, jobs[1].ID)
	require.NoError(t, err)
	require.Nil(t, wait.Hold)
	require.Zero(t, wait.KeyJobsAhead, "the suspended first job is not ahead of the second")
	require.Equal(t, 1, wait.KeyJobsSuspended)

	require.NoError(t, client.Start(ctx))
	waitFinished(t, rec, 10*time.Second, jobs[1].ID, jobs[2].ID)
	time.Sleep(3 * suspPoll)
	require.Empty(t, rec.startsOf(jobs[0].ID))
	_, err = engine.ActivateJob(ctx, jobs[0].ID)
	require.NoError(t, err)
	waitFinished(t, rec, 10*time.Second, jobs[0].ID)
	// Exclusive: the three never overlapped.
	var spans []exclusive.Span
	rec.mu.Lock()
	for _, job := range jobs {
		spans = append(spans, exclusive.Span{JobID: job.ID, Key: "pi-ex", Start: rec.starts[job.ID][0], End: rec.ends[job.ID][0]})
	}
	rec.mu.Unlock()
	require.Empty(t, exclusive.Overlaps(spans))
}

// TestSuspensionEveryAcquisition: no acquisition option fetches a suspended
// job.
func TestSuspensionEveryAcquisition(t *testing.T) {
	t.Parallel()
	acquisitions := map[string]Acquisition{
		"stock":              {},
		"by_priority":        {ByPriority: true},
		"timers_first":       {TimersFirst: true},
		"by_due_date":        {ByDueDate: true},
		"range":              {ByPriority: true, PriorityRange: &priority.Range{Min: 0, Max: 100}},
		"deployments":        {DeploymentAware: true, Deployments: []string{"dep-1"}},
		"all_of_them":        {ByPriority: true, TimersFirst: true, ByDueDate: true, PriorityRange: &priority.Range{Min: 0, Max: 100}, DeploymentAware: true, Deployments: []string{"dep-1"}},
		"exclusive_root":     {},
		"exclusive_instance": {},
	}
	for name, acq := range acquisitions {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			scope := map[string]exclusive.Scope{
				"exclusive_root": exclusive.RootProcessInstance, "exclusive_instance": exclusive.ProcessInstance,
			}[name] // exclusive.None otherwise
			engine, schema := suspEngine(t, scope)
			driver, err := engine.NewDriver(acq)
			require.NoError(t, err)
			rec := newSuspRecorder()
			client := newSuspClient(t, engine, driver, schema, rec)
			all := suspArgs{Instance: "pi-acq", Deployment: "dep-1", Timer: true, Priority: 50}
			suspended := insertSusp(ctx, t, client, all, all, suspArgs{Instance: "pi-acq", Priority: 99})
			controlArgs := all
			controlArgs.Instance = "pi-control"
			controls := insertSusp(ctx, t, client, controlArgs)
			_, err = engine.SuspendProcessInstance(ctx, "pi-acq")
			require.NoError(t, err)
			require.NoError(t, client.Start(ctx))
			waitFinished(t, rec, 10*time.Second, idsOf(controls)...)
			time.Sleep(3 * suspPoll)
			for _, job := range suspended {
				require.Empty(t, rec.startsOf(job.ID), "suspended job %d ran", job.ID)
			}
			_, err = engine.ActivateProcessInstance(ctx, "pi-acq")
			require.NoError(t, err)
			waitFinished(t, rec, 10*time.Second, idsOf(suspended)...)
		})
	}
}

// TestSuspensionDelayedAfterRestart: a suspension scheduled for later is
// applied on time by the leader, even when the client that was leader when
// it was scheduled has stopped and another has taken over.
func TestSuspensionDelayedAfterRestart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	engine, schema := suspEngine(t, exclusive.None)
	rec := newSuspRecorder()
	first := newSuspClient(t, engine, engine.Driver(), schema, rec)
	require.NoError(t, first.Start(ctx))

	existing, err := first.Insert(ctx, suspArgs{Name: "existing", JobDef: "susp_task"}, &river.InsertOpts{ScheduledAt: time.Now().Add(time.Hour)})
	require.NoError(t, err)
	due := time.Now().Add(1500 * time.Millisecond)
	res, err := engine.SuspendJobDefinition(ctx, "susp_task", &SuspendOpts{IncludeJobs: true, At: due})
	require.NoError(t, err)
	require.NotZero(t, res.ScheduledID)
	scheduled, err := engine.ScheduledSuspensions(ctx)
	require.NoError(t, err)
	require.Len(t, scheduled, 1)
	require.Equal(t, rivertype.JobStateScheduled, jobState(ctx, t, engine, existing.Job.ID).State, "not suspended before it is due")

	// The first client (the leader) stops; a new one, on a new engine, takes
	// over.
	require.NoError(t, first.Stop(ctx))
	engine2, err := NewEngine(engine.dbPool, func() *Config {
		c := suspConfig()
		c.Schema, c.ExclusiveScope = schema, exclusive.None // as the first engine
		return c
	}())
	require.NoError(t, err)
	second := newSuspClient(t, engine2, engine2.Driver(), schema, rec)
	require.NoError(t, second.Start(ctx))

	var appliedAt, dueAt time.Time
	require.Eventually(t, func() bool {
		err := engine.dbPool.QueryRow(ctx, engine.sql(`SELECT applied_at, due_at FROM /* TEMPLATE: schema */river_bpmn_suspension_schedule WHERE id = $1 AND applied_at IS NOT NULL`), res.ScheduledID).Scan(&appliedAt, &dueAt)
		return err == nil
	}, 20*time.Second, 20*time.Millisecond)
	late := appliedAt.Sub(dueAt)
	t.Logf("scheduled suspension applied %s after it was due", late)
	require.GreaterOrEqual(t, late, time.Duration(0), "applied before it was due")
	require.Less(t, late, 5*time.Second, "applied late (leader takeover plus service interval)")

	// Its existing job and a new job are suspended and do not run.
	fresh := insertSusp(ctx, t, second, suspArgs{Name: "fresh", JobDef: "susp_task"})
	require.Equal(t, rivertype.JobStatePending, jobState(ctx, t, engine, fresh[0].ID).State)
	held := jobState(ctx, t, engine, existing.Job.ID)
	require.Equal(t, rivertype.JobStatePending, held.State)
	state, err := JobHold(held)
	require.NoError(t, err)
	require.Equal(t, rivertype.JobStateScheduled, state.ReleaseTo)
	time.Sleep(3 * suspPoll)
	require.Empty(t, rec.startsOf(fresh[0].ID))
}

// TestSuspensionErrorsAndIdempotence: unknown ids are ErrNotFound naming the
// id; repeating a suspension or activation changes nothing.
func TestSuspensionErrorsAndIdempotence(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	engine, _ := suspEngine(t, exclusive.None)

	_, err := engine.SuspendJobDefinition(ctx, "nope_jd", nil)
	require.ErrorIs(t, err, ErrNotFound)
	require.ErrorContains(t, err, `"nope_jd"`)
	_, err = engine.ActivateProcessDefinition(ctx, "nope_pd", nil)
	require.ErrorIs(t, err, ErrNotFound)
	require.ErrorContains(t, err, `"nope_pd"`)
	_, err = engine.SuspendProcessInstance(ctx, "nope_pi")
	require.ErrorIs(t, err, ErrNotFound)
	require.ErrorContains(t, err, `"nope_pi"`)
	_, err = engine.SuspendJob(ctx, 987654321)
	require.ErrorIs(t, err, ErrNotFound)
	require.ErrorContains(t, err, "987654321")
	_, err = engine.ActivateJob(ctx, 987654321)
	require.ErrorIs(t, err, ErrNotFound)

	res, err := engine.SuspendProcessDefinition(ctx, "susp_process", nil)
	require.NoError(t, err)
	require.True(t, res.Changed)
	require.Equal(t, []string{"susp_other", "susp_task"}, res.JobDefinitions)
	res, err = engine.SuspendProcessDefinition(ctx, "susp_process", nil)
	require.NoError(t, err)
	require.False(t, res.Changed, "suspending the suspended is a no-op")
	targets, err := engine.SuspendedTargets(ctx)
	require.NoError(t, err)
	require.Len(t, targets, 3)
	res, err = engine.ActivateProcessDefinition(ctx, "susp_process", nil)
	require.NoError(t, err)
	require.True(t, res.Changed)
	res, err = engine.ActivateProcessDefinition(ctx, "susp_process", nil)
	require.NoError(t, err)
	require.False(t, res.Changed)
	targets, err = engine.SuspendedTargets(ctx)
	require.NoError(t, err)
	require.Empty(t, targets)
}
