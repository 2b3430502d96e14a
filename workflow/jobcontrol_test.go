package workflow

import (
	"context"
	"errors"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/events"
	"github.com/riverbpmn/riverbpmn/jobcontrol"
)

// controlArgs is the job of the stop and events tests.
type controlArgs struct {
	Instance string `json:"instance,omitempty"`
	// Block makes the work wait for its context to be cancelled, then
	// return the context's error (or nil with IgnoreStop).
	Block      bool `json:"block,omitempty"`
	IgnoreStop bool `json:"ignore_stop,omitempty"`
	// Fail makes every attempt fail; FailOnce only the first.
	Fail     bool `json:"fail,omitempty"`
	FailOnce bool `json:"fail_once,omitempty"`
	// CancelItself makes the work return river.JobCancel.
	CancelItself bool `json:"cancel_itself,omitempty"`
	// Once gives the job a single execution (retry cycle R0).
	Once bool `json:"once,omitempty"`
}

func (controlArgs) Kind() string { return "control_test" }

func (a controlArgs) JobContext() JobContext {
	jc := JobContext{ProcessInstanceID: a.Instance, ProcessDefinitionKey: "control_process"}
	if a.Once {
		jc.RetryCycle = "R0/PT1S"
	}
	return jc
}

type controlWorker struct {
	river.WorkerDefaults[controlArgs]

	mu      sync.Mutex
	runs    map[int64]int
	started chan int64
}

func (w *controlWorker) Work(ctx context.Context, job *river.Job[controlArgs]) error {
	w.mu.Lock()
	w.runs[job.ID]++
	w.mu.Unlock()
	select {
	case w.started <- job.ID:
	default:
	}
	switch {
	case job.Args.Block:
		<-ctx.Done()
		if job.Args.IgnoreStop {
			return nil
		}
		return ctx.Err()
	case job.Args.Fail, job.Args.FailOnce && job.Attempt == 1:
		return errors.New("control failure")
	case job.Args.CancelItself:
		return river.JobCancel(errors.New("giving up"))
	}
	return nil
}

func (w *controlWorker) runCount(id int64) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.runs[id]
}

func newControlClient(t *testing.T, engine *Engine, schema string, worker *controlWorker) *river.Client[pgx.Tx] {
	t.Helper()
	workers := river.NewWorkers()
	river.AddWorker(workers, worker)
	client, err := river.NewClient(engine.Driver(), &river.Config{
		FetchCooldown:     5 * time.Millisecond,
		FetchPollInterval: 50 * time.Millisecond,
		Middleware:        []rivertype.Middleware{engine.Middleware()},
		Queues:            map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 10}},
		RetryPolicy:       soonRetry{},
		Schema:            schema,
		Workers:           workers,
	})
	require.NoError(t, err)
	return client
}

func newControlWorker() *controlWorker {
	return &controlWorker{runs: map[int64]int{}, started: make(chan int64, 100)}
}

func waitJobState(ctx context.Context, t *testing.T, engine *Engine, id int64, want rivertype.JobState) *jobcontrol.JobStatus {
	t.Helper()
	var st *jobcontrol.JobStatus
	require.Eventually(t, func() bool {
		var err error
		st, err = engine.JobStatus(ctx, id)
		require.NoError(t, err)
		return st.State == string(want)
	}, 30*time.Second, 5*time.Millisecond, "job %d never reached %s", id, want)
	return st
}

func openIncidents(ctx context.Context, t *testing.T, engine *Engine, id int64) int {
	t.Helper()
	var n int
	require.NoError(t, engine.dbPool.QueryRow(ctx,
		engine.sql("SELECT count(*) FROM /* TEMPLATE: schema */river_bpmn_incident WHERE job_id = $1"), id).Scan(&n))
	return n
}

