package lifecycle_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/lifecycle"
)

// expiryBound is the documented bound: the service interval of these
// tests (200 ms) plus one statement, with a loaded machine's slack.
const expiryBound = 3 * time.Second

// Jobs that expire while their queue is paused are discarded by the
// leader's service, with the error naming the expiration time, an incident
// for those with a job context, and never start.
func TestExpiryWhileQueuePaused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := setup(t)
	rec := newRecorder()
	clients := f.startClients(t, 1, rec, 3, time.Second)
	pauseQueue(ctx, t, clients[0])
	// The bound runs from the expiry to the leader's next round, so the
	// clock starts once the client leads: a schema reused from another
	// test can hold a lapsed leader row for a while, and a client that is
	// not yet leader runs no service at all.
	waitLeader(ctx, t, f, "lc-client-0")

	// Far enough ahead for the 30 inserts to be done before it even on a
	// loaded machine: an expiration already past is an insert error.
	expiresAt := time.Now().Add(5 * time.Second)
	var ids []int64
	for i := range 30 {
		o := lifecycle.Opts{ExpiresAt: &expiresAt, Pending: i%3 == 1}
		opts := insertOpts(t, map[bool]string{true: "pi-exp", false: ""}[i%2 == 0], o)
		if i%3 == 2 {
			opts.ScheduledAt = expiresAt.Add(-time.Second) // due before it expires
		}
		res, err := f.client.Insert(ctx, lcArgs{Name: fmt.Sprint(i), Instance: map[bool]string{true: "pi-exp", false: ""}[i%2 == 0]}, opts)
		require.NoError(t, err)
		ids = append(ids, res.Job.ID)
	}
	notExpiring := f.insert(t, lcArgs{Name: "keep"}, lifecycle.Opts{})

	for _, id := range ids {
		waitState(t, f, id, rivertype.JobStateDiscarded, 20*time.Second)
	}
	for i, id := range ids {
		job := f.job(t, id)
		require.NotNil(t, job.FinalizedAt)
		late := job.FinalizedAt.Sub(expiresAt)
		require.GreaterOrEqual(t, late, time.Duration(0), "job %d discarded before it expired", id)
		require.Less(t, late, expiryBound, "job %d discarded %s after it expired", id, late)
		require.Equal(t, lifecycle.ExpiryMessage(expiresAt), job.Errors[len(job.Errors)-1].Error)
		require.Contains(t, job.Errors[len(job.Errors)-1].Error, expiresAt.UTC().Format("2006-01-02T15:04:05"))
		if i%2 == 0 {
			incidents, err := f.engine.JobIncidents(ctx, id)
			require.NoError(t, err)
			require.Len(t, incidents, 1)
			require.True(t, strings.Contains(incidents[0].Message, "expired at"))
		}
	}
	require.Equal(t, rivertype.JobStateAvailable, f.job(t, notExpiring.ID).State)
	require.NoError(t, clients[0].QueueResume(ctx, river.QueueDefault, nil))
	waitState(t, f, notExpiring.ID, rivertype.JobStateCompleted, 10*time.Second)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for _, id := range ids {
		require.Empty(t, rec.starts[id], "expired job %d started", id)
	}
}

