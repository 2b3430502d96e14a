package workflow

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/exclusive"
)

// TestExclusiveEndedKeys shows how a key whose job's work ended while every
// producer's last fetch was full is given back without a release statement
// (exclusive/ended.go): the next fetch takes it over with the key's next
// job, in one update of the lock row; once River writes the job's outcome
// the lock is stale and the keeper forgets it; and when neither happens, a
// statement of its own writes it free after exclusive.EndedKeyFlush.
func TestExclusiveEndedKeys(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	schema := exclSchema(t)
	node := newExclNode(t, schema, newExclRecorder(exclusive.ProcessInstance), exclNodeOpts{
		scope: exclusive.ProcessInstance, maxWorkers: 1, poolConns: 4, poll: time.Hour, cooldown: time.Millisecond,
	})
	insertExcl(ctx, t, node.client, []exclArgs{{Instance: "pi"}, {Instance: "pi"}, {Instance: "pi"}, {Instance: "pi"}})

	p := node.engine.Driver().PluginPilot()
	exec := node.engine.Driver().GetExecutor()
	fetch := func() []int64 {
		t.Helper()
		// MaxToLock 1: a fetch that fills it is full, so the producer is not
		// hungry and a release needs no statement.
		res, err := p.JobGetAvailable(ctx, exec, nil, &riverdriver.JobGetAvailableParams{
			ClientID: "client", MaxAttemptedBy: 100, MaxToLock: 1, Queue: river.QueueDefault, Schema: schema,
		})
		require.NoError(t, err)
		var ids []int64
		for _, job := range res.Jobs {
			ids = append(ids, job.ID)
		}
		return ids
	}
	lock := func() (jobID *int64, token int64) {
		t.Helper()
		require.NoError(t, node.pool.QueryRow(ctx, "SELECT job_id, token FROM "+pgx.Identifier{schema, "river_bpmn_exclusive_lock"}.Sanitize()+" WHERE key = 'pi'").Scan(&jobID, &token))
		return jobID, token
	}
	holder := func() *int64 {
		t.Helper()
		jobID, _ := lock()
		return jobID
	}
	release := func(id int64) {
		t.Helper()
		job, err := exec.JobGetByID(ctx, &riverdriver.JobGetByIDParams{ID: id, Schema: schema})
		require.NoError(t, err)
		held, ok := node.engine.exclusive.TakeHeld(job)
		require.True(t, ok, "job %d holds its key", id)
		node.engine.exclusive.Release(ctx, held)
	}

	first := fetch()
	require.Len(t, first, 1)
	require.Equal(t, first[0], *holder())

	// A loaded machine can take longer than exclusive.EndedKeyFlush to come
	// to the next fetch: the flush is held off (an armed flush timer is not
	// armed again), so that the fetch is what gives the key back.
	node.engine.exclusive.HoldOffEndedFlush(schema, time.Hour)

	// The first job's work ends: nothing is written, so the key still names
	// the job, which River has not completed either.
	_, firstToken := lock()
	release(first[0])
	jobID, token := lock()
	require.Equal(t, first[0], *jobID, "no statement gives the key back")
	require.Equal(t, firstToken, token)
	require.Zero(t, node.engine.exclusive.Carried())

	// The next fetch takes the key over with its next job, in one
	// statement, though the first job still runs as far as River knows.
	second := fetch()
	require.Len(t, second, 1)
	require.NotEqual(t, first[0], second[0])
	require.Equal(t, second[0], *holder(), "the fetch took the key over")
	require.Equal(t, uint64(1), node.engine.exclusive.Carried())

	// The second job's work ends, and River writes its outcome through the
	// engine's pilot, as its completer does: the lock, still naming the
	// job, is stale, and the keeper forgets the ended key.
	release(second[0])
	now := time.Now()
	_, err := p.JobSetStateIfRunningMany(ctx, exec, &riverdriver.JobSetStateIfRunningManyParams{
		ID: []int64{second[0]}, Attempt: []*int{nil}, ErrData: [][]byte{nil}, FinalizedAt: []*time.Time{&now},
		MetadataDoMerge: []bool{false}, MetadataUpdates: [][]byte{nil}, ScheduledAt: []*time.Time{nil},
		Schema: schema, State: []rivertype.JobState{rivertype.JobStateCompleted},
	})
	require.NoError(t, err)
	require.Equal(t, uint64(2), node.engine.exclusive.Carried(), "forgotten once River wrote the outcome")
	require.Equal(t, second[0], *holder(), "no statement gave the key back")

	// A stale lock is free for every client: the next fetch, which names
	// no ended key, takes it over.
	third := fetch()
	require.Len(t, third, 1)
	require.Equal(t, third[0], *holder(), "a stale lock is taken over")

	// The third job's work ends and no fetch follows, nor any outcome: a
	// statement of its own writes the key free after
	// exclusive.EndedKeyFlush (the bound below leaves its statement room on
	// a loaded machine).
	release(third[0])
	require.Eventually(t, func() bool { return holder() == nil }, exclusive.EndedKeyFlush+10*time.Second, 5*time.Millisecond, "the key is given back without a fetch")
	require.Equal(t, uint64(2), node.engine.exclusive.Carried(), "no fetch carried it")
}
