package compat

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"
)

// TestInsertAndWork: Insert with River's options, the worker's calls and the
// rows it leaves.
func TestInsertAndWork(t *testing.T) {
	t.Parallel()
	compare(t, func(t *testing.T, s *side) callsAndJobs {
		ctx := context.Background()
		rec := &recorder{}
		client, events := s.startSubscribed(t, &river.Config{Queues: map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 10}, "other": {MaxWorkers: 2}},
			Workers: workers(func(ctx context.Context, job *river.Job[args]) error {
				rec.add("work %s attempt %d queue %s", job.Args.Name, job.Attempt, job.Queue)
				return nil
			})})
		_, err := client.Insert(ctx, args{Name: "plain"}, nil)
		require.NoError(t, err)
		_, err = client.Insert(ctx, args{Name: "options"}, &river.InsertOpts{
			MaxAttempts: 3, Priority: 2, Queue: "other", Tags: []string{"alpha", "beta"}, Metadata: []byte(`{"team": "billing"}`),
		})
		require.NoError(t, err)
		awaitEvents(t, events, completedCount(2))
		return callsAndJobs{Calls: rec.sorted(), Jobs: viewsByName(t, client)}
	})
}

// TestBatchInsert: InsertMany, InsertManyTx, InsertManyFast and
// InsertManyFastTx, what they return and the rows they write.
func TestBatchInsert(t *testing.T) {
	t.Parallel()
	compare(t, func(t *testing.T, s *side) callsAndJobs {
		ctx := context.Background()
		client := s.client(t, &river.Config{})
		batch := func(prefix string) []river.InsertManyParams {
			return []river.InsertManyParams{
				{Args: args{Name: prefix + "-1"}},
				{Args: args{Name: prefix + "-2"}, InsertOpts: &river.InsertOpts{Priority: 3, Tags: []string{"tagged"}}},
				{Args: args{Name: prefix + "-3"}, InsertOpts: &river.InsertOpts{ScheduledAt: time.Now().Add(time.Hour)}},
			}
		}
		var returned []string
		results, err := client.InsertMany(ctx, batch("many"))
		require.NoError(t, err)
		returned = append(returned, fmt.Sprintf("InsertMany %d", len(results)))
		n, err := client.InsertManyFast(ctx, batch("fast"))
		require.NoError(t, err)
		returned = append(returned, fmt.Sprintf("InsertManyFast %d", n))

		tx, err := s.pool.Begin(ctx)
		require.NoError(t, err)
		results, err = client.InsertManyTx(ctx, tx, batch("many-tx"))
		require.NoError(t, err)
		returned = append(returned, fmt.Sprintf("InsertManyTx %d", len(results)))
		n, err = client.InsertManyFastTx(ctx, tx, batch("fast-tx"))
		require.NoError(t, err)
		returned = append(returned, fmt.Sprintf("InsertManyFastTx %d", n))
		require.NoError(t, tx.Commit(ctx))
		return callsAndJobs{Calls: returned, Jobs: viewsByName(t, client)}
	})
}

