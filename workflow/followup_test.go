package workflow

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/exclusive"
	"github.com/riverbpmn/riverbpmn/internal/longtest"
)

// followUpParentArgs is a job that inserts two follow-up jobs 30 ms apart
// (within River's FetchCooldown of 100 ms, so River's client drops the
// second insert's notification, after the fetch the first one triggered), by one of River's insert calls (Mode), the
// second into queue "other" when Mode says so.
type followUpParentArgs struct {
	Run  int    `json:"run"`
	Mode string `json:"mode"`
}

func (followUpParentArgs) Kind() string { return "followup_parent" }

func (a followUpParentArgs) JobContext() JobContext {
	return JobContext{ProcessInstanceID: fmt.Sprintf("parent-%d", a.Run), ProcessDefinitionKey: "followup"}
}

// followUpArgs is a follow-up job, of a process instance of its own.
type followUpArgs struct {
	Name string `json:"name"`
}

func (followUpArgs) Kind() string { return "followup_child" }

func (a followUpArgs) JobContext() JobContext {
	return JobContext{ProcessInstanceID: a.Name, ProcessDefinitionKey: "followup"}
}

// followUpTimes records when each follow-up was inserted (committed) and
// when it started.
type followUpTimes struct {
	mu       sync.Mutex
	inserted map[string]time.Time
	started  map[string]time.Time
	startCh  chan string
}

func newFollowUpTimes() *followUpTimes {
	return &followUpTimes{inserted: map[string]time.Time{}, started: map[string]time.Time{}, startCh: make(chan string, 100)}
}

// committing records that the statement that commits name's insert is
// about to run: a delay measured from then includes the commit itself.
func (f *followUpTimes) committing(name string) {
	now := time.Now()
	f.mu.Lock()
	defer f.mu.Unlock()
	f.inserted[name] = now
}

// followUpWorkers registers the parent (inserting through the client in its
// context, as a River worker does) and the follow-up.
func followUpWorkers(times *followUpTimes, pool interface {
	Begin(ctx context.Context) (pgx.Tx, error)
},
) *river.Workers {
	workers := river.NewWorkers()
	river.AddWorker(workers, river.WorkFunc(func(ctx context.Context, job *river.Job[followUpParentArgs]) error {
		client := river.ClientFromContext[pgx.Tx](ctx)
		// Past FetchCooldown since the fetch that took this job: the first
		// insert's notification makes the producers fetch at once, before
		// the second insert commits.
		time.Sleep(150 * time.Millisecond)
		for i, name := range []string{fmt.Sprintf("r%d-first", job.Args.Run), fmt.Sprintf("r%d-second", job.Args.Run)} {
			if i == 1 {
				time.Sleep(30 * time.Millisecond)
			}
			opts := &river.InsertOpts{}
			if i == 1 && job.Args.Mode == "other-queue" {
				opts.Queue = "other"
			}
			var err error
			switch job.Args.Mode {
			case "insert", "other-queue":
				times.committing(name)
				_, err = client.Insert(ctx, followUpArgs{Name: name}, opts)
			case "insert-tx":
				var tx pgx.Tx
				if tx, err = pool.Begin(ctx); err == nil {
					if _, err = client.InsertTx(ctx, tx, followUpArgs{Name: name}, opts); err == nil {
						times.committing(name)
						err = tx.Commit(ctx)
					}
					_ = tx.Rollback(ctx)
				}
			case "fast":
				times.committing(name)
				_, err = client.InsertManyFast(ctx, []river.InsertManyParams{{Args: followUpArgs{Name: name}, InsertOpts: opts}})
			default:
				err = fmt.Errorf("unknown mode %q", job.Args.Mode)
			}
			if err != nil {
				return err
			}
		}
		return nil
	}))
	river.AddWorker(workers, river.WorkFunc(func(ctx context.Context, job *river.Job[followUpArgs]) error {
		times.mu.Lock()
		times.started[job.Args.Name] = time.Now()
		times.mu.Unlock()
		times.startCh <- job.Args.Name
		return nil
	}))
	return workers
}

