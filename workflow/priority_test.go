package workflow

import (
	"context"
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/internal/longtest"
	"github.com/riverbpmn/riverbpmn/priority"
)

type paymentArgs struct {
	CustomerStatus string `json:"customer_status"`
}

func (paymentArgs) Kind() string { return "charge_payment" }

// orderConfig declares a process with priority 5 and three job definitions:
// one whose activity priority is the VIP function, one with a constant
// activity priority, one without (so the process's applies).
func orderConfig() *Config {
	return &Config{
		ProcessDefinitions: []ProcessDefinition{
			{Key: "order", Priority: priority.Constant(5), DeploymentID: "dep-1"},
			{Key: "unprioritised"},
		},
		JobDefinitions: []JobDefinition{
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

func defContext(instance, jobDefinitionID string) JobContext {
	return JobContext{ProcessInstanceID: instance, JobDefinitionID: jobDefinitionID}
}

// jobPriority reads a job's priority back as a worker would.
func jobPriority(ctx context.Context, t *testing.T, engine *Engine, jobID int64) *int64 {
	t.Helper()
	job, err := engine.Driver().GetExecutor().JobGetByID(ctx, &riverdriver.JobGetByIDParams{ID: jobID, Schema: engine.config.Schema})
	require.NoError(t, err)
	jc, err := JobContextOf(job)
	require.NoError(t, err)
	return jc.Priority
}

func insertJob(ctx context.Context, t *testing.T, client *river.Client[pgx.Tx], args river.JobArgs, opts *river.InsertOpts) int64 {
	t.Helper()
	res, err := client.Insert(ctx, args, opts)
	require.NoError(t, err)
	return res.Job.ID
}

func TestPriorityPrecedence(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	engine, schema := testEngineWithConfig(t, orderConfig())
	client := newInsertClient(t, engine, schema)

	cases := []struct {
		name string
		args river.JobArgs
		opts *river.InsertOpts
		want int64
	}{
		{"ActivityFunctionVIP", paymentArgs{CustomerStatus: "VIP"}, defContext("pi-1", "charge").InsertOpts(), 10},
		{"ActivityFunctionRegularWinsOverProcess", paymentArgs{CustomerStatus: "regular"}, defContext("pi-1", "charge").InsertOpts(), 0},
		{"ActivityConstant", shipArgs{}, defContext("pi-1", "ship").InsertOpts(), -3},
		{"Process", shipArgs{}, defContext("pi-1", "ship-plain").InsertOpts(), 5},
		// Activity "wrap" has no job definition of kind ship_order.
		{"ProcessWithoutJobDefinition", shipArgs{}, JobContext{ProcessDefinitionKey: "order", ActivityID: "wrap"}.InsertOpts(), 5},
		{"ExplicitBelowDeclarations", shipArgs{}, JobContext{ProcessDefinitionKey: "order", ActivityID: "wrap", Priority: ptr(int64(99))}.InsertOpts(), 5},
		{"Explicit", shipArgs{}, JobContext{ProcessDefinitionKey: "unprioritised", Priority: ptr(int64(99))}.InsertOpts(), 99},
		{"Default", shipArgs{}, JobContext{ProcessDefinitionKey: "unprioritised"}.InsertOpts(), 0},
		{"PlainJobExplicit", shipArgs{}, JobContext{Priority: ptr(int64(math.MinInt64))}.InsertOpts(), math.MinInt64},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			id := insertJob(ctx, t, client, tc.args, tc.opts)
			require.Equal(t, ptr(tc.want), jobPriority(ctx, t, engine, id))
		})
	}

	t.Run("OverrideWinsOverActivity", func(t *testing.T) {
		require.NoError(t, engine.SetOverridingJobPriority(ctx, "charge", 42, false))
		id := insertJob(ctx, t, client, paymentArgs{CustomerStatus: "VIP"}, defContext("pi-2", "charge").InsertOpts())
		require.Equal(t, ptr(int64(42)), jobPriority(ctx, t, engine, id))
		require.NoError(t, engine.ClearOverridingJobPriority(ctx, "charge"))
	})

	t.Run("PlainRiverJobHasNone", func(t *testing.T) {
		res, err := client.Insert(ctx, shipArgs{}, nil)
		require.NoError(t, err)
		_, err = JobContextOf(res.Job)
		require.ErrorIs(t, err, ErrNoJobContext, "a plain job has priority 0 by having none")
		require.JSONEq(t, `{}`, string(res.Job.Metadata))
	})

	t.Run("VisibleInRiverUIMetadata", func(t *testing.T) {
		res, err := client.Insert(ctx, paymentArgs{CustomerStatus: "VIP"}, defContext("pi-3", "charge").InsertOpts())
		require.NoError(t, err)
		// The labelled form; the root is left out (a top-level instance is
		// its own root), and exclusive, true by default with an instance.
		require.JSONEq(t, `{"bpmn": {"instance": "pi-3", "process": "order", "activity": "charge", "job": "charge",
			"priority": 10, "deployment": "dep-1"}}`, string(res.Job.Metadata))
		jc, err := JobContextOf(res.Job)
		require.NoError(t, err)
		require.Equal(t, "pi-3", jc.RootProcessInstanceID, "read back, a top-level instance is its own root")

		// A called instance's job keeps its root in metadata.
		called := defContext("pi-4", "charge")
		called.RootProcessInstanceID = "pi-top"
		res, err = client.Insert(ctx, paymentArgs{CustomerStatus: "VIP"}, called.InsertOpts())
		require.NoError(t, err)
		require.JSONEq(t, `{"bpmn": {"instance": "pi-4", "process": "order", "activity": "charge", "job": "charge",
			"priority": 10, "deployment": "dep-1", "root": "pi-top"}}`, string(res.Job.Metadata))
		jc, err = JobContextOf(res.Job)
		require.NoError(t, err)
		require.Equal(t, "pi-top", jc.RootProcessInstanceID)

		// A row written before the root was left out reads the same.
		old := *res.Job
		old.Metadata = []byte(`{"bpmn": {"process_instance_id": "pi-3", "root_process_instance_id": "pi-3", "process_definition_key": "order"}}`)
		jc, err = JobContextOf(&old)
		require.NoError(t, err)
		require.Equal(t, "pi-3", jc.RootProcessInstanceID)
	})

	t.Run("DefinitionMismatches", func(t *testing.T) {
		_, err := client.Insert(ctx, shipArgs{}, defContext("pi", "charge").InsertOpts())
		require.ErrorContains(t, err, `job_definition_id "charge": runs kind "charge_payment", but the job is of kind "ship_order"`)
		_, err = client.Insert(ctx, shipArgs{}, defContext("pi", "nope").InsertOpts())
		require.ErrorContains(t, err, `job_definition_id "nope": is not a declared job definition`)
		_, err = client.Insert(ctx, shipArgs{}, JobContext{JobDefinitionID: "ship", ActivityID: "other"}.InsertOpts())
		require.ErrorContains(t, err, `activity_id "other": differs from job definition "ship"'s "ship"`)
	})
}

func TestPrioritizedJobsSwitchedOff(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	config := orderConfig()
	config.DisablePrioritizedJobs = true
	engine, schema := testEngineWithConfig(t, config)
	client := newInsertClient(t, engine, schema)

	require.NoError(t, engine.SetOverridingJobPriority(ctx, "charge", 42, false))
	for _, opts := range []*river.InsertOpts{
		defContext("pi", "charge").InsertOpts(),
		JobContext{ProcessDefinitionKey: "unprioritised", Priority: ptr(int64(7))}.InsertOpts(),
	} {
		id := insertJob(ctx, t, client, paymentArgs{CustomerStatus: "VIP"}, opts)
		require.Nil(t, jobPriority(ctx, t, engine, id), "no priority is written, so every job counts as 0, overrides included")
	}
}

// insertJobsInStates inserts one job of definition "ship" per state.
func insertJobsInStates(ctx context.Context, t *testing.T, engine *Engine, client *river.Client[pgx.Tx]) map[rivertype.JobState]int64 {
	t.Helper()
	ids := map[rivertype.JobState]int64{}
	for _, state := range []rivertype.JobState{
		rivertype.JobStateAvailable, rivertype.JobStateScheduled, rivertype.JobStateRetryable, rivertype.JobStatePending,
		rivertype.JobStateRunning, rivertype.JobStateCompleted, rivertype.JobStateCancelled, rivertype.JobStateDiscarded,
	} {
		id := insertJob(ctx, t, client, shipArgs{}, defContext("pi-"+string(state), "ship").InsertOpts())
		finalizedAt := "NULL"
		if state == rivertype.JobStateCompleted || state == rivertype.JobStateCancelled || state == rivertype.JobStateDiscarded {
			finalizedAt = "now()"
		}
		_, err := engine.dbPool.Exec(ctx, fmt.Sprintf("UPDATE %s.river_job SET state = $1, finalized_at = %s WHERE id = $2",
			pgx.Identifier{engine.config.Schema}.Sanitize(), finalizedAt), string(state), id)
		require.NoError(t, err)
		ids[state] = id
	}
	return ids
}

func TestOverridingJobPriority(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("WithoutCascadeOnlyNewJobs", func(t *testing.T) {
		t.Parallel()
		engine, schema := testEngineWithConfig(t, orderConfig())
		client := newInsertClient(t, engine, schema)
		before := insertJob(ctx, t, client, shipArgs{}, defContext("pi", "ship").InsertOpts())

		require.NoError(t, engine.SetOverridingJobPriority(ctx, "ship", 77, false))
		after := insertJob(ctx, t, client, shipArgs{}, defContext("pi", "ship").InsertOpts())
		other := insertJob(ctx, t, client, shipArgs{}, defContext("pi", "ship-plain").InsertOpts())

		require.Equal(t, ptr(int64(-3)), jobPriority(ctx, t, engine, before))
		require.Equal(t, ptr(int64(77)), jobPriority(ctx, t, engine, after))
		require.Equal(t, ptr(int64(5)), jobPriority(ctx, t, engine, other), "other definitions are not affected")

		state, err := engine.JobDefinition(ctx, "ship")
		require.NoError(t, err)
		require.Equal(t, &JobDefinitionState{ID: "ship", ProcessDefinitionKey: "order", ActivityID: "ship", Kind: "ship_order", OverridingPriority: ptr(int64(77))}, state)
	})

	t.Run("WithCascadeRewritesUnfinishedAndDiscardedJobs", func(t *testing.T) {
		t.Parallel()
		engine, schema := testEngineWithConfig(t, orderConfig())
		client := newInsertClient(t, engine, schema)
		ids := insertJobsInStates(ctx, t, engine, client)

		require.NoError(t, engine.SetOverridingJobPriority(ctx, "ship", math.MaxInt64, true))
		for state, id := range ids {
			want := int64(-3)
			if state != rivertype.JobStateCompleted && state != rivertype.JobStateCancelled {
				want = math.MaxInt64
			}
			require.Equal(t, ptr(want), jobPriority(ctx, t, engine, id), "job in state %s", state)
		}
		// Camunda rewrites every job of the definition "regardless of
		// state": a discarded job revived later runs with the override.
		require.NoError(t, engine.SetJobRetries(ctx, ids[rivertype.JobStateDiscarded], 1))
		require.Equal(t, ptr(int64(math.MaxInt64)), jobPriority(ctx, t, engine, ids[rivertype.JobStateDiscarded]))
	})

	t.Run("ClearNeverTouchesExistingJobs", func(t *testing.T) {
		t.Parallel()
		engine, schema := testEngineWithConfig(t, orderConfig())
		client := newInsertClient(t, engine, schema)
		require.NoError(t, engine.SetOverridingJobPriority(ctx, "ship", 50, false))
		withOverride := insertJob(ctx, t, client, shipArgs{}, defContext("pi", "ship").InsertOpts())

		require.NoError(t, engine.ClearOverridingJobPriority(ctx, "ship"))
		afterClear := insertJob(ctx, t, client, shipArgs{}, defContext("pi", "ship").InsertOpts())

		require.Equal(t, ptr(int64(50)), jobPriority(ctx, t, engine, withOverride))
		require.Equal(t, ptr(int64(-3)), jobPriority(ctx, t, engine, afterClear))
		state, err := engine.JobDefinition(ctx, "ship")
		require.NoError(t, err)
		require.Nil(t, state.OverridingPriority)
	})

	t.Run("SetOneJob", func(t *testing.T) {
		t.Parallel()
		engine, schema := testEngineWithConfig(t, orderConfig())
		client := newInsertClient(t, engine, schema)
		ids := insertJobsInStates(ctx, t, engine, client)
		plain := insertJob(ctx, t, client, shipArgs{}, nil)

		for _, id := range []int64{ids[rivertype.JobStateRunning], ids[rivertype.JobStateCompleted]} {
			require.NoError(t, engine.SetJobPriority(ctx, id, math.MinInt64))
			require.Equal(t, ptr(int64(math.MinInt64)), jobPriority(ctx, t, engine, id))
		}
		require.Equal(t, ptr(int64(-3)), jobPriority(ctx, t, engine, ids[rivertype.JobStateAvailable]), "others untouched")

		require.NoError(t, engine.SetJobPriority(ctx, plain, 8))
		require.Equal(t, ptr(int64(8)), jobPriority(ctx, t, engine, plain), "a plain job gets a job context holding the priority")
	})

	t.Run("NotFound", func(t *testing.T) {
		t.Parallel()
		engine, _ := testEngineWithConfig(t, orderConfig())

		err := engine.SetOverridingJobPriority(ctx, "no-such-def", 1, true)
		require.ErrorIs(t, err, ErrNotFound)
		require.ErrorContains(t, err, `job definition "no-such-def": not found`)
		require.ErrorIs(t, engine.ClearOverridingJobPriority(ctx, "no-such-def"), ErrNotFound)
		_, err = engine.JobDefinition(ctx, "no-such-def")
		require.ErrorIs(t, err, ErrNotFound)

		err = engine.SetJobPriority(ctx, 987654321, 1)
		require.ErrorIs(t, err, ErrNotFound)
		require.ErrorContains(t, err, "job 987654321: not found")
	})

	t.Run("DeclaredButNotStored", func(t *testing.T) {
		t.Parallel()
		engine, _ := testEngineWithConfig(t, orderConfig())
		state, err := engine.JobDefinition(ctx, "charge")
		require.NoError(t, err)
		require.Nil(t, state.OverridingPriority)
		require.Equal(t, "charge_payment", state.Kind)
	})
}

// TestOverrideHonouredByAllSixInsertCalls inserts through every River insert
// call after an override committed: every job gets it.
func TestOverrideHonouredByAllSixInsertCalls(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	engine, schema := testEngineWithConfig(t, orderConfig())
	client := newInsertClient(t, engine, schema)
	require.NoError(t, engine.SetOverridingJobPriority(ctx, "ship", 31, false))

	for _, call := range sixInsertCalls {
		require.NoError(t, call.insert(ctx, client,
			[]river.JobArgs{shipArgs{OrderID: call.name}, shipArgs{OrderID: call.name}},
			[]*river.InsertOpts{defContext("pi-"+call.name, "ship").InsertOpts(), defContext("pi-"+call.name, "ship").InsertOpts()}))
		jobs, err := engine.ProcessInstanceJobs(ctx, "pi-"+call.name)
		require.NoError(t, err)
		require.Len(t, jobs, 2)
		for _, job := range jobs {
			jc, err := JobContextOf(job)
			require.NoError(t, err)
			require.Equal(t, ptr(int64(31)), jc.Priority, call.name)
		}
	}
}

// TestOverrideCascadeRace inserts jobs of one definition from many goroutines
// (all six insert calls) while an override with cascade is applied; afterwards
// every unfinished job of the definition has the override.
func TestOverrideCascadeRace(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	engine, schema := testEngineWithConfig(t, orderConfig())
	client := newInsertClient(t, engine, schema)

	const inserters, insertsEach = 6, 40
	var (
		wg       sync.WaitGroup
		start    = make(chan struct{})
		errsMu   sync.Mutex
		errs     []error
		inserted int
	)
	for i := range inserters {
		call := sixInsertCalls[i%len(sixInsertCalls)]
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for range insertsEach {
				err := call.insert(ctx, client,
					[]river.JobArgs{shipArgs{}, shipArgs{}},
					[]*river.InsertOpts{defContext("pi-race", "ship").InsertOpts(), defContext("pi-race", "ship").InsertOpts()})
				errsMu.Lock()
				if err != nil {
					errs = append(errs, err)
				} else {
					inserted += 2
				}
				errsMu.Unlock()
			}
		}()
	}
	close(start)
	time.Sleep(20 * time.Millisecond) // let inserts get under way
	require.NoError(t, engine.SetOverridingJobPriority(ctx, "ship", 1234, true))
	wg.Wait()
	require.Empty(t, errs)

	jobs, err := engine.ProcessInstanceJobs(ctx, "pi-race")
	require.NoError(t, err)
	require.Len(t, jobs, inserted)
	var withOverride int
	for _, job := range jobs {
		jc, err := JobContextOf(job)
		require.NoError(t, err)
		require.NotNil(t, jc.Priority)
		require.Equal(t, int64(1234), *jc.Priority, "job %d: %s", job.ID, job.Metadata)
		withOverride++
	}
	t.Logf("%d jobs inserted concurrently with the override, all %d have it", inserted, withOverride)
}