// TestUniqueJobs: unique by args, by period and by queue; duplicates are
// skipped and say so.
func TestUniqueJobs(t *testing.T) {
	t.Parallel()
	type observed struct {
		Skipped []bool
		Jobs    map[string]jobView
	}
	compare(t, func(t *testing.T, s *side) observed {
		ctx := context.Background()
		client := s.client(t, &river.Config{})
		var skipped []bool
		for _, insert := range []struct {
			args args
			opts *river.InsertOpts
		}{
			{args{Name: "by-args"}, &river.InsertOpts{UniqueOpts: river.UniqueOpts{ByArgs: true}}},
			{args{Name: "by-args"}, &river.InsertOpts{UniqueOpts: river.UniqueOpts{ByArgs: true}}},
			{args{Name: "by-args", Mode: "other"}, &river.InsertOpts{UniqueOpts: river.UniqueOpts{ByArgs: true}}},
			{args{Name: "by-period"}, &river.InsertOpts{UniqueOpts: river.UniqueOpts{ByPeriod: time.Hour}}},
			{args{Name: "by-period"}, &river.InsertOpts{UniqueOpts: river.UniqueOpts{ByPeriod: time.Hour}}},
			{args{Name: "by-queue"}, &river.InsertOpts{Queue: "q", UniqueOpts: river.UniqueOpts{ByQueue: true}}},
			{args{Name: "by-queue"}, &river.InsertOpts{Queue: "q", UniqueOpts: river.UniqueOpts{ByQueue: true}}},
		} {
			res, err := client.Insert(ctx, insert.args, insert.opts)
			require.NoError(t, err)
			skipped = append(skipped, res.UniqueSkippedAsDuplicate)
		}
		results, err := client.InsertMany(ctx, []river.InsertManyParams{
			{Args: args{Name: "by-args"}, InsertOpts: &river.InsertOpts{UniqueOpts: river.UniqueOpts{ByArgs: true}}},
			{Args: args{Name: "batch-new"}, InsertOpts: &river.InsertOpts{UniqueOpts: river.UniqueOpts{ByArgs: true}}},
		})
		require.NoError(t, err)
		for _, res := range results {
			skipped = append(skipped, res.UniqueSkippedAsDuplicate)
		}
		return observed{Skipped: skipped, Jobs: viewsByName(t, client)}
	})
}

// TestPeriodicJobs: a periodic job run on start by the elected leader.
func TestPeriodicJobs(t *testing.T) {
	t.Parallel()
	compare(t, func(t *testing.T, s *side) callsAndJobs {
		rec := &recorder{}
		client, events := s.startSubscribed(t, &river.Config{
			Queues: queues(),
			Workers: workers(func(ctx context.Context, job *river.Job[args]) error {
				rec.add("work %s attempt %d", job.Args.Name, job.Attempt)
				return nil
			}),
			PeriodicJobs: []*river.PeriodicJob{river.NewPeriodicJob(river.PeriodicInterval(time.Hour),
				func() (river.JobArgs, *river.InsertOpts) {
					return args{Name: "periodic"}, &river.InsertOpts{Tags: []string{"hourly"}}
				}, &river.PeriodicJobOpts{RunOnStart: true, ID: "hourly"})},
		})
		awaitEvents(t, events, completedCount(1))
		return callsAndJobs{Calls: rec.sorted(), Jobs: viewsByName(t, client)}
	})
}

// TestScheduledJobs: a job scheduled a moment ahead waits for its time, then
// runs; one scheduled an hour ahead waits.
func TestScheduledJobs(t *testing.T) {
	t.Parallel()
	type observed struct {
		StateAtInsert []string
		RanOnTime     bool
		Jobs          map[string]jobView
	}
	compare(t, func(t *testing.T, s *side) observed {
		ctx := context.Background()
		var ranAt atomic.Pointer[time.Time]
		client, events := s.startSubscribed(t, &river.Config{Queues: queues(), Workers: workers(func(ctx context.Context, job *river.Job[args]) error {
			now := time.Now()
			ranAt.Store(&now)
			return nil
		})})
		at := time.Now().Add(time.Second)
		soon, err := client.Insert(ctx, args{Name: "soon"}, &river.InsertOpts{ScheduledAt: at})
		require.NoError(t, err)
		later, err := client.Insert(ctx, args{Name: "later"}, &river.InsertOpts{ScheduledAt: time.Now().Add(time.Hour)})
		require.NoError(t, err)
		awaitEvents(t, events, completedCount(1))
		return observed{
			StateAtInsert: []string{string(soon.Job.State), string(later.Job.State)},
			RanOnTime:     !ranAt.Load().Before(at),
			Jobs:          viewsByName(t, client),
		}
	})
}