// Jobs whose expiry passes a moment before they are fetched are never
// started: the work path refuses them before any user code, even when no
// leader service runs here (the leader is a stock River client).
func TestExpiredAtFetchNeverStarts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := setup(t)

	// A stock River client becomes the leader first: riverbpmn's lifecycle
	// service runs nowhere, only the guard stands.
	stock, err := river.NewClient(riverpgxv5.New(f.pool), &river.Config{
		ID: "stock-leader", Schema: f.schema, Logger: quietLogger(),
		Queues: map[string]river.QueueConfig{"unused": {MaxWorkers: 1}},
		Workers: func() *river.Workers {
			w := river.NewWorkers()
			river.AddWorker(w, river.WorkFunc(func(context.Context, *river.Job[lcArgs]) error { return nil }))
			return w
		}(),
	})
	require.NoError(t, err)
	require.NoError(t, stock.Start(ctx))
	t.Cleanup(func() { _ = stock.Stop(context.Background()) })
	waitLeader(ctx, t, f, "stock-leader")

	rec := newRecorder()
	clients := f.startClients(t, 2, rec, 3, 10*time.Second)
	pauseQueue(ctx, t, clients...)

	// 300 jobs expiring around the moment the queue resumes: from 1 s
	// before it to 2 s after, 10 ms apart.
	resumeAt := time.Now().Add(2 * time.Second)
	expiry := map[int64]time.Time{}
	params := make([]river.InsertManyParams, 300)
	for i := range params {
		at := resumeAt.Add(time.Duration(10*i-1000) * time.Millisecond)
		params[i] = river.InsertManyParams{Args: lcArgs{Name: fmt.Sprint(i)}, InsertOpts: insertOpts(t, "", lifecycle.Opts{ExpiresAt: &at})}
	}
	res, err := f.client.InsertMany(ctx, params)
	require.NoError(t, err)
	for i, r := range res {
		expiry[r.Job.ID] = resumeAt.Add(time.Duration(10*i-1000) * time.Millisecond)
	}
	time.Sleep(time.Until(resumeAt))
	for _, c := range clients {
		require.NoError(t, c.QueueResume(ctx, river.QueueDefault, nil))
	}

	table := pgx.Identifier{f.schema, "river_job"}.Sanitize()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var open int
		require.NoError(t, f.pool.QueryRow(ctx, fmt.Sprintf(`SELECT count(*) FROM %s WHERE state NOT IN ('completed', 'discarded')`, table)).Scan(&open))
		if open == 0 {
			break
		}
		require.True(t, time.Now().Before(deadline), "%d jobs still open", open)
		time.Sleep(50 * time.Millisecond)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	var started, refused int
	for id, at := range expiry {
		job := f.job(t, id)
		if len(rec.starts[id]) > 0 {
			started++
			// The guard decided before the expiry; the work began right after
			// (a few calls later, which a loaded machine can stretch to tens
			// of milliseconds; a guard letting expired jobs through would show
			// here as the second of jobs already expired at the resume).
			require.Less(t, rec.starts[id][0].Sub(at), 500*time.Millisecond, "job %d started %s after it expired", id, rec.starts[id][0].Sub(at))
			require.Equal(t, rivertype.JobStateCompleted, job.State)
			continue
		}
		refused++
		require.Equal(t, rivertype.JobStateDiscarded, job.State, "job %d", id)
		require.Equal(t, lifecycle.ExpiryMessage(at), job.Errors[len(job.Errors)-1].Error)
		refusedAt := job.Errors[len(job.Errors)-1].At
		require.False(t, at.After(refusedAt.Add(time.Millisecond)), "job %d refused at %s, before it expired at %s", id, refusedAt, at)
	}
	t.Logf("%d jobs started before their expiry, %d refused at fetch after it", started, refused)
	// Started ones are not required: on a loaded machine the fetch after
	// the resume can come after every expiry.
	require.Positive(t, refused)
}

// A running job is not interrupted by its expiry.
func TestExpiryDoesNotInterruptRunningJob(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := setup(t)
	release := make(chan struct{})
	startedCh := make(chan struct{}, 1)
	workers := river.NewWorkers()
	river.AddWorker(workers, river.WorkFunc(func(ctx context.Context, job *river.Job[lcArgs]) error {
		startedCh <- struct{}{}
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}))
	config, err := f.engine.ClientConfig(&river.Config{
		Schema: f.schema, Workers: workers, Logger: quietLogger(),
		Queues: map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 1}},
	})
	require.NoError(t, err)
	client, err := river.NewClient(f.engine.Driver(), config)
	require.NoError(t, err)
	require.NoError(t, client.Start(ctx))
	t.Cleanup(func() { _ = client.Stop(context.Background()) })

	at := time.Now().Add(2 * time.Second)
	job := f.insert(t, lcArgs{Name: "long"}, lifecycle.Opts{ExpiresAt: &at})
	select {
	case <-startedCh:
	case <-time.After(time.Until(at)):
		t.Fatalf("job %d did not start before it expired (machine too slow for this test)", job.ID)
	}
	time.Sleep(time.Until(at) + time.Second) // expired, the service ran
	require.Equal(t, rivertype.JobStateRunning, f.job(t, job.ID).State)
	close(release)
	waitState(t, f, job.ID, rivertype.JobStateCompleted, 10*time.Second)
}

// pauseQueue pauses the default queue (for every client: a pause is the
// queue's) and returns once each client's producer has stopped fetching:
// QueuePause only asks for the pause, and a producer reports having handled
// it with EventKindQueuePaused.
func pauseQueue(ctx context.Context, t *testing.T, clients ...*river.Client[pgxTx]) {
	t.Helper()
	var events []<-chan *river.Event
	for _, c := range clients {
		paused, cancel := c.Subscribe(river.EventKindQueuePaused)
		defer cancel()
		events = append(events, paused)
	}
	require.NoError(t, clients[0].QueuePause(ctx, river.QueueDefault, nil))
	for i, paused := range events {
		select {
		case <-paused:
		case <-time.After(10 * time.Second):
			t.Fatalf("client %d's producer did not report the pause within 10 s", i)
		}
	}
}

// waitLeader returns once the client with the given ID holds the schema's
// River leadership (the lifecycle services run on the leader only).
func waitLeader(ctx context.Context, t *testing.T, f *fixture, clientID string) {
	t.Helper()
	leaderTable := pgx.Identifier{f.schema, "river_leader"}.Sanitize()
	deadline := time.Now().Add(20 * time.Second)
	for {
		var leader string
		err := f.pool.QueryRow(ctx, fmt.Sprintf(`SELECT leader_id FROM %s`, leaderTable)).Scan(&leader)
		if err == nil && leader == clientID {
			return
		}
		require.True(t, time.Now().Before(deadline), "client %q did not become leader within 20 s", clientID)
		time.Sleep(50 * time.Millisecond)
	}
}