// TestCascadeOn100kJobs cascades an override over 100,000 unfinished jobs
// of one definition, in bounded batches, while other work goes on.
func TestCascadeOn100kJobs(t *testing.T) {
	longtest.Skip(t)
	t.Parallel()
	ctx := context.Background()
	engine, schema := testEngineWithConfig(t, orderConfig())
	const jobCount = 100_000

	_, err := engine.dbPool.Exec(ctx, fmt.Sprintf(`
		INSERT INTO %s.river_job (args, kind, max_attempts, metadata, priority, queue, state, scheduled_at)
		SELECT '{}', 'ship_order', 25,
			jsonb_build_object('bpmn', jsonb_build_object('process_instance_id', 'pi-' || (i %% 1000),
				'process_definition_key', 'order', 'activity_id', 'ship', 'job_definition_id', 'ship', 'priority', -3)),
			1, 'default', 'available', now()
		FROM generate_series(1, %d) AS i`, pgx.Identifier{schema}.Sanitize(), jobCount))
	require.NoError(t, err)

	// A job in the middle of the backlog, by its id: a schema reused from
	// another test keeps its id sequence, so ids need not start at 1.
	var middle int64
	require.NoError(t, engine.dbPool.QueryRow(ctx, fmt.Sprintf(`SELECT min(id) + %d FROM %s.river_job`,
		jobCount/2, pgx.Identifier{schema}.Sanitize())).Scan(&middle))
	require.NoError(t, engine.setOverridingPriority(ctx, "ship", ptr(int64(9))))

	// A job locked by another transaction for the whole cascade would block
	// one batch, not the rest: the cascade holds no lock across batches. A
	// concurrent single-job update finishes while the cascade runs.
	done := make(chan error, 1)
	go func() {
		time.Sleep(10 * time.Millisecond)
		done <- engine.SetJobPriority(ctx, middle, 9)
	}()

	res, err := engine.cascadeOverridingPriority(ctx, "ship")
	require.NoError(t, err)
	require.NoError(t, <-done)
	require.Equal(t, int64(jobCount), res.Rewritten)
	require.Equal(t, jobCount/CascadeBatchSize+1, res.Batches, "bounded batches of %d", CascadeBatchSize)
	t.Logf("cascade over %d jobs: %d batches of %d, %s", jobCount, res.Batches, CascadeBatchSize, res.Duration)

	var notRewritten int
	require.NoError(t, engine.dbPool.QueryRow(ctx, fmt.Sprintf(
		`SELECT count(*) FROM %[1]s.river_job WHERE %[1]s.river_bpmn_ctx_priority(metadata) <> 9`, pgx.Identifier{schema}.Sanitize()),
	).Scan(&notRewritten))
	require.Zero(t, notRewritten)
}