// TestSnooze: a snoozed job runs again after its snooze, without using an
// attempt, and says it was snoozed.
func TestSnooze(t *testing.T) {
	t.Parallel()
	type observed struct {
		Calls     []string
		Events    []string
		WaitedFor bool
		Jobs      map[string]jobView
	}
	compare(t, func(t *testing.T, s *side) observed {
		ctx := context.Background()
		rec := &recorder{}
		var snoozedAt atomic.Pointer[time.Time]
		var waited atomic.Bool
		const snooze = 500 * time.Millisecond
		client, events := s.startSubscribed(t, &river.Config{Queues: queues(), Workers: workers(func(ctx context.Context, job *river.Job[args]) error {
			rec.add("work %s attempt %d", job.Args.Name, job.Attempt)
			if at := snoozedAt.Load(); at != nil {
				waited.Store(time.Since(*at) >= snooze)
				return nil
			}
			now := time.Now()
			snoozedAt.Store(&now)
			return river.JobSnooze(snooze)
		})})
		_, err := client.Insert(ctx, args{Name: "snoozer"}, &river.InsertOpts{MaxAttempts: 1})
		require.NoError(t, err)
		var kinds []string
		for _, e := range awaitEvents(t, events, completedCount(1)) {
			kinds = append(kinds, fmt.Sprintf("%s %s attempt %d", e.Kind, e.Job.State, e.Job.Attempt))
		}
		return observed{Calls: rec.inOrder(), Events: kinds, WaitedFor: waited.Load(), Jobs: viewsByName(t, client)}
	})
}

// TestCancel: a worker cancelling its job (river.JobCancel), and
// Client.JobCancel on a job that waits.
func TestCancel(t *testing.T) {
	t.Parallel()
	type observed struct {
		CancelledByClient jobView
		Jobs              map[string]jobView
	}
	compare(t, func(t *testing.T, s *side) observed {
		ctx := context.Background()
		client, events := s.startSubscribed(t, &river.Config{Queues: queues(), Workers: workers(func(ctx context.Context, job *river.Job[args]) error {
			return river.JobCancel(errors.New("not needed any more"))
		})})
		_, err := client.Insert(ctx, args{Name: "self"}, nil)
		require.NoError(t, err)
		waiting, err := client.Insert(ctx, args{Name: "waiting"}, &river.InsertOpts{ScheduledAt: time.Now().Add(time.Hour)})
		require.NoError(t, err)
		cancelled, err := client.JobCancel(ctx, waiting.Job.ID)
		require.NoError(t, err)
		awaitEvents(t, events, completedCount(1))
		return observed{CancelledByClient: view(t, cancelled), Jobs: viewsByName(t, client)}
	})
}

// errorHandler records River's error handler calls.
type errorHandler struct{ rec *recorder }

func (h *errorHandler) HandleError(ctx context.Context, job *rivertype.JobRow, err error) *river.ErrorHandlerResult {
	h.rec.add("HandleError attempt %d: %v", job.Attempt, err)
	if job.Kind == "compat" && err.Error() == "cancel me" {
		return &river.ErrorHandlerResult{SetCancelled: true}
	}
	return nil
}

func (h *errorHandler) HandlePanic(ctx context.Context, job *rivertype.JobRow, panicVal any, trace string) *river.ErrorHandlerResult {
	h.rec.add("HandlePanic attempt %d: %v (trace %t)", job.Attempt, panicVal, trace != "")
	return nil
}

