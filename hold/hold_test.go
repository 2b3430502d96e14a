package hold_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdbtest"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/hold"
	"github.com/riverbpmn/riverbpmn/riverbpmntest"
)

type holdArgs struct{}

func (holdArgs) Kind() string { return "hold_test" }

// setup returns a pool, a migrated schema and an insert-only client on it.
func setup(t *testing.T) (*pgxpool.Pool, string, *river.Client[pgxTx]) {
	t.Helper()
	ctx := context.Background()
	schema := riverdbtest.TestSchema(ctx, t, riverbpmntest.Driver(t), nil)
	b := riverbpmntest.New(ctx, t, schema, &riverbpmntest.Opts{ClientConfig: &river.Config{}})
	return b.DBPool, schema, b.Client
}

func insert(t *testing.T, client *river.Client[pgxTx], opts *river.InsertOpts) *rivertype.JobRow {
	t.Helper()
	res, err := client.Insert(context.Background(), holdArgs{}, opts)
	require.NoError(t, err)
	return res.Job
}

func getJob(t *testing.T, client *river.Client[pgxTx], id int64) *rivertype.JobRow {
	t.Helper()
	job, err := client.JobGet(context.Background(), id)
	require.NoError(t, err)
	return job
}

// checkInvariant checks package hold's invariant for job id: its rows and its
// metadata name the same reasons, and it is pending (or running) exactly when
// it has some.
func checkInvariant(t *testing.T, pool *pgxpool.Pool, schema string, client *river.Client[pgxTx], id int64) []hold.Reason {
	t.Helper()
	reasons, err := hold.Reasons(context.Background(), pool, schema, id)
	require.NoError(t, err)
	job := getJob(t, client, id)
	state, err := hold.Of(job.Metadata)
	require.NoError(t, err)
	if len(reasons) == 0 {
		require.Nil(t, state, "job %d has no reason rows but a hold in its metadata", id)
		return nil
	}
	require.NotNil(t, state, "job %d has reasons %v but no hold in its metadata", id, reasons)
	require.Equal(t, reasons, state.Reasons)
	require.Contains(t, []rivertype.JobState{rivertype.JobStatePending, rivertype.JobStateRunning}, job.State)
	return reasons
}

func TestHoldTwoReasonsReleaseOnLast(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, schema, client := setup(t)
	job := insert(t, client, &river.InsertOpts{Priority: 3, MaxAttempts: 7})

	added, err := hold.Add(ctx, pool, schema, []int64{job.ID}, hold.Suspended)
	require.NoError(t, err)
	require.Equal(t, []int64{job.ID}, added)
	added, err = hold.Add(ctx, pool, schema, []int64{job.ID}, hold.Suspended)
	require.NoError(t, err)
	require.Empty(t, added, "adding a reason twice does nothing")
	_, err = hold.Add(ctx, pool, schema, []int64{job.ID}, "waits_for_prerequisites")
	require.NoError(t, err)
	require.Equal(t, []hold.Reason{"suspended", "waits_for_prerequisites"}, checkInvariant(t, pool, schema, client, job.ID))
	held := getJob(t, client, job.ID)
	require.Equal(t, rivertype.JobStatePending, held.State)
	state, err := hold.Of(held.Metadata)
	require.NoError(t, err)
	require.Equal(t, rivertype.JobStateAvailable, state.ReleaseTo)

	removals, err := hold.Remove(ctx, pool, schema, []int64{job.ID}, hold.Suspended)
	require.NoError(t, err)
	require.Equal(t, []hold.Removal{{JobID: job.ID, Released: false}}, removals)
	require.Equal(t, rivertype.JobStatePending, getJob(t, client, job.ID).State, "another reason still holds it")

	removals, err = hold.Remove(ctx, pool, schema, []int64{job.ID}, hold.Suspended)
	require.NoError(t, err)
	require.Empty(t, removals, "removing a reason the job lacks does nothing")

	removals, err = hold.Remove(ctx, pool, schema, []int64{job.ID}, "waits_for_prerequisites")
	require.NoError(t, err)
	require.Equal(t, []hold.Removal{{JobID: job.ID, Released: true}}, removals)
	released := getJob(t, client, job.ID)
	require.Equal(t, rivertype.JobStateAvailable, released.State)
	require.Nil(t, checkInvariant(t, pool, schema, client, job.ID))
	// Nothing else changed.
	require.Equal(t, job.Priority, released.Priority)
	require.Equal(t, job.MaxAttempts, released.MaxAttempts)
	require.Equal(t, job.Attempt, released.Attempt)
	require.True(t, job.ScheduledAt.Equal(released.ScheduledAt))
	require.JSONEq(t, string(job.Metadata), string(released.Metadata))
}

