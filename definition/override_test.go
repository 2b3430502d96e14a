package definition_test

import (
	"context"
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdbtest"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/definition"
	"github.com/riverbpmn/riverbpmn/instance"
	"github.com/riverbpmn/riverbpmn/internal/insertcalls"
	"github.com/riverbpmn/riverbpmn/internal/longtest"
	"github.com/riverbpmn/riverbpmn/priority"
	"github.com/riverbpmn/riverbpmn/riverbpmntest"
	"github.com/riverbpmn/riverbpmn/workflow"
)

// orderShipArgs is a job of kind ship_order.
type orderShipArgs struct {
	OrderID string `json:"order_id"`
}

func (orderShipArgs) Kind() string { return "ship_order" }

// orderConfig declares a process with priority 5 and job definitions
// "ship" (activity priority -3), "ship-plain" (no activity priority: the
// process's applies) and "charge", all of kind ship_order.
func orderConfig() *workflow.Config {
	return &workflow.Config{
		ProcessDefinitions: []workflow.ProcessDefinition{{Key: "order", Priority: priority.Constant(5)}},
		JobDefinitions: []workflow.JobDefinition{
			{ID: "charge", ProcessDefinitionKey: "order", ActivityID: "charge", Kind: "ship_order"},
			{ID: "ship", ProcessDefinitionKey: "order", ActivityID: "ship", Kind: "ship_order", Priority: priority.Constant(-3)},
			{ID: "ship-plain", ProcessDefinitionKey: "order", ActivityID: "ship_plain", Kind: "ship_order"},
		},
	}
}

// of places a job in instance of job definition def.
func of(instance, def string) *river.InsertOpts {
	return workflow.JobContext{ProcessInstanceID: instance, JobDefinitionID: def}.InsertOpts()
}

