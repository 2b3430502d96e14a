package workflow

import (
	"bytes"
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/exclusive"
	"github.com/riverbpmn/riverbpmn/liveness"
)

// defaultExclArgs is a job of one process instance that works for
// SleepMillis, exclusive as every job is unless its definition opts out.
type defaultExclArgs struct {
	Instance    string `json:"instance"`
	Root        string `json:"root,omitempty"`
	SleepMillis int    `json:"sleep_millis"`
}

func (defaultExclArgs) Kind() string { return "default_exclusive" }

func (a defaultExclArgs) JobContext() JobContext {
	return JobContext{ProcessInstanceID: a.Instance, RootProcessInstanceID: a.Root, ProcessDefinitionKey: "defaults"}
}

type defaultExclWorker struct {
	river.WorkerDefaults[defaultExclArgs]
	timeline *exclusive.Timeline
}

func (w *defaultExclWorker) Work(ctx context.Context, job *river.Job[defaultExclArgs]) error {
	end := w.timeline.Begin(job.Args.Instance, job.ID, job.Attempt)
	defer end()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(time.Duration(job.Args.SleepMillis) * time.Millisecond):
		return nil
	}
}

// startDefaultsClient builds an engine with config (Schema set to schema)
// on a pool of its own, and starts a client built the documented way,
// workflow.NewClient, working defaultExclArgs with 3 workers.
func startDefaultsClient(t *testing.T, schema string, config Config, timeline *exclusive.Timeline, logger *slog.Logger) (*Engine, *river.Client[pgx.Tx], error) {
	t.Helper()
	config.Schema = schema
	engine, err := NewEngine(exclNodePool(t, 4), &config)
	require.NoError(t, err)
	workers := river.NewWorkers()
	river.AddWorker(workers, &defaultExclWorker{timeline: timeline})
	client, err := NewClient(engine, &river.Config{
		Logger:            logger,
		Queues:            map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 3}},
		FetchCooldown:     10 * time.Millisecond,
		FetchPollInterval: 50 * time.Millisecond,
		Workers:           workers,
	})
	require.NoError(t, err)
	if err := client.Start(context.Background()); err != nil {
		return engine, client, err
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = client.Stop(ctx)
	})
	return engine, client, nil
}

// runThreeOfOneInstance inserts 3 jobs of one instance, 300 ms of work each,
// on schema, works them with 2 clients of engines with config, and returns
// the timeline once all completed.
func runThreeOfOneInstance(t *testing.T, config Config) []exclusive.Span {
	t.Helper()
	ctx := context.Background()
	schema := exclSchema(t)
	timeline := &exclusive.Timeline{}
	inserter, err := NewEngine(testPool(t), &Config{Schema: schema})
	require.NoError(t, err)
	insertClient, err := NewClient(inserter, &river.Config{})
	require.NoError(t, err)
	for range 3 {
		_, err := insertClient.Insert(ctx, defaultExclArgs{Instance: "pi-1", SleepMillis: 300}, nil)
		require.NoError(t, err)
	}
	for range 2 {
		_, _, err := startDefaultsClient(t, schema, config, timeline, nil)
		require.NoError(t, err)
	}
	require.Eventually(t, func() bool { return len(timeline.Spans()) == 3 }, time.Minute, 10*time.Millisecond)
	return timeline.Spans()
}

// TestExclusiveByDefault: an engine configured with nothing enforces
// process-instance exclusivity. Three exclusive jobs of one instance, worked
// by two clients with three slots each, run one at a time; the same
// workload with the explicit opt-out, exclusive.None, overlaps (so the
// check can fail). The scope is recorded in the schema.
func TestExclusiveByDefault(t *testing.T) {
	t.Parallel()

	t.Run("Default", func(t *testing.T) {
		t.Parallel()
		spans := runThreeOfOneInstance(t, Config{})
		require.Len(t, spans, 3)
		require.Empty(t, exclusive.Overlaps(spans), "an engine configured with nothing runs the jobs of one instance one at a time")
	})

	t.Run("OptOut", func(t *testing.T) {
		t.Parallel()
		spans := runThreeOfOneInstance(t, Config{ExclusiveScope: exclusive.None, Liveness: liveness.Config{Disabled: true}})
		require.Len(t, spans, 3)
		require.NotEmpty(t, exclusive.Overlaps(spans), "with exclusive.None, 3 jobs of 300 ms on 6 free slots run side by side")
	})
}