// TestHoldReleasesWhereTheJobWasGoing checks each state a job can be held
// from.
func TestHoldReleasesWhereTheJobWasGoing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, schema, client := setup(t)
	future := time.Now().Add(time.Hour).UTC().Truncate(time.Microsecond)

	scheduled := insert(t, client, &river.InsertOpts{ScheduledAt: future})
	pending := insert(t, client, &river.InsertOpts{Pending: true})
	retryableFuture := insert(t, client, nil)
	retryablePast := insert(t, client, nil)
	for id, at := range map[int64]time.Time{retryableFuture.ID: future, retryablePast.ID: time.Now().Add(-time.Minute)} {
		_, err := pool.Exec(ctx, fmt.Sprintf(`UPDATE %q.river_job SET state = 'retryable', attempt = 1, scheduled_at = $2 WHERE id = $1`, schema), id, at)
		require.NoError(t, err)
	}
	ids := []int64{scheduled.ID, pending.ID, retryableFuture.ID, retryablePast.ID}
	before := map[int64]*rivertype.JobRow{}
	for _, id := range ids {
		before[id] = getJob(t, client, id)
	}
	added, err := hold.Add(ctx, pool, schema, ids, hold.Suspended)
	require.NoError(t, err)
	require.ElementsMatch(t, ids, added)
	for _, id := range ids {
		job := getJob(t, client, id)
		require.Equal(t, rivertype.JobStatePending, job.State)
		state, err := hold.Of(job.Metadata)
		require.NoError(t, err)
		require.Equal(t, before[id].State, state.ReleaseTo)
		require.True(t, before[id].ScheduledAt.Equal(job.ScheduledAt))
	}
	_, err = hold.Remove(ctx, pool, schema, ids, hold.Suspended)
	require.NoError(t, err)
	want := map[int64]rivertype.JobState{
		scheduled.ID:       rivertype.JobStateScheduled,
		pending.ID:         rivertype.JobStatePending,
		retryableFuture.ID: rivertype.JobStateRetryable,
		retryablePast.ID:   rivertype.JobStateAvailable, // due already: what River's scheduler does
	}
	for _, id := range ids {
		job := getJob(t, client, id)
		require.Equal(t, want[id], job.State, "job %d", id)
		require.True(t, before[id].ScheduledAt.Equal(job.ScheduledAt), "job %d keeps its due time", id)
		require.Equal(t, before[id].Attempt, job.Attempt)
		require.Nil(t, checkInvariant(t, pool, schema, client, id))
	}
}