// followUpRuns runs parents one after another (each inserted by inserter,
// a client that works nothing, once the previous run's follow-ups started,
// so that the working clients' own notifications decide), and returns the
// start delay of every follow-up: from just before the statement that
// commits its insert to its start.
func followUpRuns(t *testing.T, inserter *river.Client[pgx.Tx], times *followUpTimes, runs int, wait time.Duration) []time.Duration {
	t.Helper()
	ctx := context.Background()
	modes := []string{"insert", "insert-tx", "fast", "other-queue"}
	var delays []time.Duration
	for run := range runs {
		_, err := inserter.Insert(ctx, followUpParentArgs{Run: run, Mode: modes[run%len(modes)]}, nil)
		require.NoError(t, err)
		for range 2 {
			select {
			case <-times.startCh:
			case <-time.After(wait):
				t.Fatalf("run %d (%s): a follow-up did not start within %s (FetchPollInterval is an hour)", run, modes[run%len(modes)], wait)
			}
		}
		times.mu.Lock()
		for _, name := range []string{fmt.Sprintf("r%d-first", run), fmt.Sprintf("r%d-second", run)} {
			delays = append(delays, times.started[name].Sub(times.inserted[name]))
		}
		times.mu.Unlock()
		time.Sleep(150 * time.Millisecond) // past River's FetchCooldown: the next run starts afresh
	}
	return delays
}

// TestFollowUpsStartWithoutPollWait: jobs inserted by a running job start
// without waiting for FetchPollInterval (an hour here), with every insert
// call that a worker uses, in any queue a client works (also another
// client's), with exclusivity
// on and off, although River's client drops the notification of the second
// insert of each run (made within FetchCooldown of the first). The control
// shows that stock River leaves that second job to the poll. make test-long
// makes 200 runs instead of 16.
func TestFollowUpsStartWithoutPollWait(t *testing.T) {
	t.Parallel()
	runs := 16 // 32 follow-ups, each insert call 8 times
	if longtest.Enabled() {
		runs = 200 // 400 follow-ups
	}
	// A follow-up is fetched when its insert commits; the bound only
	// separates that from the hour's poll, with room for a loaded machine.
	const wait = time.Minute

	for _, scope := range []exclusive.Scope{exclusive.ProcessInstance, exclusive.None} {
		t.Run("Exclusive"+scope.String(), func(t *testing.T) {
			t.Parallel()
			engine, schema := testEngineWithConfig(t, &Config{ExclusiveScope: scope})
			times := newFollowUpTimes()
			// Two clients: one works the default queue, the other the default
			// queue and "other", so that a follow-up in "other" is fetched
			// by another client than the one whose job inserted it.
			for _, queues := range []map[string]river.QueueConfig{
				{river.QueueDefault: {MaxWorkers: 10}},
				{river.QueueDefault: {MaxWorkers: 10}, "other": {MaxWorkers: 10}},
			} {
				client, err := NewClient(engine, &river.Config{FetchPollInterval: time.Hour, Queues: queues, Workers: followUpWorkers(times, engine.dbPool)})
				require.NoError(t, err)
				require.NoError(t, client.Start(context.Background()))
				t.Cleanup(func() { _ = client.Stop(context.Background()) })
			}
			inserter, err := NewClient(engine, &river.Config{})
			require.NoError(t, err)

			delays := followUpRuns(t, inserter, times, runs, wait)
			slices.Sort(delays)
			t.Logf("schema %s, exclusive scope %s: %d follow-ups, start delay median %s, worst %s",
				schema, scope, len(delays), delays[len(delays)/2], delays[len(delays)-1])
		})
	}

	t.Run("StockRiverWaitsForThePoll", func(t *testing.T) {
		t.Parallel()
		driver, schema := testStockSchema(t)
		times := newFollowUpTimes()
		client, err := river.NewClient(driver, &river.Config{
			Schema: schema, FetchPollInterval: time.Hour,
			Queues:  map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 10}, "other": {MaxWorkers: 10}},
			Workers: followUpWorkers(times, testPool(t)),
		})
		require.NoError(t, err)
		require.NoError(t, client.Start(context.Background()))
		t.Cleanup(func() { _ = client.Stop(context.Background()) })
		inserter, err := river.NewClient(riverpgxv5.New(testPool(t)), &river.Config{Schema: schema})
		require.NoError(t, err)

		// Whether River's limiter drops the second notification depends on
		// timing (3 runs of 5 in the first measurement): a few tries, one
		// wait is the proof.
		const tries = 5
		for run := range tries {
			_, err = inserter.Insert(context.Background(), followUpParentArgs{Run: run, Mode: "insert"}, nil)
			require.NoError(t, err)
			select {
			case name := <-times.startCh:
				require.Equal(t, fmt.Sprintf("r%d-first", run), name)
			case <-time.After(wait):
				t.Fatal("the first follow-up did not start")
			}
			select {
			case name := <-times.startCh:
				t.Logf("try %d: %s started without a poll", run+1, name)
			case <-time.After(3 * time.Second):
				t.Logf("try %d: the second follow-up waited for the poll", run+1)
				return
			}
		}
		t.Fatalf("in %d tries every follow-up started without a poll: stock River no longer drops the notification, and this test shows nothing", tries)
	})
}