func TestStopJob(t *testing.T) {
	ctx := context.Background()

	t.Run("WaitingJobNeverStarts", func(t *testing.T) {
		engine, schema := testEngine(t)
		worker := newControlWorker()
		client := newControlClient(t, engine, schema, worker)
		res, err := client.Insert(ctx, controlArgs{}, nil)
		require.NoError(t, err)

		stop, err := engine.StopJob(ctx, res.Job.ID)
		require.NoError(t, err)
		require.Equal(t, jobcontrol.StopResult{JobID: res.Job.ID, State: "available", Outcome: jobcontrol.StopAborted}, *stop)
		st, err := engine.JobStatus(ctx, res.Job.ID)
		require.NoError(t, err)
		require.Equal(t, jobcontrol.Aborted, st.Status)
		require.Equal(t, "cancelled", st.State)

		// Idempotent: asked again, the job is left as it is and the call says so.
		stop, err = engine.StopJob(ctx, res.Job.ID)
		require.NoError(t, err)
		require.Equal(t, jobcontrol.StopAlreadyFinished, stop.Outcome)

		// A client started afterwards never runs it.
		other, err := client.Insert(ctx, controlArgs{}, nil)
		require.NoError(t, err)
		require.NoError(t, client.Start(ctx))
		t.Cleanup(func() { require.NoError(t, client.Stop(context.Background())) })
		waitJobState(ctx, t, engine, other.Job.ID, rivertype.JobStateCompleted)
		require.Zero(t, worker.runCount(res.Job.ID))
	})

	t.Run("RunningJob", func(t *testing.T) {
		engine, schema := testEngine(t)
		worker := newControlWorker()
		client := newControlClient(t, engine, schema, worker)
		require.NoError(t, client.Start(ctx))
		t.Cleanup(func() { require.NoError(t, client.Stop(context.Background())) })

		for _, tc := range []struct {
			name string
			args controlArgs
			opts *river.InsertOpts
		}{
			{"ReturnsContextError", controlArgs{Block: true}, nil},
			{"LastAttempt", controlArgs{Block: true, Once: true}, nil},
			{"IgnoresStop", controlArgs{Block: true, IgnoreStop: true}, nil},
		} {
			t.Run(tc.name, func(t *testing.T) {
				res, err := client.Insert(ctx, tc.args, tc.opts)
				require.NoError(t, err)
				waitJobState(ctx, t, engine, res.Job.ID, rivertype.JobStateRunning)

				stop, err := engine.StopJob(ctx, res.Job.ID)
				require.NoError(t, err)
				require.Equal(t, jobcontrol.StopRequested, stop.Outcome)

				st := waitJobState(ctx, t, engine, res.Job.ID, rivertype.JobStateCancelled)
				require.Equal(t, jobcontrol.Aborted, st.Status)
				require.True(t, st.StopRequested)
				require.Zero(t, openIncidents(ctx, t, engine, res.Job.ID), "an aborted job opens no incident")
				require.Equal(t, 1, worker.runCount(res.Job.ID))
			})
		}
	})

	t.Run("FinishedJobLeftAsIs", func(t *testing.T) {
		engine, schema := testEngine(t)
		worker := newControlWorker()
		client := newControlClient(t, engine, schema, worker)
		require.NoError(t, client.Start(ctx))
		t.Cleanup(func() { require.NoError(t, client.Stop(context.Background())) })
		res, err := client.Insert(ctx, controlArgs{}, nil)
		require.NoError(t, err)
		waitJobState(ctx, t, engine, res.Job.ID, rivertype.JobStateCompleted)

		stop, err := engine.StopJob(ctx, res.Job.ID)
		require.NoError(t, err)
		require.Equal(t, jobcontrol.StopResult{JobID: res.Job.ID, State: "completed", Outcome: jobcontrol.StopAlreadyFinished}, *stop)
		st, err := engine.JobStatus(ctx, res.Job.ID)
		require.NoError(t, err)
		require.Equal(t, jobcontrol.Succeeded, st.Status)
		require.False(t, st.StopRequested)
	})

	t.Run("ProcessInstance", func(t *testing.T) {
		engine, schema := testEngine(t)
		worker := newControlWorker()
		client := newControlClient(t, engine, schema, worker)
		require.NoError(t, client.Start(ctx))
		t.Cleanup(func() { require.NoError(t, client.Stop(context.Background())) })

		done, err := client.Insert(ctx, controlArgs{Instance: "pi-1"}, nil)
		require.NoError(t, err)
		waitJobState(ctx, t, engine, done.Job.ID, rivertype.JobStateCompleted)
		running, err := client.Insert(ctx, controlArgs{Instance: "pi-1", Block: true}, nil)
		require.NoError(t, err)
		waitJobState(ctx, t, engine, running.Job.ID, rivertype.JobStateRunning)
		waiting, err := client.Insert(ctx, controlArgs{Instance: "pi-1"}, &river.InsertOpts{ScheduledAt: time.Now().Add(time.Hour)})
		require.NoError(t, err)
		otherInstance, err := client.Insert(ctx, controlArgs{Instance: "pi-2"}, &river.InsertOpts{ScheduledAt: time.Now().Add(time.Hour)})
		require.NoError(t, err)

		results, err := engine.StopProcessInstance(ctx, "pi-1")
		require.NoError(t, err)
		require.Equal(t, []jobcontrol.StopResult{
			{JobID: done.Job.ID, State: "completed", Outcome: jobcontrol.StopAlreadyFinished},
			{JobID: running.Job.ID, State: "running", Outcome: jobcontrol.StopRequested},
			{JobID: waiting.Job.ID, State: "scheduled", Outcome: jobcontrol.StopAborted},
		}, results)
		waitJobState(ctx, t, engine, running.Job.ID, rivertype.JobStateCancelled)

		statuses, err := engine.ProcessInstanceStatus(ctx, "pi-1")
		require.NoError(t, err)
		got := map[int64]jobcontrol.Status{}
		for _, st := range statuses {
			got[st.JobID] = st.Status
		}
		require.Equal(t, map[int64]jobcontrol.Status{
			done.Job.ID: jobcontrol.Succeeded, running.Job.ID: jobcontrol.Aborted, waiting.Job.ID: jobcontrol.Aborted,
		}, got)
		st, err := engine.JobStatus(ctx, otherInstance.Job.ID)
		require.NoError(t, err)
		require.Equal(t, jobcontrol.Queued, st.Status, "another instance's job is untouched")
	})

	t.Run("UnknownJob", func(t *testing.T) {
		engine, _ := testEngine(t)
		_, err := engine.StopJob(ctx, 987654321)
		require.ErrorIs(t, err, ErrNotFound)
		_, err = engine.JobStatus(ctx, 987654321)
		require.ErrorIs(t, err, ErrNotFound)
		_, err = engine.StopProcessInstance(ctx, "")
		require.ErrorContains(t, err, "process_instance_id")
	})
}

