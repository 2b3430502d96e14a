package compat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdbtest"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivershared/riversharedtest"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/workflow"
)

// side is one of the two ways the suite builds a River client: stock River,
// or workflow.NewClient with an engine that declares nothing. Each side has
// a schema of its own.
type side struct {
	name   string
	pool   *pgxpool.Pool
	schema string
	build  func(config *river.Config) (*river.Client[pgx.Tx], error)
}

// sides builds both sides, each in a fresh schema: stock River's has River's
// main line only, as a River application's has; riverbpmn's has both lines.
func sides(t *testing.T) []func(t *testing.T) *side {
	return []func(t *testing.T) *side{
		func(t *testing.T) *side {
			t.Helper()
			pool := riversharedtest.DBPool(context.Background(), t)
			driver := riverpgxv5.New(pool)
			schema := riverdbtest.TestSchema(context.Background(), t, driver, nil)
			return &side{name: "stock", pool: pool, schema: schema, build: func(config *river.Config) (*river.Client[pgx.Tx], error) {
				config.Schema = schema
				return river.NewClient(driver, config)
			}}
		},
		func(t *testing.T) *side {
			t.Helper()
			pool := riversharedtest.DBPool(context.Background(), t)
			migrator, err := workflow.NewEngine(pool, &workflow.Config{})
			require.NoError(t, err)
			schema := riverdbtest.TestSchema(context.Background(), t, migrator.Driver(), nil)
			engine, err := workflow.NewEngine(pool, &workflow.Config{Schema: schema})
			require.NoError(t, err)
			return &side{name: "riverbpmn", pool: pool, schema: schema, build: func(config *river.Config) (*river.Client[pgx.Tx], error) {
				return workflow.NewClient(engine, config)
			}}
		},
	}
}

// compare runs scenario on both sides, side by side, and requires that they
// observe the same.
func compare[T any](t *testing.T, scenario func(t *testing.T, s *side) T) {
	t.Helper()
	var observed [2]T
	t.Run("Sides", func(t *testing.T) {
		for i, newSide := range sides(t) {
			name := [2]string{"Stock", "Riverbpmn"}[i]
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				observed[i] = scenario(t, newSide(t))
			})
		}
	})
	if t.Failed() {
		return
	}
	require.Equal(t, observed[0], observed[1], "stock River (expected) and workflow.NewClient (actual) observe differently")
}

// client builds a client of s and fails the test on error.
func (s *side) client(t *testing.T, config *river.Config) *river.Client[pgx.Tx] {
	t.Helper()
	client, err := s.build(config)
	require.NoError(t, err)
	return client
}

// callsAndJobs is what most scenarios observe: the calls recorded and the
// jobs' final rows.
type callsAndJobs struct {
	Calls []string
	Jobs  map[string]jobView
}

// startSubscribed builds a client of s, subscribes to the events that end
// a job's attempt and starts it; both end with the test.
func (s *side) startSubscribed(t *testing.T, config *river.Config) (*river.Client[pgx.Tx], <-chan *river.Event) {
	t.Helper()
	client := s.client(t, config)
	events, cancel := client.Subscribe(finalKinds...)
	t.Cleanup(cancel)
	start(t, client)
	return client, events
}

// start starts client and stops it when the test ends.
func start(t *testing.T, client *river.Client[pgx.Tx]) {
	t.Helper()
	require.NoError(t, client.Start(context.Background()))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = client.Stop(ctx)
	})
}

// waitTimeout bounds every wait of the suite: what is awaited comes within a
// second or two, or within River's scheduler interval (5 s), at rest.
const waitTimeout = 30 * time.Second

// finalKinds are the events that end a job's attempt.
var finalKinds = []river.EventKind{
	river.EventKindJobCompleted, river.EventKindJobCancelled, river.EventKindJobFailed, river.EventKindJobSnoozed,
}

// awaitEvents reads events until done says the ones read are enough.
func awaitEvents(t *testing.T, events <-chan *river.Event, done func([]*river.Event) bool) []*river.Event {
	t.Helper()
	var got []*river.Event
	timeout := time.After(waitTimeout)
	for !done(got) {
		select {
		case event := <-events:
			got = append(got, event)
		case <-timeout:
			t.Fatalf("waited %s for events; got %d", waitTimeout, len(got))
		}
	}
	return got
}

// completedCount is a done function for awaitEvents: n jobs ended for good
// (completed, cancelled or discarded).
func completedCount(n int) func([]*river.Event) bool {
	return func(events []*river.Event) bool {
		ended := 0
		for _, e := range events {
			if e.Job != nil && slices.Contains([]rivertype.JobState{rivertype.JobStateCompleted, rivertype.JobStateCancelled, rivertype.JobStateDiscarded}, e.Job.State) {
				ended++
			}
		}
		return ended >= n
	}
}