// TestOverrideWaitsForInsertsUnderWay: an override cannot commit while a
// transaction that inserted a job of its definition is still open, so that
// the cascade that follows sees that job.
func TestOverrideWaitsForInsertsUnderWay(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	engine, schema := testEngineWithConfig(t, orderConfig())
	client := newInsertClient(t, engine, schema)

	tx, err := engine.dbPool.Begin(ctx)
	require.NoError(t, err)
	defer tx.Rollback(ctx)
	res, err := client.InsertTx(ctx, tx, shipArgs{}, defContext("pi", "ship").InsertOpts())
	require.NoError(t, err)

	overrideDone := make(chan error, 1)
	go func() { overrideDone <- engine.SetOverridingJobPriority(ctx, "ship", 66, true) }()

	select {
	case err := <-overrideDone:
		require.FailNow(t, "the override committed while an insert of its definition was under way", "err: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
	require.NoError(t, tx.Commit(ctx))
	require.NoError(t, <-overrideDone)
	require.Equal(t, ptr(int64(66)), jobPriority(ctx, t, engine, res.Job.ID), "the cascade saw the job")
}

// TestJobDefinitionsStoredWhenClientStarts: starting a client stores the
// declared job definitions; a restart keeps their run-time state.
func TestJobDefinitionsStoredWhenClientStarts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	engine, schema := testEngineWithConfig(t, orderConfig())

	startClient := func(engine *Engine) {
		workers := river.NewWorkers()
		river.AddWorker(workers, river.WorkFunc(func(ctx context.Context, job *river.Job[shipArgs]) error { return nil }))
		client, err := NewClient(engine, &river.Config{
			Queues: map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 1}}, Schema: schema, TestOnly: true, Workers: workers,
		})
		require.NoError(t, err)
		require.NoError(t, client.Start(ctx))
		require.NoError(t, client.Stop(ctx))
	}
	countStored := func() int {
		var n int
		require.NoError(t, engine.dbPool.QueryRow(ctx, fmt.Sprintf("SELECT count(*) FROM %s.river_bpmn_job_definition", pgx.Identifier{schema}.Sanitize())).Scan(&n))
		return n
	}

	require.Zero(t, countStored())
	startClient(engine)
	require.Equal(t, 3, countStored())

	require.NoError(t, engine.SetOverridingJobPriority(ctx, "ship", 12, false))
	restarted, err := NewEngine(testPool(t), &Config{Schema: schema, ProcessDefinitions: orderConfig().ProcessDefinitions, JobDefinitions: orderConfig().JobDefinitions})
	require.NoError(t, err)
	startClient(restarted)
	state, err := restarted.JobDefinition(ctx, "ship")
	require.NoError(t, err)
	require.Equal(t, ptr(int64(12)), state.OverridingPriority, "run-time state survives a restart")
}