// TestErrorHandlerAndRetries: the error handler's calls for errors and
// panics, what it decides, and when River's retry policy (the client's
// default) schedules the retry.
func TestErrorHandlerAndRetries(t *testing.T) {
	t.Parallel()
	type observed struct {
		Calls      []string
		RetryAfter time.Duration
		Jobs       map[string]jobView
	}
	compare(t, func(t *testing.T, s *side) observed {
		ctx := context.Background()
		rec := &recorder{}
		client, events := s.startSubscribed(t, &river.Config{Queues: queues(), ErrorHandler: &errorHandler{rec: rec},
			Workers: workers(func(ctx context.Context, job *river.Job[args]) error {
				switch job.Args.Mode {
				case "panic":
					panic("worker panicked")
				case "cancel":
					return errors.New("cancel me")
				}
				return errBoom
			})})
		for _, insert := range []struct {
			args args
			opts *river.InsertOpts
		}{
			{args{Name: "last-attempt"}, &river.InsertOpts{MaxAttempts: 1}},
			{args{Name: "panic", Mode: "panic"}, &river.InsertOpts{MaxAttempts: 1}},
			{args{Name: "handler-cancels", Mode: "cancel"}, nil},
			{args{Name: "retried"}, &river.InsertOpts{MaxAttempts: 2}},
			{args{Name: "default-max-attempts"}, nil},
		} {
			_, err := client.Insert(ctx, insert.args, insert.opts)
			require.NoError(t, err)
		}
		awaitEvents(t, events, func(events []*river.Event) bool { return len(events) >= 5 })
		jobs := viewsByName(t, client)

		// River's default policy retries the first failure after 1 s (+-10%).
		res, err := client.JobList(ctx, river.NewJobListParams().States(rivertype.JobStateRetryable).First(10))
		require.NoError(t, err)
		var retryAfter time.Duration
		for _, job := range res.Jobs {
			if job.AttemptedAt != nil && string(job.EncodedArgs) == `{"name":"retried"}` {
				retryAfter = job.ScheduledAt.Sub(*job.AttemptedAt).Round(time.Second)
			}
		}
		return observed{Calls: rec.sorted(), RetryAfter: retryAfter, Jobs: jobs}
	})
}

// hookedArgs are args with hooks of their own.
type hookedArgs struct {
	Name string `json:"name"`
}

func (hookedArgs) Kind() string { return "compat_hooked" }

func (a hookedArgs) Hooks() []rivertype.Hook {
	return []rivertype.Hook{
		river.HookInsertBeginFunc(func(ctx context.Context, params *rivertype.JobInsertParams) error {
			hookRec.add("job InsertBegin %s", params.Kind)
			return nil
		}),
		river.HookWorkBeginFunc(func(ctx context.Context, job *rivertype.JobRow) error {
			hookRec.add("job WorkBegin %s attempt %d", job.Kind, job.Attempt)
			return nil
		}),
	}
}

// hookRec records the per-job hooks, which River builds once per kind (so
// they cannot carry a recorder of their own): hook scenarios run one side at
// a time under hookMu.
var hookRec = &recorder{}

type hookedWorker struct {
	river.WorkerDefaults[hookedArgs]
}

func (hookedWorker) Work(ctx context.Context, job *river.Job[hookedArgs]) error {
	hookRec.add("work %s", job.Args.Name)
	return nil
}

// TestHooks: global hooks and per-job hooks, in the order River calls them.
func TestHooks(t *testing.T) {
	t.Parallel()
	var turn = make(chan struct{}, 1)
	turn <- struct{}{}
	compare(t, func(t *testing.T, s *side) callsAndJobs {
		<-turn
		defer func() { turn <- struct{}{} }()
		hookRec.mu.Lock()
		hookRec.calls = nil
		hookRec.mu.Unlock()

		ctx := context.Background()
		ws := river.NewWorkers()
		river.AddWorker(ws, hookedWorker{})
		client, events := s.startSubscribed(t, &river.Config{Queues: queues(), Workers: ws, Hooks: []rivertype.Hook{
			river.HookInsertBeginFunc(func(ctx context.Context, params *rivertype.JobInsertParams) error {
				hookRec.add("global InsertBegin %s metadata %s", params.Kind, params.Metadata)
				return nil
			}),
			river.HookWorkBeginFunc(func(ctx context.Context, job *rivertype.JobRow) error {
				hookRec.add("global WorkBegin %s attempt %d", job.Kind, job.Attempt)
				return nil
			}),
			river.HookWorkEndFunc(func(ctx context.Context, job *rivertype.JobRow, err error) error {
				hookRec.add("global WorkEnd %s: %v", job.Kind, err)
				return err
			}),
		}})
		_, err := client.Insert(ctx, hookedArgs{Name: "hooked"}, nil)
		require.NoError(t, err)
		awaitEvents(t, events, completedCount(1))
		return callsAndJobs{Calls: hookRec.inOrder(), Jobs: viewsByName(t, client)}
	})
}