// TestExclusiveScopeRecorded: the first client records its engine's scope in
// the schema; every tool reads it; a client of an engine with another scope
// refuses to start, naming both scopes, until the record is changed by hand.
func TestExclusiveScopeRecorded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	schema := exclSchema(t)
	timeline := &exclusive.Timeline{}

	first, _, err := startDefaultsClient(t, schema, Config{}, timeline, nil)
	require.NoError(t, err)
	scope, recorded, err := exclusive.ScopeInForce(ctx, testPool(t), schema)
	require.NoError(t, err)
	require.True(t, recorded)
	require.Equal(t, exclusive.ProcessInstance, scope)
	inForce, err := first.ExclusiveScopeInForce(ctx)
	require.NoError(t, err)
	require.Equal(t, exclusive.ProcessInstance, inForce)

	// A second engine with the hierarchy scope: its client refuses to start.
	_, _, err = startDefaultsClient(t, schema, Config{ExclusiveScope: exclusive.RootProcessInstance}, timeline, nil)
	require.ErrorIs(t, err, exclusive.ErrScopeMismatch)
	require.ErrorContains(t, err, "this engine's exclusive scope is root process instance")
	require.ErrorContains(t, err, "records process instance")
	// And it opened no liveness session.
	sessions, err := first.ClientSessions(ctx)
	require.NoError(t, err)
	require.Len(t, sessions, 1, "only the first client's session")

	// One with the explicit opt-out refuses too.
	_, _, err = startDefaultsClient(t, schema, Config{ExclusiveScope: exclusive.None}, timeline, nil)
	require.ErrorContains(t, err, "this engine's exclusive scope is none")

	// A tool on an engine with another scope judges keys by the recorded
	// one: a job of instance "child" under root "root" has key "child".
	tool, err := NewEngine(testPool(t), &Config{Schema: schema, ExclusiveScope: exclusive.RootProcessInstance})
	require.NoError(t, err)
	inserter, err := NewClient(tool, &river.Config{})
	require.NoError(t, err)
	res, err := inserter.Insert(ctx, defaultExclArgs{Instance: "child", Root: "root", SleepMillis: 1}, &river.InsertOpts{Queue: "elsewhere"})
	require.NoError(t, err)
	wait, err := tool.ExclusiveWait(ctx, res.Job.ID)
	require.NoError(t, err)
	require.Equal(t, exclusive.ProcessInstance, wait.Scope)
	require.Equal(t, "child", wait.Key)

	// Recording another scope by hand changes what tools read.
	previous, err := tool.SetExclusiveScope(ctx, exclusive.RootProcessInstance)
	require.NoError(t, err)
	require.Equal(t, exclusive.ProcessInstance, *previous)
	wait, err = first.ExclusiveWait(ctx, res.Job.ID)
	require.NoError(t, err)
	require.Equal(t, "root", wait.Key, "the recorded scope, not the engine's own")

	_, err = tool.SetExclusiveScope(ctx, exclusive.None)
	require.NoError(t, err)
	wait, err = first.ExclusiveWait(ctx, res.Job.ID)
	require.NoError(t, err)
	require.Empty(t, wait.Key)
	require.Contains(t, wait.String(), "exclusivity is not enforced on this schema")
}

// TestExclusiveScopeUpgradeLog: the first client on a schema that was in
// use before migration riverbpmn/021 (one worked by an earlier version,
// which enforced exclusivity only when configured) logs that exclusive jobs
// are enforced from now on; on a fresh schema, even one whose jobs were
// inserted before its first client started, it logs only the record; so
// does it on a schema that plain River used (a River app adopting
// riverbpmn), whose jobs have no job context.
func TestExclusiveScopeUpgradeLog(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	for _, tc := range []struct {
		name    string
		upgrade bool
		plain   bool
		want    string
	}{
		{"Upgrade", true, false, "exclusive jobs are enforced from now on"},
		{"Fresh", false, false, "recorded the exclusive scope in force"},
		{"PlainRiverBefore", true, true, "recorded the exclusive scope in force"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			schema := exclSchema(t)
			insertOld := func() {
				if tc.plain {
					stock, err := river.NewClient(riverpgxv5.New(testPool(t)), &river.Config{Schema: schema})
					require.NoError(t, err)
					_, err = stock.Insert(ctx, plainArgs{}, &river.InsertOpts{Queue: "elsewhere"})
					require.NoError(t, err)
					return
				}
				inserter, err := NewEngine(testPool(t), &Config{Schema: schema})
				require.NoError(t, err)
				client, err := NewClient(inserter, &river.Config{})
				require.NoError(t, err)
				_, err = client.Insert(ctx, defaultExclArgs{Instance: "old", SleepMillis: 1}, &river.InsertOpts{Queue: "elsewhere"})
				require.NoError(t, err)
			}
			if tc.upgrade {
				// The schema as an earlier version left it, in use: back to
				// migration 020, a job, then up again.
				_, err := MigrateDown(ctx, testPool(t), &MigrateOpts{Schema: schema, TargetVersion: 20})
				require.NoError(t, err)
				insertOld()
				_, err = MigrateUp(ctx, testPool(t), &MigrateOpts{Schema: schema, SkipMainLine: true})
				require.NoError(t, err)
			} else {
				insertOld()
			}
			var (
				mu  sync.Mutex
				buf bytes.Buffer
			)
			logger := slog.New(slog.NewTextHandler(&lockedWriter{mu: &mu, w: &buf}, &slog.HandlerOptions{Level: slog.LevelInfo}))
			_, _, err := startDefaultsClient(t, schema, Config{Liveness: liveness.Config{Disabled: true}}, &exclusive.Timeline{}, logger)
			require.NoError(t, err)
			mu.Lock()
			defer mu.Unlock()
			require.Contains(t, buf.String(), tc.want)
			if !tc.upgrade || tc.plain {
				require.NotContains(t, buf.String(), "enforced from now on")
			}
		})
	}
}

// lockedWriter serialises writes to w.
type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
