package exclusive_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdbtest"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/exclusive"
	"github.com/riverbpmn/riverbpmn/riverbpmntest"
	"github.com/riverbpmn/riverbpmn/workflow"
)

// holdArgs is a job of one process instance whose work blocks until the
// test releases it.
type holdArgs struct {
	Instance string `json:"instance"`
}

func (holdArgs) Kind() string { return "exclusive_hold" }

func (a holdArgs) JobContext() workflow.JobContext {
	return workflow.JobContext{ProcessInstanceID: a.Instance, ProcessDefinitionKey: "hold_process"}
}

type holdWorker struct {
	river.WorkerDefaults[holdArgs]
	started chan int64
	release chan struct{}
}

func (w *holdWorker) Work(ctx context.Context, job *river.Job[holdArgs]) error {
	w.started <- job.ID
	select {
	case <-w.release:
	case <-ctx.Done():
	}
	return nil
}

// TestExclusive tests the Exclusive handle (workflow.Engine.Exclusive).
func TestExclusive(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	type testBundle struct {
		bundle *riverbpmntest.Bundle
		worker *holdWorker
	}
	setup := func(t *testing.T, config *workflow.Config) *testBundle {
		t.Helper()
		schema := riverdbtest.TestSchema(ctx, t, riverbpmntest.Driver(t), nil)
		worker := &holdWorker{started: make(chan int64, 100), release: make(chan struct{})}
		workers := river.NewWorkers()
		river.AddWorker(workers, worker)
		bundle := riverbpmntest.New(ctx, t, schema, &riverbpmntest.Opts{Config: config, ClientConfig: &river.Config{
			Queues:            map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 10}},
			FetchCooldown:     time.Millisecond,
			FetchPollInterval: 20 * time.Millisecond,
			TestOnly:          true,
			Workers:           workers,
		}})
		t.Cleanup(func() { close(worker.release) })
		return &testBundle{bundle: bundle, worker: worker}
	}
	// hold inserts two jobs of each of n instances, starts the client and
	// waits until the first job of every instance works (the second waits
	// for its key); it returns the ids of the second jobs.
	hold := func(t *testing.T, tb *testBundle, n int) []int64 {
		t.Helper()
		var waiting []int64
		for round := range 2 {
			for i := range n {
				res, err := tb.bundle.Client.Insert(ctx, holdArgs{Instance: fmt.Sprintf("pi-%02d", i)}, nil)
				require.NoError(t, err)
				if round == 1 {
					waiting = append(waiting, res.Job.ID)
				}
			}
		}
		require.NoError(t, tb.bundle.Client.Start(ctx))
		for range n {
			select {
			case <-tb.worker.started:
			case <-time.After(30 * time.Second):
				t.Fatal("the first job of every instance starts")
			}
		}
		return waiting
	}

	// Locks pages through the held keys by key: each page at most Limit
	// keys, Next "" exactly on the last page, every held key once.
	t.Run("Locks", func(t *testing.T) {
		t.Parallel()
		tb := setup(t, nil)
		hold(t, tb, 5)
		var keys []string
		params := &exclusive.LocksParams{Limit: 2}
		for page := 0; ; page++ {
			res, err := tb.bundle.Engine.Exclusive().Locks(ctx, params)
			require.NoError(t, err)
			require.LessOrEqual(t, len(res.Items), 2)
			for _, l := range res.Items {
				keys = append(keys, l.Key)
				require.False(t, l.Stale)
			}
			if res.Next == "" {
				require.Equal(t, 2, page, "5 keys in pages of 2: 3 pages")
				break
			}
			params.After = res.Next
		}
		require.Equal(t, []string{"pi-00", "pi-01", "pi-02", "pi-03", "pi-04"}, keys)

		_, err := tb.bundle.Engine.Exclusive().Locks(ctx, &exclusive.LocksParams{Limit: 5000})
		require.ErrorContains(t, err, "ListParams.Limit")
		require.ErrorContains(t, err, "5000")
	})

	// Wait says a job waits behind the running job of its key, and wraps
	// the engine's ErrNotFound for a job that does not exist; the deprecated
	// Engine.ExclusiveWait reads the same.
	t.Run("Wait", func(t *testing.T) {
		t.Parallel()
		tb := setup(t, nil)
		waiting := hold(t, tb, 1)
		wait, err := tb.bundle.Engine.Exclusive().Wait(ctx, waiting[0])
		require.NoError(t, err)
		require.True(t, wait.Waiting)
		require.Equal(t, "pi-00", wait.Key)
		require.NotNil(t, wait.Holder)
		old, err := tb.bundle.Engine.ExclusiveWait(ctx, waiting[0])
		require.NoError(t, err)
		require.Equal(t, wait.Holder.JobID, old.Holder.JobID)

		_, err = tb.bundle.Engine.Exclusive().Wait(ctx, 1<<40)
		require.ErrorIs(t, err, workflow.ErrNotFound)
	})

	// Scope is the engine's own until a client records one; SetScope
	// records another while no client is alive, and RecordedScope reads
	// the record.
	t.Run("Scope", func(t *testing.T) {
		t.Parallel()
		tb := setup(t, &workflow.Config{Exclusive: exclusive.Config{Scope: exclusive.RootProcessInstance}})
		x := tb.bundle.Engine.Exclusive()
		scope, err := x.Scope(ctx)
		require.NoError(t, err)
		require.Equal(t, exclusive.RootProcessInstance, scope, "none recorded: the engine's own")
		recorded, err := x.RecordedScope(ctx)
		require.NoError(t, err)
		require.Nil(t, recorded)

		previous, err := x.SetScope(ctx, exclusive.ProcessInstance)
		require.NoError(t, err)
		require.Nil(t, previous)
		scope, err = x.Scope(ctx)
		require.NoError(t, err)
		require.Equal(t, exclusive.ProcessInstance, scope, "the recorded scope wins")
		recorded, err = x.RecordedScope(ctx)
		require.NoError(t, err)
		require.Equal(t, exclusive.ProcessInstance, recorded.Scope)
	})

	// Without a pool every call fails with the engine's no-pool error.
	t.Run("NoPool", func(t *testing.T) {
		t.Parallel()
		engine, err := workflow.NewEngine(nil, nil)
		require.NoError(t, err)
		_, err = engine.Exclusive().Locks(ctx, nil)
		require.ErrorContains(t, err, "no database pool")
		_, err = engine.Exclusive().Scope(ctx)
		require.ErrorContains(t, err, "no database pool")
		require.ErrorContains(t, engine.Exclusive().EnableHeadIndexes(ctx, ""), "no database pool", "even with nothing to build")
		require.ErrorContains(t, engine.Exclusive().EnableHeadIndexesForScope(ctx, exclusive.None, "t"), "no database pool", "even with nothing to build")
	})

	// EnableHeadIndexes builds the head-of-key index of each order for the
	// scope in force, and nothing for River's order and by priority alone;
	// EnableHeadIndexesForScope builds that scope's; HeadIndexes lists
	// them; DisableHeadIndexes drops them all. An order that is none of
	// index.OrderSuffixes is refused, naming it.
	t.Run("HeadIndexes", func(t *testing.T) {
		t.Parallel()
		tb := setup(t, &workflow.Config{Exclusive: exclusive.Config{Scope: exclusive.RootProcessInstance}})
		x := tb.bundle.Engine.Exclusive()
		require.Equal(t, exclusive.RootProcessInstance, x.ConfiguredScope())

		require.NoError(t, x.EnableHeadIndexes(ctx, "", "p"))
		names, err := x.HeadIndexes(ctx)
		require.NoError(t, err)
		require.Empty(t, names, "River's order and by priority alone have migrations' head-of-key indexes")

		require.NoError(t, x.EnableHeadIndexes(ctx, "td", "td", "p"))
		names, err = x.HeadIndexes(ctx)
		require.NoError(t, err)
		require.Equal(t, []string{"river_bpmn_job_exclusive_root_td"}, names, "the scope in force: none recorded, the engine's own")

		require.NoError(t, x.EnableHeadIndexesForScope(ctx, exclusive.ProcessInstance, "d"))
		require.NoError(t, x.EnableHeadIndexesForScope(ctx, exclusive.None, "t"))
		names, err = x.HeadIndexes(ctx)
		require.NoError(t, err)
		require.Equal(t, []string{"river_bpmn_job_exclusive_instance_d", "river_bpmn_job_exclusive_root_td"}, names)

		require.ErrorContains(t, x.EnableHeadIndexes(ctx, "dt"), `order "dt"`)
		require.ErrorContains(t, x.EnableHeadIndexesForScope(ctx, exclusive.ProcessInstance, "x"), `order "x"`)

		require.NoError(t, x.DisableHeadIndexes(ctx))
		names, err = x.HeadIndexes(ctx)
		require.NoError(t, err)
		require.Empty(t, names)
	})
}

