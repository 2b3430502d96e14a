package handlers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdbtest"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/handlers"
	"github.com/riverbpmn/riverbpmn/jobcontrol"
	"github.com/riverbpmn/riverbpmn/riverbpmntest"
)

type progressArgs struct {
	Advances int `json:"advances"`
	// Chunks splits the advances into chunks with a pause after each one.
	Chunks  int `json:"chunks"`
	PauseMs int `json:"pause_ms"`
}

func (progressArgs) Kind() string { return "progress_test" }

type progressWorker struct {
	river.WorkerDefaults[progressArgs]
	workTime chan time.Duration
}

func (w *progressWorker) Work(ctx context.Context, job *river.Job[progressArgs]) error {
	start := time.Now()
	progress, err := handlers.Progress(ctx)
	if err != nil {
		return err
	}
	progress.SetTotal(int64(job.Args.Advances))
	perChunk := job.Args.Advances / job.Args.Chunks
	for c := 0; c < job.Args.Chunks; c++ {
		for i := 0; i < perChunk; i++ {
			progress.Advance(1)
		}
		time.Sleep(time.Duration(job.Args.PauseMs) * time.Millisecond)
	}
	w.workTime <- time.Since(start)
	return nil
}

// TestProgressThrottledWrites: a job advancing 1,000,000 times over ~3 s
// writes its progress at most once per interval plus once at the end (~4
// writes), each write spaced by the interval, and the final value is exact.
// Writes are counted by a trigger that records every UPDATE of the running
// job that carries progress, with its time.
func TestProgressThrottledWrites(t *testing.T) {
	ctx := context.Background()
	// The test adds a trigger to river_job: its schema is not reused.
	schema := riverdbtest.TestSchema(ctx, t, riverbpmntest.Driver(t), &riverdbtest.TestSchemaOpts{DisableReuse: true})
	b := riverbpmntest.New(ctx, t, schema, nil)
	pool, engine := b.DBPool, b.Engine

	q := pgx.Identifier{schema}.Sanitize()
	_, err := pool.Exec(ctx, fmt.Sprintf(`
		CREATE TABLE %[1]s.progress_log (at timestamptz NOT NULL DEFAULT clock_timestamp(), progress jsonb);
		CREATE FUNCTION %[1]s.progress_log() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN
			INSERT INTO %[1]s.progress_log (progress) VALUES (NEW.metadata -> 'bpmn_progress');
			RETURN NULL;
		END $$;
		CREATE TRIGGER progress_log AFTER UPDATE ON %[1]s.river_job FOR EACH ROW
			WHEN (OLD.state = 'running' AND NEW.state = 'running' AND NEW.metadata ? 'bpmn_progress')
			EXECUTE FUNCTION %[1]s.progress_log();`, q))
	require.NoError(t, err)

	workers := river.NewWorkers()
	worker := &progressWorker{workTime: make(chan time.Duration, 1)}
	river.AddWorker(workers, worker)
	client, err := river.NewClient(engine.Driver(), &river.Config{
		Middleware: []rivertype.Middleware{engine.Middleware()},
		Queues:     map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 1}},
		Schema:     schema,
		Workers:    workers,
	})
	require.NoError(t, err)
	done, cancel := client.Subscribe(river.EventKindJobCompleted, river.EventKindJobFailed)
	defer cancel()
	res, err := client.Insert(ctx, progressArgs{Advances: 1_000_000, Chunks: 100, PauseMs: 30}, nil)
	require.NoError(t, err)
	require.NoError(t, client.Start(ctx))
	t.Cleanup(func() { require.NoError(t, client.Stop(context.Background())) })

	var workTime time.Duration
	select {
	case workTime = <-worker.workTime:
	case <-time.After(time.Minute):
		t.Fatal("the job did not finish")
	}
	select {
	case ev := <-done:
		require.Equal(t, river.EventKindJobCompleted, ev.Kind, "%v", ev.Job.Errors)
	case <-time.After(time.Minute):
		t.Fatal("the job was not completed")
	}

	rows, err := pool.Query(ctx, "SELECT at, progress FROM "+q+".progress_log ORDER BY at")
	require.NoError(t, err)
	type write struct {
		at       time.Time
		progress jobcontrol.Progress
	}
	writes, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (write, error) {
		var (
			w   write
			raw []byte
		)
		err := row.Scan(&w.at, &raw)
		if err == nil {
			err = json.Unmarshal(raw, &w.progress)
		}
		return w, err
	})
	require.NoError(t, err)
	t.Logf("work took %s; %d progress writes", workTime, len(writes))
	for _, w := range writes {
		t.Logf("  %s done %d/%d", w.at.Format("15:04:05.000"), w.progress.Done, w.progress.Total)
	}

	// At most one write per full interval of work, plus the final one: ~4
	// for 3 s of work (more only if the loaded machine made the work longer).
	require.NotEmpty(t, writes)
	require.LessOrEqual(t, len(writes), int(workTime/jobcontrol.DefaultProgressInterval)+1)
	if workTime < 4*time.Second {
		require.LessOrEqual(t, len(writes), 4)
	}
	// Periodic writes are about an interval apart (the final one may follow a
	// tick closely; the times are the database's commit-side clock, so a
	// loaded machine can bring two writes closer than the interval they were
	// decided at); values only grow.
	for i := 1; i < len(writes)-1; i++ {
		require.GreaterOrEqual(t, writes[i].at.Sub(writes[i-1].at), jobcontrol.DefaultProgressInterval/2, "write %d", i)
	}
	for i := 1; i < len(writes); i++ {
		require.GreaterOrEqual(t, writes[i].progress.Done, writes[i-1].progress.Done)
	}
	final := writes[len(writes)-1].progress
	require.Equal(t, int64(1_000_000), final.Done)
	require.Equal(t, int64(1_000_000), final.Total)
	require.NotNil(t, final.Percent)
	require.InDelta(t, 100.0, *final.Percent, 0)

	// Read back through the engine, by job and by process instance.
	st, err := engine.JobStatus(ctx, res.Job.ID)
	require.NoError(t, err)
	require.Equal(t, jobcontrol.Succeeded, st.Status)
	require.NotNil(t, st.Progress)
	require.Equal(t, int64(1_000_000), st.Progress.Done)
}

// TestProgressWithoutMiddleware: a client without the engine's middleware
// gets a clear error, not a reporter that silently writes nothing.
func TestProgressWithoutMiddleware(t *testing.T) {
	_, err := handlers.Progress(context.Background())
	require.ErrorIs(t, err, handlers.ErrNoProgress)
}
