package workflow

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/exclusive"
)

// TestExclusiveDeferredRelease shows the two ways a deferred release (a key
// whose job's work ended while every producer's last fetch was full) is
// written: by the next fetch, which gives the key back and takes the key's
// next job in the same statement; and, when no fetch comes, by a statement
// of its own after exclusive.DeferredReleaseFlush.
func TestExclusiveDeferredRelease(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	schema := exclSchema(t)
	node := newExclNode(t, schema, newExclRecorder(exclusive.ProcessInstance), exclNodeOpts{
		scope: exclusive.ProcessInstance, maxWorkers: 1, poolConns: 4, poll: time.Hour, cooldown: time.Millisecond,
	})
	insertExcl(ctx, t, node.client, []exclArgs{{Instance: "pi"}, {Instance: "pi"}})

	p := node.engine.Driver().PluginPilot()
	fetch := func() []int64 {
		t.Helper()
		// MaxToLock 1: a fetch that fills it is full, so the producer is not
		// hungry and a release may be deferred.
		res, err := p.JobGetAvailable(ctx, node.engine.Driver().GetExecutor(), nil, &riverdriver.JobGetAvailableParams{
			ClientID: "client", MaxAttemptedBy: 100, MaxToLock: 1, Queue: river.QueueDefault, Schema: schema,
		})
		require.NoError(t, err)
		var ids []int64
		for _, job := range res.Jobs {
			ids = append(ids, job.ID)
		}
		return ids
	}
	holder := func() *int64 {
		t.Helper()
		var jobID *int64
		require.NoError(t, node.pool.QueryRow(ctx, "SELECT job_id FROM "+pgx.Identifier{schema, "river_bpmn_exclusive_lock"}.Sanitize()+" WHERE key = 'pi'").Scan(&jobID))
		return jobID
	}
	release := func(id int64) {
		t.Helper()
		job, err := node.engine.Driver().GetExecutor().JobGetByID(ctx, &riverdriver.JobGetByIDParams{ID: id, Schema: schema})
		require.NoError(t, err)
		held, ok := node.engine.exclusive.TakeHeld(job)
		require.True(t, ok, "job %d holds its key", id)
		node.engine.exclusive.Release(ctx, held)
	}

	first := fetch()
	require.Len(t, first, 1)
	require.Equal(t, first[0], *holder())

	// A loaded machine can take longer than exclusive.DeferredReleaseFlush to come to
	// the next fetch: the flush is held off for this first release (an armed
	// flush timer is not armed again; the fetch that carries the release
	// stops it), so that the fetch is what gives the key back.
	node.engine.exclusive.HoldOffDeferredFlush(schema, time.Hour)

	// The first job's work ends: its release is deferred (no statement), so
	// the key still names the job, which River has not completed either.
	release(first[0])
	require.NotNil(t, holder())
	require.Equal(t, first[0], *holder(), "the release waits for the next fetch")
	require.Zero(t, node.engine.exclusive.Carried())

	// The next fetch gives the key back and takes its next job, in one
	// statement, though the first job still runs as far as River knows.
	second := fetch()
	require.Len(t, second, 1)
	require.NotEqual(t, first[0], second[0])
	require.Equal(t, second[0], *holder(), "the fetch took the key it gave back")
	require.Equal(t, uint64(1), node.engine.exclusive.Carried())

	// The second job's work ends and no fetch follows: the release is
	// written on its own after exclusive.DeferredReleaseFlush (the bound below leaves its
	// statement room on a loaded machine).
	release(second[0])
	require.Eventually(t, func() bool { return holder() == nil }, exclusive.DeferredReleaseFlush+10*time.Second, 5*time.Millisecond, "the key is given back without a fetch")
	require.Equal(t, uint64(1), node.engine.exclusive.Carried(), "no fetch carried it")
}