// recordingMiddleware records each insert batch and each job it wraps.
type recordingMiddleware struct {
	river.MiddlewareDefaults
	name string
	rec  *recorder
}

func (m *recordingMiddleware) InsertMany(ctx context.Context, manyParams []*rivertype.JobInsertParams, doInner func(context.Context) ([]*rivertype.JobInsertResult, error)) ([]*rivertype.JobInsertResult, error) {
	kinds := make([]string, len(manyParams))
	for i, p := range manyParams {
		kinds[i] = fmt.Sprintf("%s(max %d, metadata %s)", p.Kind, p.MaxAttempts, p.Metadata)
	}
	m.rec.add("%s insert %v", m.name, kinds)
	return doInner(ctx)
}

func (m *recordingMiddleware) Work(ctx context.Context, job *rivertype.JobRow, doInner func(context.Context) error) error {
	m.rec.add("%s work %s attempt %d", m.name, job.Kind, job.Attempt)
	err := doInner(ctx)
	m.rec.add("%s worked %s: %v", m.name, job.Kind, err)
	return err
}

// recordingPlugin is recordingMiddleware installed as a River plugin
// (river.Config.Plugins, where River recommends middleware go).
type recordingPlugin struct {
	recordingMiddleware
}

func (*recordingPlugin) IsPlugin() bool { return true }

// TestMiddleware: global middleware (as Middleware, as a plugin, and in
// River's older JobInsertMiddleware and WorkerMiddleware fields) and per-job
// middleware see exactly the inserts the application makes and the jobs it
// works, in River's order: a client starting inserts nothing through them.
func TestMiddleware(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		config func(rec *recorder) *river.Config
	}{
		{"MiddlewareAndPlugins", func(rec *recorder) *river.Config {
			return &river.Config{
				Middleware: []rivertype.Middleware{&recordingMiddleware{name: "global", rec: rec}},
				Plugins:    []rivertype.Plugin{&recordingPlugin{recordingMiddleware{name: "plugin", rec: rec}}},
			}
		}},
		{"OlderFields", func(rec *recorder) *river.Config {
			m := &recordingMiddleware{name: "older", rec: rec}
			return &river.Config{JobInsertMiddleware: []rivertype.JobInsertMiddleware{m}, WorkerMiddleware: []rivertype.WorkerMiddleware{m}}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			compare(t, func(t *testing.T, s *side) callsAndJobs {
				ctx := context.Background()
				rec := &recorder{}
				config := tc.config(rec)
				ws := river.NewWorkers()
				river.AddWorker(ws, &worker{
					work: func(ctx context.Context, job *river.Job[args]) error {
						rec.add("work %s", job.Args.Name)
						if job.Args.Mode == "fail" {
							return errBoom
						}
						return nil
					},
					middleware: []rivertype.WorkerMiddleware{&recordingMiddleware{name: "per-job", rec: rec}},
				})
				config.Queues, config.Workers = queues(), ws
				client, events := s.startSubscribed(t, config)
				_, err := client.Insert(ctx, args{Name: "one"}, &river.InsertOpts{MaxAttempts: 4})
				require.NoError(t, err)
				awaitEvents(t, events, completedCount(1))
				_, err = client.InsertMany(ctx, []river.InsertManyParams{{Args: args{Name: "two", Mode: "fail"}, InsertOpts: &river.InsertOpts{MaxAttempts: 1}}, {Args: args{Name: "three"}}})
				require.NoError(t, err)
				awaitEvents(t, events, completedCount(2))
				return callsAndJobs{Calls: rec.sorted(), Jobs: viewsByName(t, client)}
			})
		})
	}
}