// TestHeadIndex: the head-of-key index of an order and scope is the
// scope's prefix and the order, none for River's order, by priority alone
// or a scope that enforces nothing; HeadIndexNames lists each once.
func TestHeadIndex(t *testing.T) {
	t.Parallel()
	require.Empty(t, exclusive.HeadIndex(exclusive.ProcessInstance, ""))
	require.Empty(t, exclusive.HeadIndex(exclusive.ProcessInstance, "p"))
	require.Empty(t, exclusive.HeadIndex(exclusive.None, "t"))
	require.Equal(t, "river_bpmn_job_exclusive_instance_ptd", exclusive.HeadIndex(exclusive.ProcessInstance, "ptd"))
	require.Equal(t, "river_bpmn_job_exclusive_root_d", exclusive.HeadIndex(exclusive.RootProcessInstance, "d"))
	names := exclusive.HeadIndexNames()
	require.Len(t, names, 12)
	require.Equal(t, len(names), len(slices.Compact(slices.Sorted(slices.Values(names)))))
	require.Equal(t, "pd", workflow.Acquisition{ByPriority: true, ByDueDate: true, DeploymentAware: true}.Order())
}

// TestExclusiveConfig checks Config.Exclusive against the deprecated flat
// fields it replaces: a flat field is honoured when the nested one is
// zero, the nested one is used, and the two set to different values are
// refused with an error naming both.
func TestExclusiveConfig(t *testing.T) {
	t.Parallel()

	t.Run("FlatHonoured", func(t *testing.T) {
		t.Parallel()
		engine, err := workflow.NewEngine(nil, &workflow.Config{ExclusiveScope: exclusive.None})
		require.NoError(t, err)
		require.Equal(t, exclusive.None, engine.Exclusive().ConfiguredScope())
	})

	t.Run("Nested", func(t *testing.T) {
		t.Parallel()
		engine, err := workflow.NewEngine(nil, &workflow.Config{Exclusive: exclusive.Config{Scope: exclusive.RootProcessInstance}})
		require.NoError(t, err)
		require.Equal(t, exclusive.RootProcessInstance, engine.Exclusive().ConfiguredScope())
		_, err = workflow.NewEngine(nil, &workflow.Config{Exclusive: exclusive.Config{Batch: 4}, ExclusiveBatch: 4})
		require.NoError(t, err, "both set to the same value is no conflict")
		_, err = workflow.NewEngine(nil, &workflow.Config{Exclusive: exclusive.Config{Scope: exclusive.None, Batch: 4}})
		require.ErrorContains(t, err, "needs an enforcing", "the nested values are validated as the flat ones")
	})

	t.Run("BothDifferentRefused", func(t *testing.T) {
		t.Parallel()
		for _, config := range []*workflow.Config{
			{Exclusive: exclusive.Config{Scope: exclusive.RootProcessInstance}, ExclusiveScope: exclusive.None},
			{Exclusive: exclusive.Config{Lookahead: 10}, ExclusiveLookahead: 20},
			{Exclusive: exclusive.Config{WakeCooldown: time.Second}, ExclusiveWakeCooldown: time.Minute},
			{Exclusive: exclusive.Config{Batch: 2}, ExclusiveBatch: 3},
		} {
			_, err := workflow.NewEngine(nil, config)
			require.Error(t, err)
			require.Regexp(t, `Config\.Exclusive\.\w+ .* the deprecated Config\.Exclusive\w+ .* differ`, err.Error())
		}
	})
}