// TestHoldAgainstRiversOwnMoves checks what River's completer, JobRetry,
// JobCancel and JobDelete do to held jobs.
func TestHoldAgainstRiversOwnMoves(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, schema, client := setup(t)
	exec := client.Driver().GetExecutor()

	// A job held while running: River records a failure (retryable), which
	// is turned back to pending; its release goes to retryable.
	failing := insert(t, client, nil)
	completing := insert(t, client, nil)
	for _, id := range []int64{failing.ID, completing.ID} {
		_, err := pool.Exec(ctx, fmt.Sprintf(`UPDATE %q.river_job SET state = 'running', attempt = 1, attempted_at = now() WHERE id = $1`, schema), id)
		require.NoError(t, err)
	}
	_, err := hold.Add(ctx, pool, schema, []int64{failing.ID, completing.ID}, hold.Suspended)
	require.NoError(t, err)
	require.Equal(t, rivertype.JobStateRunning, getJob(t, client, failing.ID).State, "a running job keeps running")
	checkInvariant(t, pool, schema, client, failing.ID)

	retryAt := time.Now().Add(time.Hour).UTC()
	errData, _ := json.Marshal(map[string]any{"error": "boom", "attempt": 1, "at": time.Now()})
	_, err = exec.JobSetStateIfRunningMany(ctx, &riverdriver.JobSetStateIfRunningManyParams{
		ID:              []int64{failing.ID, completing.ID},
		Attempt:         []*int{nil, nil},
		ErrData:         [][]byte{errData, nil},
		FinalizedAt:     []*time.Time{nil, ptr(time.Now())},
		MetadataDoMerge: []bool{false, false},
		MetadataUpdates: [][]byte{nil, nil},
		ScheduledAt:     []*time.Time{&retryAt, nil},
		Schema:          schema,
		State:           []rivertype.JobState{rivertype.JobStateRetryable, rivertype.JobStateCompleted},
	})
	require.NoError(t, err)
	failed := getJob(t, client, failing.ID)
	require.Equal(t, rivertype.JobStatePending, failed.State, "a failure while held is not retried until released")
	require.Len(t, failed.Errors, 1)
	state, err := hold.Of(failed.Metadata)
	require.NoError(t, err)
	require.Equal(t, rivertype.JobStateRetryable, state.ReleaseTo)
	completed := getJob(t, client, completing.ID)
	require.Equal(t, rivertype.JobStateCompleted, completed.State, "completing ends the hold")
	require.Nil(t, checkInvariant(t, pool, schema, client, completing.ID))

	// JobRetry of a held job: still held, released to available (now).
	_, err = client.JobRetry(ctx, failing.ID)
	require.NoError(t, err)
	retried := getJob(t, client, failing.ID)
	require.Equal(t, rivertype.JobStatePending, retried.State)
	state, err = hold.Of(retried.Metadata)
	require.NoError(t, err)
	require.Equal(t, rivertype.JobStateAvailable, state.ReleaseTo)
	_, err = hold.Remove(ctx, pool, schema, []int64{failing.ID}, hold.Suspended)
	require.NoError(t, err)
	require.Equal(t, rivertype.JobStateAvailable, getJob(t, client, failing.ID).State)

	// River's rescuer retries a stuck held job: turned back to pending too.
	stuck := insert(t, client, nil)
	_, err = pool.Exec(ctx, fmt.Sprintf(`UPDATE %q.river_job SET state = 'running', attempt = 1, attempted_at = now() - interval '1 hour' WHERE id = $1`, schema), stuck.ID)
	require.NoError(t, err)
	_, err = hold.Add(ctx, pool, schema, []int64{stuck.ID}, hold.Suspended)
	require.NoError(t, err)
	_, err = exec.JobRescueMany(ctx, &riverdriver.JobRescueManyParams{
		ID: []int64{stuck.ID}, Error: [][]byte{errData}, FinalizedAt: []*time.Time{nil},
		ScheduledAt: []time.Time{time.Now()}, Schema: schema, State: []string{string(rivertype.JobStateRetryable)},
		StuckHorizon: time.Now().Add(-time.Minute),
	})
	require.NoError(t, err)
	rescued := getJob(t, client, stuck.ID)
	require.Equal(t, rivertype.JobStatePending, rescued.State)
	state, err = hold.Of(rescued.Metadata)
	require.NoError(t, err)
	require.Equal(t, rivertype.JobStateRetryable, state.ReleaseTo)
	checkInvariant(t, pool, schema, client, stuck.ID)

	// JobCancel and JobDelete of held jobs take their reasons with them.
	cancelled := insert(t, client, nil)
	deleted := insert(t, client, nil)
	_, err = hold.Add(ctx, pool, schema, []int64{cancelled.ID, deleted.ID}, hold.Suspended)
	require.NoError(t, err)
	_, err = client.JobCancel(ctx, cancelled.ID)
	require.NoError(t, err)
	require.Equal(t, rivertype.JobStateCancelled, getJob(t, client, cancelled.ID).State)
	require.Nil(t, checkInvariant(t, pool, schema, client, cancelled.ID))
	_, err = client.JobDelete(ctx, deleted.ID)
	require.NoError(t, err)
	reasons, err := hold.Reasons(ctx, pool, schema, deleted.ID)
	require.NoError(t, err)
	require.Empty(t, reasons)

	// A hold mark copied into a new job's metadata is dropped.
	copied := insert(t, client, &river.InsertOpts{Metadata: retried.Metadata})
	require.Equal(t, rivertype.JobStateAvailable, copied.State)
	require.Nil(t, checkInvariant(t, pool, schema, client, copied.ID))
}

// TestHoldInterleavings adds and removes two reasons on the same jobs from
// concurrent transactions, then checks the invariant of every job and that
// the final state follows from the last operation on each reason.
func TestHoldInterleavings(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, schema, client := setup(t)
	const jobs = 60
	var ids []int64
	for range jobs {
		ids = append(ids, insert(t, client, nil).ID)
	}
	reasons := []hold.Reason{"suspended", "other"}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 42))
			for range 40 {
				batch := slices.Clone(ids)
				rng.Shuffle(len(batch), func(i, j int) { batch[i], batch[j] = batch[j], batch[i] })
				batch = batch[:1+rng.IntN(20)]
				reason := reasons[rng.IntN(2)]
				var err error
				if rng.IntN(2) == 0 {
					_, err = hold.Add(ctx, pool, schema, batch, reason)
				} else {
					_, err = hold.Remove(ctx, pool, schema, batch, reason)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	for _, id := range ids {
		got := checkInvariant(t, pool, schema, client, id)
		job := getJob(t, client, id)
		require.Equal(t, len(got) > 0, job.State == rivertype.JobStatePending, "job %d: reasons %v, state %s", id, got, job.State)
	}
	for _, reason := range reasons {
		_, err := hold.Remove(ctx, pool, schema, ids, reason)
		require.NoError(t, err)
	}
	for _, id := range ids {
		require.Equal(t, rivertype.JobStateAvailable, getJob(t, client, id).State)
		require.Nil(t, checkInvariant(t, pool, schema, client, id))
	}
}

func ptr[T any](v T) *T { return &v }
