package lifecycle_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"
)

type pgxTx = pgx.Tx

func quietLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// recorder records, per job, when each execution started and when the
// successful one ended, and makes jobs fail on demand.
type recorder struct {
	mu        sync.Mutex
	starts    map[int64][]time.Time
	ends      map[int64]time.Time // end of the successful execution
	successes map[int64]int
	failing   map[string]bool // names whose executions fail
}

func newRecorder() *recorder {
	return &recorder{starts: map[int64][]time.Time{}, ends: map[int64]time.Time{}, successes: map[int64]int{}, failing: map[string]bool{}}
}

func (r *recorder) setFailing(name string, failing bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failing[name] = failing
}

func (r *recorder) work(ctx context.Context, job *river.Job[lcArgs]) error {
	r.mu.Lock()
	r.starts[job.ID] = append(r.starts[job.ID], time.Now())
	failing := r.failing[job.Args.Name]
	r.mu.Unlock()
	if failing || job.Args.FailAlways || (job.Args.FailOnce && job.Attempt == 1) {
		return errors.New("failing on purpose")
	}
	r.mu.Lock()
	r.ends[job.ID] = time.Now()
	r.successes[job.ID]++
	r.mu.Unlock()
	return nil
}

// startClients starts n clients working lcArgs with poll interval poll.
func (f *fixture) startClients(t *testing.T, n int, rec *recorder, maxAttempts int, poll time.Duration) []*river.Client[pgxTx] {
	t.Helper()
	ctx := context.Background()
	var clients []*river.Client[pgxTx]
	for i := range n {
		workers := river.NewWorkers()
		river.AddWorker(workers, river.WorkFunc(rec.work))
		config, err := f.engine.ClientConfig(&river.Config{
			ID:                fmt.Sprintf("lc-client-%d", i),
			Schema:            f.schema,
			Workers:           workers,
			FetchPollInterval: poll,
			FetchCooldown:     20 * time.Millisecond,
			MaxAttempts:       maxAttempts,
			RetryPolicy:       immediateRetry{},
			Queues:            map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 10}},
			Logger:            quietLogger(),
		})
		require.NoError(t, err)
		client, err := river.NewClient(f.engine.Driver(), config)
		require.NoError(t, err)
		require.NoError(t, client.Start(ctx))
		t.Cleanup(func() {
			stopCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_ = client.Stop(stopCtx)
		})
		clients = append(clients, client)
	}
	return clients
}

// immediateRetry retries a failed job at once (it is still made available
// by River's scheduler or completer, not held).
type immediateRetry struct{}

func (immediateRetry) NextRetry(*rivertype.JobRow) time.Time { return time.Now() }