// TestJobStatusEvents runs jobs to every outcome with events enabled and
// checks the events a subscriber of the engine receives, per job, in order.
func TestJobStatusEvents(t *testing.T) {
	ctx := context.Background()
	engine, schema := testEngineWithConfig(t, &Config{Events: &EventsConfig{}})
	// riverdbtest reuses schemas: leave none with events on.
	t.Cleanup(func() { require.NoError(t, engine.DisableEvents(context.Background())) })
	on, err := engine.EventsEnabled(ctx)
	require.NoError(t, err)
	require.False(t, on, "off until a client starts or EnableEvents")

	worker := newControlWorker()
	client := newControlClient(t, engine, schema, worker)

	var (
		mu       sync.Mutex
		received []events.Event
	)
	subCtx, stopSub := context.WithCancel(ctx)
	subDone := make(chan error, 1)
	go func() {
		subDone <- engine.SubscribeEvents(subCtx, &events.SubscribeConfig{From: &events.Cursor{}, PollInterval: 50 * time.Millisecond},
			func(_ context.Context, batch []events.Event) error {
				mu.Lock()
				defer mu.Unlock()
				received = append(received, batch...)
				return nil
			})
	}()

	require.NoError(t, client.Start(ctx))
	t.Cleanup(func() { require.NoError(t, client.Stop(context.Background())) })
	on, err = engine.EventsEnabled(ctx)
	require.NoError(t, err)
	require.True(t, on, "a client of an engine with Config.Events enables them")

	succeed, err := client.Insert(ctx, controlArgs{Instance: "pi-ev"}, nil)
	require.NoError(t, err)
	retried, err := client.Insert(ctx, controlArgs{FailOnce: true}, nil)
	require.NoError(t, err)
	discarded, err := client.Insert(ctx, controlArgs{Instance: "pi-ev", Fail: true, Once: true}, nil)
	require.NoError(t, err)
	cancelled, err := client.Insert(ctx, controlArgs{CancelItself: true}, nil)
	require.NoError(t, err)
	aborted, err := client.Insert(ctx, controlArgs{Block: true}, nil)
	require.NoError(t, err)
	waitJobState(ctx, t, engine, aborted.Job.ID, rivertype.JobStateRunning)
	_, err = engine.StopJob(ctx, aborted.Job.ID)
	require.NoError(t, err)
	for _, id := range []int64{succeed.Job.ID, retried.Job.ID} {
		waitJobState(ctx, t, engine, id, rivertype.JobStateCompleted)
	}
	waitJobState(ctx, t, engine, discarded.Job.ID, rivertype.JobStateDiscarded)
	waitJobState(ctx, t, engine, cancelled.Job.ID, rivertype.JobStateCancelled)
	waitJobState(ctx, t, engine, aborted.Job.ID, rivertype.JobStateCancelled)

	type step struct {
		Status      events.Status
		RetriesLeft *bool
		Error       string
	}
	yes, no := true, false
	want := map[int64][]step{
		succeed.Job.ID:   {{Status: events.Running}, {Status: events.Succeeded}},
		retried.Job.ID:   {{Status: events.Running}, {Status: events.Failed, RetriesLeft: &yes, Error: "control failure"}, {Status: events.Running}, {Status: events.Succeeded}},
		discarded.Job.ID: {{Status: events.Running}, {Status: events.Failed, RetriesLeft: &no, Error: "control failure"}, {Status: events.Incident, Error: "control failure"}},
		cancelled.Job.ID: {{Status: events.Running}, {Status: events.Failed, RetriesLeft: &no, Error: "JobCancelError: giving up"}},
		aborted.Job.ID:   {{Status: events.Running}, {Status: events.Aborted}},
	}
	var got map[int64][]step
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		got = map[int64][]step{}
		for _, ev := range received {
			got[ev.JobID] = append(got[ev.JobID], step{Status: ev.Status, RetriesLeft: ev.RetriesLeft, Error: ev.Error})
		}
		return len(received) >= 13
	}, 30*time.Second, 10*time.Millisecond)
	require.Equal(t, want, got)

	mu.Lock()
	for i, ev := range received {
		require.NotZero(t, ev.At)
		require.Equal(t, "control_test", ev.Kind)
		if ev.JobID == succeed.Job.ID || ev.JobID == discarded.Job.ID {
			require.Equal(t, "pi-ev", ev.ProcessInstanceID)
			require.Contains(t, string(ev.JobContext), `"process_instance_id": "pi-ev"`)
		}
		if i > 0 {
			prev := received[i-1].Cursor
			require.True(t, prev.TxID < ev.Cursor.TxID || (prev.TxID == ev.Cursor.TxID && prev.ID < ev.Cursor.ID), "cursor order")
		}
	}
	mu.Unlock()
	stopSub()
	require.ErrorIs(t, <-subDone, context.Canceled)

	// Off: the trigger is gone, so nothing is recorded (and nothing paid).
	require.NoError(t, engine.DisableEvents(ctx))
	var before, after int
	require.NoError(t, engine.dbPool.QueryRow(ctx, engine.sql("SELECT coalesce(sum(cardinality(job_id)), 0) FROM /* TEMPLATE: schema */river_bpmn_event")).Scan(&before))
	quiet, err := client.Insert(ctx, controlArgs{}, nil)
	require.NoError(t, err)
	waitJobState(ctx, t, engine, quiet.Job.ID, rivertype.JobStateCompleted)
	require.NoError(t, engine.dbPool.QueryRow(ctx, engine.sql("SELECT coalesce(sum(cardinality(job_id)), 0) FROM /* TEMPLATE: schema */river_bpmn_event")).Scan(&after))
	require.Equal(t, before, after)

	// Pruning by age deletes in cursor order.
	n, err := engine.PruneEvents(ctx, time.Now().Add(time.Hour))
	require.NoError(t, err)
	require.Equal(t, int64(after), n)
}