// TestQueuePause: a paused queue works nothing until resumed, and says so.
func TestQueuePause(t *testing.T) {
	t.Parallel()
	type observed struct {
		WhilePaused []string
		Paused      bool
		Resumed     bool
		Events      []string
		Jobs        map[string]jobView
	}
	compare(t, func(t *testing.T, s *side) observed {
		ctx := context.Background()
		var worked atomic.Int32
		client := s.client(t, &river.Config{Queues: queues(), FetchPollInterval: 100 * time.Millisecond,
			Workers: workers(func(ctx context.Context, job *river.Job[args]) error {
				worked.Add(1)
				return nil
			})})
		events, cancel := client.Subscribe(append(finalKinds, river.EventKindQueuePaused, river.EventKindQueueResumed)...)
		defer cancel()
		start(t, client)
		require.NoError(t, client.QueuePause(ctx, river.QueueDefault, nil))
		got := awaitEvents(t, events, func(events []*river.Event) bool { return len(events) >= 1 })
		_, err := client.Insert(ctx, args{Name: "held"}, nil)
		require.NoError(t, err)
		queue, err := client.QueueGet(ctx, river.QueueDefault)
		require.NoError(t, err)
		paused := queue.PausedAt != nil
		time.Sleep(time.Second) // ten polls
		whilePaused := []string{fmt.Sprintf("worked %d", worked.Load())}
		for _, v := range viewsByName(t, client) {
			whilePaused = append(whilePaused, v.State)
		}
		require.NoError(t, client.QueueResume(ctx, river.QueueDefault, nil))
		got = append(got, awaitEvents(t, events, completedCount(1))...)
		var kinds []string
		for _, e := range got {
			kinds = append(kinds, string(e.Kind))
		}
		queue, err = client.QueueGet(ctx, river.QueueDefault)
		require.NoError(t, err)
		return observed{WhilePaused: whilePaused, Paused: paused, Resumed: queue.PausedAt == nil, Events: kinds, Jobs: viewsByName(t, client)}
	})
}

// TestSubscriptions: the events of completed, failed, cancelled and snoozed
// jobs, with their statistics.
func TestSubscriptions(t *testing.T) {
	t.Parallel()
	compare(t, func(t *testing.T, s *side) []string {
		ctx := context.Background()
		var snoozed atomic.Bool
		client, events := s.startSubscribed(t, &river.Config{Queues: queues(), Workers: workers(func(ctx context.Context, job *river.Job[args]) error {
			switch job.Args.Mode {
			case "fail":
				return errBoom
			case "cancel":
				return river.JobCancel(errBoom)
			case "snooze":
				if !snoozed.Swap(true) {
					return river.JobSnooze(100 * time.Millisecond)
				}
			}
			return nil
		})})
		for _, mode := range []string{"", "fail", "cancel", "snooze"} {
			_, err := client.Insert(ctx, args{Name: "job-" + mode, Mode: mode}, &river.InsertOpts{MaxAttempts: 1})
			require.NoError(t, err)
		}
		var seen []string
		for _, e := range awaitEvents(t, events, completedCount(4)) {
			seen = append(seen, fmt.Sprintf("%s %s %s attempt %d stats %t", e.Kind, e.Job.EncodedArgs, e.Job.State, e.Job.Attempt, e.JobStats != nil))
		}
		return slices.Sorted(slices.Values(seen))
	})
}

