package handlers_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/handlers"
	"github.com/riverbpmn/riverbpmn/workflow"
)

type orderedArgs struct {
	Name string `json:"name"`
}

func (orderedArgs) Kind() string { return "ordered" }

// Timer occurrences are timer jobs to acquisition: a client with
// TimersFirst runs a due timer before async jobs that were due earlier.
func TestTimerJobsAreAcquiredFirstWithTimersFirst(t *testing.T) {
	ctx := context.Background()
	s := newTestSetup(t, nil)
	timers := handlers.NewTimers(s.pool, &handlers.TimersConfig{Schema: s.schema})
	insert := s.insertClient(t)
	jc := workflow.JobContext{ProcessInstanceID: "pi", ProcessDefinitionKey: "p", JobType: workflow.JobTypeAsync}
	s.inTx(t, func(tx pgx.Tx) {
		for _, name := range []string{"async-1", "async-2", "async-3"} {
			opts := jc.InsertOpts()
			opts.ScheduledAt = time.Now().Add(-time.Hour)
			_, err := insert.InsertTx(ctx, tx, orderedArgs{Name: name}, opts)
			require.NoError(t, err)
		}
		// A date timer whose date has passed is due at once (but an hour
		// after the async jobs).
		tjc := workflow.JobContext{ProcessInstanceID: "pi-2", ProcessDefinitionKey: "p"}
		_, err := timers.InsertTx(ctx, insert, tx, orderedArgs{Name: "timer"},
			handlers.Timer{Date: time.Now().Add(-time.Minute).UTC().Format("2006-01-02T15:04:05Z")}, tjc.InsertOpts())
		require.NoError(t, err)
	})

	driver, err := s.engine.NewDriver(workflow.Acquisition{TimersFirst: true})
	require.NoError(t, err)
	var (
		mu    sync.Mutex
		order []string
	)
	workers := river.NewWorkers()
	river.AddWorker(workers, river.WorkFunc(func(ctx context.Context, job *river.Job[orderedArgs]) error {
		mu.Lock()
		defer mu.Unlock()
		order = append(order, job.Args.Name)
		return nil
	}))
	client, err := river.NewClient(driver, &river.Config{
		Schema:     s.schema,
		Middleware: []rivertype.Middleware{s.engine.Middleware(), timers.Middleware()},
		Queues:     map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 1}},
		Workers:    workers,
	})
	require.NoError(t, err)
	require.NoError(t, client.Start(ctx))
	defer func() { require.NoError(t, client.Stop(ctx)) }()
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(order) == 4
	}, 20*time.Second, 10*time.Millisecond)
	require.Equal(t, "timer", order[0], "order: %v", order)
}