// TestClientStartFailsWithoutMigrations: a client with job definitions on a
// schema without riverbpmn's line refuses to start, saying what to run.
func TestClientStartFailsWithoutMigrations(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, stockSchema := testStockSchema(t)
	config := orderConfig()
	config.Schema = stockSchema
	engine, err := NewEngine(testPool(t), config)
	require.NoError(t, err)
	workers := river.NewWorkers()
	river.AddWorker(workers, river.WorkFunc(func(ctx context.Context, job *river.Job[shipArgs]) error { return nil }))
	client, err := NewClient(engine, &river.Config{
		Queues: map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 1}}, Schema: stockSchema, TestOnly: true, Workers: workers,
	})
	require.NoError(t, err)
	err = client.Start(ctx)
	require.ErrorContains(t, err, "is `riverbpmn migrate-up` applied?")
}

// TestUndeclaredProcessDefinitionRefused: an engine that declares process
// definitions refuses, on every insert call, a job whose context names a
// process definition it does not declare, naming the key; nothing of the
// batch is inserted. An engine that declares none takes any key.
func TestUndeclaredProcessDefinitionRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	for _, call := range sixInsertCalls {
		t.Run(call.name, func(t *testing.T) {
			t.Parallel()
			engine, schema := testEngineWithConfig(t, orderConfig())
			client := newInsertClient(t, engine, schema)
			args := []river.JobArgs{shipArgs{OrderID: "1"}, shipArgs{OrderID: "2"}}
			opts := []*river.InsertOpts{
				JobContext{ProcessInstanceID: "pi-1", ProcessDefinitionKey: "order", ActivityID: "ship"}.InsertOpts(),
				JobContext{ProcessInstanceID: "pi-2", ProcessDefinitionKey: "ordre"}.InsertOpts(),
			}
			err := call.insert(ctx, client, args, opts)
			require.ErrorContains(t, err, `process_definition_key "ordre": is not a declared process definition`)
			var jobContextErr *JobContextError
			require.ErrorAs(t, err, &jobContextErr)
			require.Equal(t, "ordre", jobContextErr.Value)
			var refused int
			require.NoError(t, engine.dbPool.QueryRow(ctx, renderSQL(`SELECT count(*) FROM /* TEMPLATE: schema */river_job WHERE args->>'order_id' = '2'`, schema)).Scan(&refused))
			require.Zero(t, refused, "the refused job is not inserted (nor, in one call, its batch)")
		})
	}

	t.Run("EngineDeclaringNoProcess", func(t *testing.T) {
		t.Parallel()
		engine, schema := testEngine(t)
		client := newInsertClient(t, engine, schema)
		_, err := client.Insert(ctx, shipArgs{}, JobContext{ProcessInstanceID: "pi-1", ProcessDefinitionKey: "anything"}.InsertOpts())
		require.NoError(t, err)
	})
}