// TestEventsCursorNeverSkips: a transaction that wrote an event with a lower
// id but commits after a later one is still delivered: the reader holds back
// until every older transaction has ended.
func TestEventsCursorNeverSkips(t *testing.T) {
	ctx := context.Background()
	engine, schema := testEngine(t)
	require.NoError(t, engine.EnableEvents(ctx))
	t.Cleanup(func() { require.NoError(t, engine.DisableEvents(context.Background())) })
	worker := newControlWorker()
	client := newControlClient(t, engine, schema, worker)
	a, err := client.Insert(ctx, controlArgs{}, nil)
	require.NoError(t, err)
	b, err := client.Insert(ctx, controlArgs{}, nil)
	require.NoError(t, err)

	start, err := engine.EventsNow(ctx)
	require.NoError(t, err)
	setRunning := engine.sql("UPDATE /* TEMPLATE: schema */river_job SET state = 'running', attempt = 1, attempted_at = now() WHERE id = $1")
	slow, err := engine.dbPool.Begin(ctx)
	require.NoError(t, err)
	defer slow.Rollback(ctx)                      //nolint:errcheck
	_, err = slow.Exec(ctx, setRunning, a.Job.ID) // writes its event first
	require.NoError(t, err)
	_, err = engine.dbPool.Exec(ctx, setRunning, b.Job.ID) // commits first
	require.NoError(t, err)

	batch, err := engine.ReadEvents(ctx, start, 100)
	require.NoError(t, err)
	require.Empty(t, batch, "b's event waits for the older transaction")
	pending, err := events.Pending(ctx, engine.dbPool, schema, start)
	require.NoError(t, err)
	require.True(t, pending)

	require.NoError(t, slow.Commit(ctx))
	// Both arrive once no older transaction is open. Other tests of this
	// package run in parallel in the same database, and an older
	// transaction of theirs holds delivery back too (by design: the reader
	// cannot tell whose it is), so the read is repeated for a while.
	ids := []int64{}
	require.Eventually(t, func() bool {
		batch, err = engine.ReadEvents(ctx, start, 100)
		require.NoError(t, err)
		ids = ids[:0]
		for _, ev := range batch {
			ids = append(ids, ev.JobID)
		}
		return len(ids) >= 2
	}, time.Minute, 50*time.Millisecond, "both events are delivered (other tests' open transactions may hold them back for a while)")
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	require.Equal(t, []int64{a.Job.ID, b.Job.ID}, ids)
}