// recorder records calls from workers, middleware, hooks and handlers.
type recorder struct {
	mu    sync.Mutex
	calls []string
}

func (r *recorder) add(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, fmt.Sprintf(format, args...))
}

// sorted returns the calls in a stable order (jobs run concurrently).
func (r *recorder) sorted() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Sorted(slices.Values(r.calls))
}

// inOrder returns the calls in the order they were made.
func (r *recorder) inOrder() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.calls)
}

// jobView is what an application sees of a job row, without what differs
// from run to run (ids, times).
type jobView struct {
	Kind, Queue, State string
	Args               string
	Attempt            int
	MaxAttempts        int
	Priority           int
	Tags               []string
	Metadata           string
	Errors             []string
	AttemptedBy        int
	Finalized          bool
	Unique             bool
}

// viewOf reads job id back and describes it.
func viewOf(t *testing.T, client *river.Client[pgx.Tx], id int64) jobView {
	t.Helper()
	job, err := client.JobGet(context.Background(), id)
	require.NoError(t, err)
	return view(t, job)
}

func view(t *testing.T, job *rivertype.JobRow) jobView {
	t.Helper()
	v := jobView{
		Kind: job.Kind, Queue: job.Queue, State: string(job.State),
		Args:    canonical(t, job.EncodedArgs),
		Attempt: job.Attempt, MaxAttempts: job.MaxAttempts, Priority: job.Priority,
		Tags: job.Tags, Metadata: canonical(t, job.Metadata),
		AttemptedBy: len(job.AttemptedBy), Finalized: job.FinalizedAt != nil,
		Unique: job.UniqueKey != nil,
	}
	for _, e := range job.Errors {
		v.Errors = append(v.Errors, fmt.Sprintf("attempt %d: %s (trace %t)", e.Attempt, firstLine(e.Error), e.Trace != ""))
	}
	return v
}

// viewsByName reads back every job of the side's schema, keyed by the name
// in its args.
func viewsByName(t *testing.T, client *river.Client[pgx.Tx]) map[string]jobView {
	t.Helper()
	res, err := client.JobList(context.Background(), river.NewJobListParams().First(1000))
	require.NoError(t, err)
	views := map[string]jobView{}
	for _, job := range res.Jobs {
		var args struct {
			Name string `json:"name"`
		}
		require.NoError(t, json.Unmarshal(job.EncodedArgs, &args))
		key := args.Name
		for i := 2; ; i++ {
			if _, dup := views[key]; !dup {
				break
			}
			key = fmt.Sprintf("%s#%d", args.Name, i)
		}
		views[key] = view(t, job)
	}
	return views
}

// canonical re-encodes a JSON object with sorted keys, and times (such as
// River's cancel_attempted_at) as "<time>".
func canonical(t *testing.T, raw []byte) string {
	t.Helper()
	var v any
	require.NoError(t, json.Unmarshal(raw, &v))
	out, err := json.Marshal(withoutTimes(v))
	require.NoError(t, err)
	return string(out)
}

func withoutTimes(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			v[k] = withoutTimes(e)
		}
	case []any:
		for i, e := range v {
			v[i] = withoutTimes(e)
		}
	case string:
		if _, err := time.Parse(time.RFC3339Nano, v); err == nil {
			return "<time>"
		}
	}
	return v
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// args are the suite's plain River job args: no job context.
type args struct {
	Name string `json:"name"`
	Mode string `json:"mode,omitempty"`
}

func (args) Kind() string { return "compat" }

// worker runs a job with work, and per-job middleware if any.
type worker struct {
	river.WorkerDefaults[args]
	work       func(ctx context.Context, job *river.Job[args]) error
	middleware []rivertype.WorkerMiddleware
}

func (w *worker) Work(ctx context.Context, job *river.Job[args]) error { return w.work(ctx, job) }

func (w *worker) Middleware(*rivertype.JobRow) []rivertype.WorkerMiddleware { return w.middleware }

// workers registers one worker of args running work.
func workers(work func(ctx context.Context, job *river.Job[args]) error) *river.Workers {
	ws := river.NewWorkers()
	river.AddWorker(ws, &worker{work: work})
	return ws
}

// queues is one queue, River's default, with room for every job of a
// scenario at once.
func queues() map[string]river.QueueConfig {
	return map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 10}}
}

var errBoom = errors.New("boom")