func TestDefinitionsOverridingPriority(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	type testBundle struct {
		*riverbpmntest.Bundle
		definitions *definition.Definitions
	}

	setup := func(t *testing.T) *testBundle {
		t.Helper()
		schema := riverdbtest.TestSchema(ctx, t, riverbpmntest.Driver(t), nil)
		bundle := riverbpmntest.New(ctx, t, schema, &riverbpmntest.Opts{Config: orderConfig()})
		return &testBundle{Bundle: bundle, definitions: bundle.Engine.Definitions()}
	}

	insert := func(t *testing.T, bundle *testBundle, opts *river.InsertOpts) int64 {
		t.Helper()
		res, err := bundle.Client.Insert(ctx, orderShipArgs{}, opts)
		require.NoError(t, err)
		return res.Job.ID
	}

	// priorityOf reads a job's priority back as a worker would.
	priorityOf := func(t *testing.T, bundle *testBundle, id int64) *int64 {
		t.Helper()
		job, err := bundle.Client.JobGet(ctx, id)
		require.NoError(t, err)
		jc, err := workflow.JobContextOf(job)
		require.NoError(t, err)
		return jc.Priority
	}

	// inStates inserts one job of definition "ship" per state.
	inStates := func(t *testing.T, bundle *testBundle) map[rivertype.JobState]int64 {
		t.Helper()
		ids := map[rivertype.JobState]int64{}
		for _, state := range []rivertype.JobState{
			rivertype.JobStateAvailable, rivertype.JobStateScheduled, rivertype.JobStateRetryable, rivertype.JobStatePending,
			rivertype.JobStateRunning, rivertype.JobStateCompleted, rivertype.JobStateCancelled, rivertype.JobStateDiscarded,
		} {
			id := insert(t, bundle, of("pi-"+string(state), "ship"))
			finalizedAt := "NULL"
			if state == rivertype.JobStateCompleted || state == rivertype.JobStateCancelled || state == rivertype.JobStateDiscarded {
				finalizedAt = "now()"
			}
			_, err := bundle.DBPool.Exec(ctx, fmt.Sprintf("UPDATE %s.river_job SET state = $1, finalized_at = %s WHERE id = $2",
				pgx.Identifier{bundle.Schema}.Sanitize(), finalizedAt), string(state), id)
			require.NoError(t, err)
			ids[state] = id
		}
		return ids
	}

	// instanceJobs reads every job of instance.
	instanceJobs := func(t *testing.T, bundle *testBundle, pi string) []*rivertype.JobRow {
		t.Helper()
		var jobs []*rivertype.JobRow
		params := &instance.JobsParams{ProcessInstanceID: pi, Limit: 1000}
		for {
			res, err := bundle.Engine.Instances().Jobs(ctx, params)
			require.NoError(t, err)
			jobs = append(jobs, res.Items...)
			if res.Next == "" {
				return jobs
			}
			params.After = res.Next
		}
	}

	p := func(v int64) *int64 { return &v }

	// Without cascade only the jobs inserted after the override get it;
	// other definitions are not affected; Get reads the override back.
	t.Run("WithoutCascadeOnlyNewJobs", func(t *testing.T) {
		t.Parallel()
		bundle := setup(t)
		before := insert(t, bundle, of("pi", "ship"))
		res, err := bundle.definitions.SetOverridingPriority(ctx, "ship", 77, false)
		require.NoError(t, err)
		require.Nil(t, res, "no cascade, no cascade result")
		after := insert(t, bundle, of("pi", "ship"))
		other := insert(t, bundle, of("pi", "ship-plain"))

		require.Equal(t, p(-3), priorityOf(t, bundle, before))
		require.Equal(t, p(77), priorityOf(t, bundle, after))
		require.Equal(t, p(5), priorityOf(t, bundle, other), "other definitions are not affected")
		state, err := bundle.definitions.Get(ctx, "ship")
		require.NoError(t, err)
		require.Equal(t, &definition.State{ID: "ship", ProcessDefinitionKey: "order", ActivityID: "ship", Kind: "ship_order", OverridingPriority: p(77)}, state)
	})

	// With cascade every unfinished or discarded job is rewritten (Camunda
	// rewrites every job of the definition "regardless of state": a
	// discarded job revived later runs with the override); completed and
	// cancelled ones keep theirs.
	t.Run("WithCascadeRewritesUnfinishedAndDiscardedJobs", func(t *testing.T) {
		t.Parallel()
		bundle := setup(t)
		ids := inStates(t, bundle)
		res, err := bundle.definitions.SetOverridingPriority(ctx, "ship", math.MaxInt64, true)
		require.NoError(t, err)
		require.EqualValues(t, 6, res.Rewritten)
		for state, id := range ids {
			want := int64(-3)
			if state != rivertype.JobStateCompleted && state != rivertype.JobStateCancelled {
				want = math.MaxInt64
			}
			require.Equal(t, p(want), priorityOf(t, bundle, id), "job in state %s", state)
		}
		require.NoError(t, bundle.Engine.Jobs().SetRetries(ctx, ids[rivertype.JobStateDiscarded], 1))
		require.Equal(t, p(math.MaxInt64), priorityOf(t, bundle, ids[rivertype.JobStateDiscarded]))
	})

	// Clearing the override never touches existing jobs.
	t.Run("ClearNeverTouchesExistingJobs", func(t *testing.T) {
		t.Parallel()
		bundle := setup(t)
		_, err := bundle.definitions.SetOverridingPriority(ctx, "ship", 50, false)
		require.NoError(t, err)
		withOverride := insert(t, bundle, of("pi", "ship"))
		require.NoError(t, bundle.definitions.ClearOverridingPriority(ctx, "ship"))
		afterClear := insert(t, bundle, of("pi", "ship"))

		require.Equal(t, p(50), priorityOf(t, bundle, withOverride))
		require.Equal(t, p(-3), priorityOf(t, bundle, afterClear))
		state, err := bundle.definitions.Get(ctx, "ship")
		require.NoError(t, err)
		require.Nil(t, state.OverridingPriority)
	})

	// A declared definition no client has stored is read from its
	// declaration.
	t.Run("DeclaredButNotStored", func(t *testing.T) {
		t.Parallel()
		bundle := setup(t)
		state, err := bundle.definitions.Get(ctx, "charge")
		require.NoError(t, err)
		require.Nil(t, state.OverridingPriority)
		require.Equal(t, "ship_order", state.Kind)
	})

	// Every River insert call after an override committed gives its jobs
	// the override.
	t.Run("HonouredByAllSixInsertCalls", func(t *testing.T) {
		t.Parallel()
		bundle := setup(t)
		_, err := bundle.definitions.SetOverridingPriority(ctx, "ship", 31, false)
		require.NoError(t, err)
		for _, call := range insertcalls.Six {
			require.NoError(t, call.Insert(ctx, bundle.Client,
				[]river.JobArgs{orderShipArgs{OrderID: call.Name}, orderShipArgs{OrderID: call.Name}},
				[]*river.InsertOpts{of("pi-"+call.Name, "ship"), of("pi-"+call.Name, "ship")}))
			jobs := instanceJobs(t, bundle, "pi-"+call.Name)
			require.Len(t, jobs, 2)
			for _, job := range jobs {
				jc, err := workflow.JobContextOf(job)
				require.NoError(t, err)
				require.Equal(t, p(31), jc.Priority, call.Name)
			}
		}
	})

	// Jobs of one definition inserted from many goroutines (all six insert
	// calls) while an override with cascade is applied all end with the
	// override.
	t.Run("CascadeRace", func(t *testing.T) {
		t.Parallel()
		bundle := setup(t)
		const inserters, insertsEach = 6, 40
		var (
			wg       sync.WaitGroup
			start    = make(chan struct{})
			mu       sync.Mutex
			errs     []error
			inserted int
		)
		for i := range inserters {
			call := insertcalls.Six[i%len(insertcalls.Six)]
			wg.Go(func() {
				<-start
				for range insertsEach {
					err := call.Insert(ctx, bundle.Client, []river.JobArgs{orderShipArgs{}, orderShipArgs{}},
						[]*river.InsertOpts{of("pi-race", "ship"), of("pi-race", "ship")})
					mu.Lock()
					if err != nil {
						errs = append(errs, err)
					} else {
						inserted += 2
					}
					mu.Unlock()
				}
			})
		}
		close(start)
		time.Sleep(20 * time.Millisecond) // let inserts get under way
		_, err := bundle.definitions.SetOverridingPriority(ctx, "ship", 1234, true)
		require.NoError(t, err)
		wg.Wait()
		require.Empty(t, errs)

		jobs := instanceJobs(t, bundle, "pi-race")
		require.Len(t, jobs, inserted)
		for _, job := range jobs {
			jc, err := workflow.JobContextOf(job)
			require.NoError(t, err)
			require.Equal(t, p(1234), jc.Priority, "job %d: %s", job.ID, job.Metadata)
		}
	})

	// An override cannot commit while a transaction that inserted a job of
	// its definition is still open, so that the cascade that follows sees
	// that job.
	t.Run("WaitsForInsertsUnderWay", func(t *testing.T) {
		t.Parallel()
		bundle := setup(t)
		tx, err := bundle.DBPool.Begin(ctx)
		require.NoError(t, err)
		defer tx.Rollback(ctx)
		res, err := bundle.Client.InsertTx(ctx, tx, orderShipArgs{}, of("pi", "ship"))
		require.NoError(t, err)

		done := make(chan error, 1)
		go func() {
			_, err := bundle.definitions.SetOverridingPriority(ctx, "ship", 66, true)
			done <- err
		}()
		select {
		case err := <-done:
			require.FailNow(t, "the override committed while an insert of its definition was under way", "err: %v", err)
		case <-time.After(300 * time.Millisecond):
		}
		require.NoError(t, tx.Commit(ctx))
		require.NoError(t, <-done)
		require.Equal(t, p(66), priorityOf(t, bundle, res.Job.ID), "the cascade saw the job")
	})

	// A cascade over 100,000 unfinished jobs of one definition goes in
	// bounded batches and holds no lock across them: a single-job update
	// running meanwhile finishes.
	t.Run("CascadeOn100kJobs", func(t *testing.T) {
		longtest.Skip(t)
		t.Parallel()
		bundle := setup(t)
		const jobCount = 100_000
		schema := pgx.Identifier{bundle.Schema}.Sanitize()
		_, err := bundle.DBPool.Exec(ctx, fmt.Sprintf(`
			INSERT INTO %s.river_job (args, kind, max_attempts, metadata, priority, queue, state, scheduled_at)
			SELECT '{}', 'ship_order', 25,
				jsonb_build_object('bpmn', jsonb_build_object('process_instance_id', 'pi-' || (i %% 1000),
					'process_definition_key', 'order', 'activity_id', 'ship', 'job_definition_id', 'ship', 'priority', -3)),
				1, 'default', 'available', now()
			FROM generate_series(1, %d) AS i`, schema, jobCount))
		require.NoError(t, err)
		var middle int64
		require.NoError(t, bundle.DBPool.QueryRow(ctx, fmt.Sprintf(`SELECT min(id) + %d FROM %s.river_job`, jobCount/2, schema)).Scan(&middle))

		done := make(chan error, 1)
		go func() {
			time.Sleep(10 * time.Millisecond)
			done <- bundle.Engine.Jobs().SetPriority(ctx, middle, 9)
		}()
		res, err := bundle.definitions.SetOverridingPriority(ctx, "ship", 9, true)
		require.NoError(t, err)
		require.NoError(t, <-done)
		require.Equal(t, int64(jobCount), res.Rewritten)
		require.Equal(t, jobCount/definition.CascadeBatchSize+1, res.Batches, "bounded batches of %d", definition.CascadeBatchSize)
		t.Logf("cascade over %d jobs: %d batches of %d, %s", jobCount, res.Batches, definition.CascadeBatchSize, res.Duration)

		var notRewritten int
		require.NoError(t, bundle.DBPool.QueryRow(ctx, fmt.Sprintf(
			`SELECT count(*) FROM %[1]s.river_job WHERE %[1]s.river_bpmn_ctx_priority(metadata) <> 9`, schema)).Scan(&notRewritten))
		require.Zero(t, notRewritten)
	})

	// Starting a client stores the declared job definitions; an engine
	// built again on the schema (a restart) keeps their run-time state.
	t.Run("StoredWhenClientStarts", func(t *testing.T) {
		t.Parallel()
		bundle := setup(t)
		startClient := func(engine *workflow.Engine) {
			workers := river.NewWorkers()
			river.AddWorker(workers, river.WorkFunc(func(ctx context.Context, job *river.Job[orderShipArgs]) error { return nil }))
			client, err := workflow.NewClient(engine, &river.Config{
				Queues: map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 1}}, Schema: bundle.Schema, TestOnly: true, Workers: workers,
			})
			require.NoError(t, err)
			require.NoError(t, client.Start(ctx))
			require.NoError(t, client.Stop(ctx))
		}
		stored := func() int {
			res, err := bundle.definitions.List(ctx, nil)
			require.NoError(t, err)
			n := 0
			for _, s := range res.Items {
				if s.Stored {
					n++
				}
			}
			return n
		}
		require.Zero(t, stored())
		startClient(bundle.Engine)
		require.Equal(t, 3, stored())

		_, err := bundle.definitions.SetOverridingPriority(ctx, "ship", 12, false)
		require.NoError(t, err)
		config := orderConfig()
		config.Schema = bundle.Schema
		restarted, err := workflow.NewEngine(bundle.DBPool, config)
		require.NoError(t, err)
		startClient(restarted)
		state, err := restarted.Definitions().Get(ctx, "ship")
		require.NoError(t, err)
		require.Equal(t, p(12), state.OverridingPriority, "run-time state survives a restart")
	})

	// Unknown definitions are ErrNotFound naming them; the deprecated Engine
	// methods keep wrapping workflow.ErrNotFound.
	t.Run("NotFound", func(t *testing.T) {
		t.Parallel()
		bundle := setup(t)
		_, err := bundle.definitions.SetOverridingPriority(ctx, "no-such-def", 1, true)
		require.ErrorIs(t, err, definition.ErrNotFound)
		require.ErrorContains(t, err, `job definition "no-such-def": not found`)
		require.ErrorIs(t, bundle.definitions.ClearOverridingPriority(ctx, "no-such-def"), definition.ErrNotFound)
		require.ErrorIs(t, bundle.Engine.SetOverridingJobPriority(ctx, "no-such-def", 1, false), workflow.ErrNotFound)
		_, err = bundle.Engine.JobDefinition(ctx, "no-such-def")
		require.ErrorIs(t, err, workflow.ErrNotFound)
	})

	// Stored definitions come with their run-time state: the overriding
	// priority, the unfinished jobs (a discarded one is finished) and the
	// open incidents.
	t.Run("ListRunTimeState", func(t *testing.T) {
		t.Parallel()
		bundle := setup(t)
		require.NoError(t, bundle.definitions.Sync(ctx))
		_, err := bundle.definitions.SetOverridingPriority(ctx, "ship", 8, false)
		require.NoError(t, err)
		failed := insert(t, bundle, of("pi", "ship"))
		insert(t, bundle, of("pi", "ship"))
		require.NoError(t, bundle.Engine.Jobs().SetRetries(ctx, failed, 0))

		res, err := bundle.definitions.List(ctx, nil)
		require.NoError(t, err)
		byID := map[string]*definition.Summary{}
		for _, s := range res.Items {
			require.True(t, s.Stored)
			byID[s.ID] = s
		}
		require.Len(t, byID, 3)
		require.Equal(t, p(8), byID["ship"].OverridingPriority)
		require.EqualValues(t, 1, byID["ship"].UnfinishedJobs, "the discarded one is finished")
		require.EqualValues(t, 1, byID["ship"].OpenIncidents)
		require.Zero(t, byID["charge"].UnfinishedJobs)
	})
}
