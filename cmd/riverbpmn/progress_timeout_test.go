package main

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/handlers"
	"github.com/riverbpmn/riverbpmn/workflow"
)

type longArgs struct{}

func (longArgs) Kind() string { return "cli_long" }

// TestProgressSaysWhenJobTimeoutCutAJob: a job reporting progress that
// outlives River's JobTimeout (here 300 ms) has its context cancelled; its
// work returns the context's error and the job waits for its retry.
// progress says what happened and what to do, in text and JSON; a job whose
// attempt failed otherwise gets no such hint.
func TestProgressSaysWhenJobTimeoutCutAJob(t *testing.T) {
	ctx := context.Background()
	url, schema := migratedSchema(t)
	pool, err := pgxpool.New(ctx, url)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	engine, err := workflow.NewEngine(pool, &workflow.Config{Schema: schema})
	require.NoError(t, err)

	workers := river.NewWorkers()
	river.AddWorker(workers, river.WorkFunc(func(ctx context.Context, job *river.Job[longArgs]) error {
		progress, err := handlers.Progress(ctx)
		if err != nil {
			return err
		}
		progress.SetTotal(10)
		progress.Advance(3)
		<-ctx.Done() // a long job, honouring its context
		return ctx.Err()
	}))
	river.AddWorker(workers, river.WorkFunc(func(context.Context, *river.Job[noopArgs]) error {
		return context.Canceled // fails, but not by timeout
	}))
	client, err := workflow.NewClient(engine, &river.Config{
		FetchPollInterval: 100 * time.Millisecond,
		JobTimeout:        300 * time.Millisecond,
		Queues:            map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 2}},
		TestOnly:          true,
		Workers:           workers,
	})
	require.NoError(t, err)
	// An hour between attempts: each job stays retryable after its first.
	jc := workflow.JobContext{ProcessInstanceID: "cli-long", ProcessDefinitionKey: "cli_process", RetryCycle: "R3/PT1H"}
	long, err := client.Insert(ctx, longArgs{}, jc.InsertOpts())
	require.NoError(t, err)
	other, err := client.Insert(ctx, noopArgs{}, jc.InsertOpts())
	require.NoError(t, err)
	require.NoError(t, client.Start(ctx))
	t.Cleanup(func() { _ = client.Stop(context.Background()) })
	require.Eventually(t, func() bool {
		for _, id := range []int64{long.Job.ID, other.Job.ID} {
			st, err := engine.JobStatus(ctx, id)
			if err != nil || st.State != "retryable" {
				return false
			}
		}
		return true
	}, 30*time.Second, 50*time.Millisecond)

	db := []string{"--database-url", url, "--schema", schema}
	longID := strconv.FormatInt(long.Job.ID, 10)
	code, out, errOut := runCLI(t, append([]string{"progress", "--job", longID}, db...)...)
	require.Equal(t, exitOK, code, errOut)
	require.Contains(t, out, "job "+longID+" cli_long: ")
	require.Contains(t, out, ": 3/10 (30.00%) at ")
	require.Contains(t, out, `attempt 1 ended with "context deadline exceeded": River cancels a job's context after its timeout (river.Config.JobTimeout, 1 minute by default)`)
	require.Contains(t, out, "worker's Timeout method")

	var reports []progressReport
	code, out, errOut = runCLI(t, append([]string{"progress", "--process-instance", "cli-long", "--json"}, db...)...)
	require.Equal(t, exitOK, code, errOut)
	require.NoError(t, json.Unmarshal([]byte(out), &reports), out)
	require.Len(t, reports, 2)
	hints := map[int64]string{}
	for _, r := range reports {
		hints[r.JobID] = r.Hint
	}
	require.Contains(t, hints[long.Job.ID], "river.Config.JobTimeout")
	require.Empty(t, hints[other.Job.ID], "failed, but not by the timeout")
}