// TestEventsPrunedByLeader: with Config.Events, the elected leader deletes
// events older than the retention, so the outbox stays bounded.
func TestEventsPrunedByLeader(t *testing.T) {
	ctx := context.Background()
	engine, schema := testEngineWithConfig(t, &Config{Events: &EventsConfig{Retention: time.Millisecond, PruneInterval: 20 * time.Millisecond}})
	t.Cleanup(func() { require.NoError(t, engine.DisableEvents(context.Background())) })
	client := newControlClient(t, engine, schema, newControlWorker())
	require.NoError(t, client.Start(ctx))
	t.Cleanup(func() { require.NoError(t, client.Stop(context.Background())) })

	res, err := client.Insert(ctx, controlArgs{}, nil)
	require.NoError(t, err)
	waitJobState(ctx, t, engine, res.Job.ID, rivertype.JobStateCompleted)

	var written int64
	require.NoError(t, engine.dbPool.QueryRow(ctx, "SELECT last_value FROM "+
		pgx.Identifier{schema, "river_bpmn_event_id_seq"}.Sanitize()).Scan(&written))
	require.GreaterOrEqual(t, written, int64(2), "RUNNING and SUCCEEDED were recorded")
	require.Eventually(t, func() bool {
		var left int
		require.NoError(t, engine.dbPool.QueryRow(ctx, engine.sql("SELECT coalesce(sum(cardinality(job_id)), 0) FROM /* TEMPLATE: schema */river_bpmn_event")).Scan(&left))
		return left == 0
	}, 30*time.Second, 20*time.Millisecond, "the leader prunes them")
}

// TestEventsNotHeldBackByOtherDatabases: a transaction running in another
// database of the server cannot write events here, so it does not hold
// delivery back (one in this database does: TestEventsCursorNeverSkips).
func TestEventsNotHeldBackByOtherDatabases(t *testing.T) {
	ctx := context.Background()
	engine, schema := testEngine(t)
	require.NoError(t, engine.EnableEvents(ctx))
	t.Cleanup(func() { require.NoError(t, engine.DisableEvents(context.Background())) })

	config := engine.dbPool.Config().ConnConfig.Copy()
	config.Database = "postgres"
	other, err := pgx.ConnectConfig(ctx, config)
	require.NoError(t, err)
	defer other.Close(ctx)
	otherTx, err := other.Begin(ctx)
	require.NoError(t, err)
	defer otherTx.Rollback(ctx)                               //nolint:errcheck
	_, err = otherTx.Exec(ctx, "SELECT pg_current_xact_id()") // takes an xid, stays open
	require.NoError(t, err)

	start, err := engine.EventsNow(ctx)
	require.NoError(t, err)
	client := newControlClient(t, engine, schema, newControlWorker())
	res, err := client.Insert(ctx, controlArgs{}, &river.InsertOpts{ScheduledAt: time.Now().Add(time.Hour)})
	require.NoError(t, err)
	_, err = engine.StopJob(ctx, res.Job.ID)
	require.NoError(t, err)

	// Transactions of other tests in this database (other schemas) hold
	// delivery back while they run, so the event may need a few reads; the
	// other database's transaction stays open until the end, so if it held
	// delivery back the event would never come.
	var batch []events.Event
	require.Eventually(t, func() bool {
		batch, err = engine.ReadEvents(ctx, start, 10)
		require.NoError(t, err)
		return len(batch) > 0
	}, time.Minute, 10*time.Millisecond, "the other database's open transaction does not hold the event back")
	require.Len(t, batch, 1)
	require.Equal(t, events.Aborted, batch[0].Status)
}