// TestResumableJobs: a resumable job's completed steps are skipped when it
// runs again, and its cursor is given back.
func TestResumableJobs(t *testing.T) {
	t.Parallel()
	compare(t, func(t *testing.T, s *side) callsAndJobs {
		ctx := context.Background()
		rec := &recorder{}
		client, events := s.startSubscribed(t, &river.Config{Queues: queues(), Workers: workers(func(ctx context.Context, job *river.Job[args]) error {
			river.ResumableStep(ctx, "first", nil, func(ctx context.Context) error {
				rec.add("attempt %d: first", job.Attempt)
				return nil
			})
			river.ResumableStepCursor(ctx, "second", nil, func(ctx context.Context, cursor int) error {
				rec.add("attempt %d: second from cursor %d", job.Attempt, cursor)
				if job.Attempt == 1 {
					if err := river.ResumableSetCursor(ctx, 42); err != nil {
						return err
					}
					return errBoom
				}
				return nil
			})
			river.ResumableStep(ctx, "third", nil, func(ctx context.Context) error {
				rec.add("attempt %d: third", job.Attempt)
				return nil
			})
			return nil
		})})
		_, err := client.Insert(ctx, args{Name: "resumable"}, &river.InsertOpts{MaxAttempts: 2})
		require.NoError(t, err)
		awaitEvents(t, events, completedCount(1))
		return callsAndJobs{Calls: rec.inOrder(), Jobs: viewsByName(t, client)}
	})
}

// TestWorkFunc: a worker given as a function (river.WorkFunc).
func TestWorkFunc(t *testing.T) {
	t.Parallel()
	compare(t, func(t *testing.T, s *side) callsAndJobs {
		ctx := context.Background()
		rec := &recorder{}
		ws := river.NewWorkers()
		river.AddWorker(ws, river.WorkFunc(func(ctx context.Context, job *river.Job[args]) error {
			rec.add("func %s attempt %d", job.Args.Name, job.Attempt)
			return nil
		}))
		client, events := s.startSubscribed(t, &river.Config{Queues: queues(), Workers: ws})
		_, err := client.Insert(ctx, args{Name: "by-func"}, nil)
		require.NoError(t, err)
		awaitEvents(t, events, completedCount(1))
		return callsAndJobs{Calls: rec.sorted(), Jobs: viewsByName(t, client)}
	})
}

// TestStuckJobHandler: a job that ignores its timeout is reported stuck to
// the handler, which opens a worker slot, and the job finishes as its worker
// says.
func TestStuckJobHandler(t *testing.T) {
	t.Parallel()
	compare(t, func(t *testing.T, s *side) callsAndJobs {
		ctx := context.Background()
		rec := &recorder{}
		release := make(chan struct{})
		client, events := s.startSubscribed(t, &river.Config{
			Queues: map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 1}}, JobTimeout: 100 * time.Millisecond, JobStuckThreshold: 100 * time.Millisecond,
			JobStuckHandler: func(ctx context.Context, params river.JobStuckHandlerParams) river.JobStuckHandlerResult {
				rec.add("stuck %s in %s, %d stuck", params.Kind, params.Queue, params.TotalStuckJobs)
				close(release)
				return river.JobStuckHandlerResult{AddWorkerSlot: true}
			},
			Workers: workers(func(ctx context.Context, job *river.Job[args]) error {
				rec.add("work %s", job.Args.Name)
				if job.Args.Mode == "stuck" {
					<-release // ignores its context
				}
				return nil
			})})
		_, err := client.Insert(ctx, args{Name: "stuck", Mode: "stuck"}, nil)
		require.NoError(t, err)
		_, err = client.Insert(ctx, args{Name: "behind"}, &river.InsertOpts{Priority: 2})
		require.NoError(t, err)
		awaitEvents(t, events, completedCount(2))
		return callsAndJobs{Calls: rec.inOrder(), Jobs: viewsByName(t, client)}
	})
}

// TestGracefulShutdown: Stop waits for the running job; StopAndCancel
// cancels it, and the job is retried later.
func TestGracefulShutdown(t *testing.T) {
	t.Parallel()
	type observed struct {
		StopErr            string
		StopAndCancelErr   string
		Calls              []string
		AfterStop          map[string]jobView
		AfterStopAndCancel map[string]jobView
	}
	compare(t, func(t *testing.T, s *side) observed {
		ctx := context.Background()
		rec := &recorder{}
		started := make(chan struct{}, 1)
		build := func() *river.Client[pgx.Tx] {
			return s.client(t, &river.Config{Queues: queues(), Workers: workers(func(ctx context.Context, job *river.Job[args]) error {
				rec.add("start %s", job.Args.Name)
				started <- struct{}{}
				if job.Args.Mode == "until-cancelled" {
					<-ctx.Done()
					rec.add("cancelled %s: %v", job.Args.Name, context.Cause(ctx))
					return ctx.Err()
				}
				time.Sleep(300 * time.Millisecond)
				rec.add("finished %s", job.Args.Name)
				return nil
			})})
		}
		errString := func(err error) string {
			if err == nil {
				return ""
			}
			return err.Error()
		}
		var obs observed

		client := build()
		require.NoError(t, client.Start(ctx))
		_, err := client.Insert(ctx, args{Name: "finishes"}, nil)
		require.NoError(t, err)
		<-started
		stopCtx, cancel := context.WithTimeout(ctx, waitTimeout)
		defer cancel()
		obs.StopErr = errString(client.Stop(stopCtx))
		obs.AfterStop = viewsByName(t, client)

		second := build()
		require.NoError(t, second.Start(ctx))
		_, err = second.Insert(ctx, args{Name: "cancelled", Mode: "until-cancelled"}, nil)
		require.NoError(t, err)
		<-started
		obs.StopAndCancelErr = errString(second.StopAndCancel(stopCtx))
		obs.AfterStopAndCancel = viewsByName(t, second)
		obs.Calls = rec.inOrder()
		return obs
	})
}

// TestClientFromContext: a worker inserts a follow-up job through the client
// in its context, in its own transaction, and the follow-up runs.
func TestClientFromContext(t *testing.T) {
	t.Parallel()
	compare(t, func(t *testing.T, s *side) callsAndJobs {
		ctx := context.Background()
		rec := &recorder{}
		client, events := s.startSubscribed(t, &river.Config{Queues: queues(), Workers: workers(func(ctx context.Context, job *river.Job[args]) error {
			rec.add("work %s", job.Args.Name)
			if job.Args.Mode != "first" {
				return nil
			}
			c, err := river.ClientFromContextSafely[pgx.Tx](ctx)
			if err != nil {
				return err
			}
			tx, err := s.pool.Begin(ctx)
			if err != nil {
				return err
			}
			defer func() { _ = tx.Rollback(ctx) }()
			if _, err := c.InsertTx(ctx, tx, args{Name: "follow-up"}, nil); err != nil {
				return err
			}
			return tx.Commit(ctx)
		})})
		_, err := client.Insert(ctx, args{Name: "first", Mode: "first"}, nil)
		require.NoError(t, err)
		awaitEvents(t, events, completedCount(2))
		return callsAndJobs{Calls: rec.inOrder(), Jobs: viewsByName(t, client)}
	})
}

// TestJobCompleteTx: a worker completes its job in its own transaction with
// river.JobCompleteTx, written as a stock River application writes it (with
// River's pgx driver type), and the row is completed when it commits.
func TestJobCompleteTx(t *testing.T) {
	t.Parallel()
	compare(t, func(t *testing.T, s *side) callsAndJobs {
		ctx := context.Background()
		rec := &recorder{}
		client, events := s.startSubscribed(t, &river.Config{Queues: queues(), Workers: workers(func(ctx context.Context, job *river.Job[args]) error {
			tx, err := s.pool.Begin(ctx)
			if err != nil {
				return err
			}
			defer func() { _ = tx.Rollback(ctx) }()
			completed, err := river.JobCompleteTx[*riverpgxv5.Driver](ctx, tx, job)
			if err != nil {
				return err
			}
			rec.add("in tx: %s attempt %d finalized %t", completed.State, completed.Attempt, completed.FinalizedAt != nil)
			return tx.Commit(ctx)
		})})
		_, err := client.Insert(ctx, args{Name: "in-tx"}, nil)
		require.NoError(t, err)
		awaitEvents(t, events, completedCount(1))
		return callsAndJobs{Calls: rec.inOrder(), Jobs: viewsByName(t, client)}
	})
}
