package workflow

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/exclusive"
)

// TestExclusiveRunningRowRace tries to break the running-row mechanism
// (exclusive.RunningRow) where its argument is thinnest: two fetches that
// judge one key from two snapshots and pick different heads. 4 nodes (each
// its own pool, engine and client, 1 ms fetch cooldown), two fetching by
// priority and two in River's order, so that they see different heads of
// one key, work few keys with many jobs each (priorities spread), so that
// every fetch meets keys another fetch is taking; a third of the jobs become
// fetchable while the run goes on (available, due over the first seconds),
// so a key's new head appears between the snapshots of concurrent fetches;
// some fail once (retryable, made available again by River's scheduler) or
// snooze. Two independent checks: the workers' recorded timeline has no
// overlap per key, and a watcher that reads river_job every millisecond or
// so, each read one snapshot of committed rows, never sees two running jobs
// of one key whose work had not ended before the read.
func TestExclusiveRunningRowRace(t *testing.T) {
	ctx := context.Background()
	schema := exclSchema(t)
	rec := newExclRecorder(exclusive.ProcessInstance)

	const (
		numNodes = 4
		numKeys  = 12
		jobsPer  = 40
	)
	nodes := make([]*exclNode, numNodes)
	for i := range nodes {
		opts := exclNodeOpts{
			scope: exclusive.ProcessInstance, mechanism: exclusive.RunningRow, maxWorkers: 8, poolConns: 4,
			poll: 20 * time.Millisecond, cooldown: time.Millisecond,
		}
		if i%2 == 0 {
			opts.acquisition = &Acquisition{ByPriority: true}
		}
		nodes[i] = newExclNode(t, schema, rec, opts)
	}
	rng := rand.New(rand.NewPCG(38, 38)) //nolint:gosec // reproducible test data
	var jobs []exclArgs
	for k := range numKeys {
		for range jobsPer {
			priority := int64(rng.IntN(11) - 5)
			args := exclArgs{Instance: fmt.Sprintf("pi-%02d", k), SleepMicros: rng.IntN(1500), Priority: &priority}
			switch r := rng.Float64(); {
			case r < 0.05:
				args.FailOnce = true
			case r < 0.08:
				args.SnoozeOnce = true
			}
			jobs = append(jobs, args)
		}
	}
	rng.Shuffle(len(jobs), func(i, j int) { jobs[i], jobs[j] = jobs[j], jobs[i] })
	insertExcl(ctx, t, nodes[0].client, jobs)
	// A third of the jobs become due over the first three seconds, each at
	// its own millisecond: still available, so no scheduler is involved.
	_, err := testPool(t).Exec(ctx, fmt.Sprintf(`UPDATE %s.river_job SET scheduled_at = now() + (id %% 3000) * interval '1 ms' WHERE id %% 3 = 0`, schema))
	require.NoError(t, err)

	// The watcher: each read is one snapshot of the running jobs of every
	// key that has more than one.
	watchQuery := exclusive.RenderSQL(`SELECT key, array_agg(id), array_agg(attempt) FROM (
		SELECT /* EXCLUSIVE_KEY */ AS key, id, attempt FROM /* TEMPLATE: schema */river_job WHERE state = 'running'
	) AS running WHERE key IS NOT NULL GROUP BY key HAVING count(*) > 1`, schema, exclusive.ProcessInstance)
	type sighting struct {
		at       time.Time // once the read has ended
		key      string
		ids      []int64
		attempts []int16
	}
	watchCtx, stopWatch := context.WithCancel(ctx)
	var (
		reads     int
		sightings []sighting
		watchDone = make(chan struct{})
	)
	go func() {
		defer close(watchDone)
		for watchCtx.Err() == nil {
			rows, err := testPool(t).Query(watchCtx, watchQuery)
			if err != nil {
				return
			}
			var read []sighting
			for rows.Next() {
				var s sighting
				if rows.Scan(&s.key, &s.ids, &s.attempts) == nil {
					read = append(read, s)
				}
			}
			rows.Close()
			for _, s := range read {
				s.at = time.Now()
				sightings = append(sightings, s)
			}
			reads++
		}
	}()

	for _, node := range nodes {
		require.NoError(t, node.client.Start(ctx))
	}
	require.Eventually(t, func() bool {
		states := exclJobStates(ctx, t, schema)
		return states["completed"] == len(jobs)
	}, 2*time.Minute, 20*time.Millisecond, "every job completes")
	stopWatch()
	<-watchDone
	for _, node := range nodes {
		require.NoError(t, node.client.Stop(ctx))
	}

	overlaps := exclusive.Overlaps(rec.timeline.Spans())
	for _, overlap := range overlaps[:min(len(overlaps), 10)] {
		t.Error(overlap)
	}
	require.Empty(t, overlaps, "no two jobs of one key ran at the same time")
	// A job still runs in the database between the end of its work and
	// River's completer writing its outcome, and the engine that ran it may
	// take its key's next job meanwhile (exclusive.Keeper.EndedRunning). So
	// a snapshot may show two running jobs of a key, but of those at most
	// one may have been working, or taken and not started yet, when the
	// read ended (a job working past the read was working at its snapshot:
	// a second one running then was taken while it worked).
	spans := map[exclusive.JobAttempt][]exclusive.Span{}
	for _, span := range rec.timeline.Spans() {
		attempt := exclusive.JobAttempt{JobID: span.JobID, Attempt: span.Attempt}
		spans[attempt] = append(spans[attempt], span)
	}
	// working says whether a job attempt was working at t, or taken and
	// not started yet (no run of it had started by t). A snooze gives its
	// attempt number back, so one attempt can have several runs.
	working := func(attempt exclusive.JobAttempt, t time.Time) bool {
		started := false
		for _, span := range spans[attempt] {
			if !span.Start.After(t) {
				started = true
				if !span.End.Before(t) {
					return true
				}
			}
		}
		return !started
	}
	var unended int
	for _, s := range sightings {
		live := 0
		for i, id := range s.ids {
			if working(exclusive.JobAttempt{JobID: id, Attempt: int(s.attempts[i])}, s.at) {
				live++
			}
		}
		if live > 1 {
			unended++
			if unended <= 10 {
				t.Errorf("key %s: a snapshot read until %s shows jobs %v running, %d of them working or not yet started then", s.key, s.at.Format(time.StampMicro), s.ids, live)
			}
		}
	}
	require.Zero(t, unended, "no snapshot shows two running jobs of one key whose work had not ended")
	require.Positive(t, reads)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for id, n := range rec.finished {
		require.Equal(t, 1, n, "job %d finished %d times", id, n)
	}
	t.Logf("%d jobs over %d keys on %d nodes: %d failures, %d snoozes; %d watcher reads, %d showing a key's ended job still running beside its next, 0 overlaps",
		len(jobs), numKeys, numNodes, rec.failures.Load(), rec.snoozes.Load(), reads, len(sightings))
}

// TestExclusiveMechanismsRefuseToMix checks that clients of two exclusive
// mechanisms never work one schema together: they would not exclude each
// other. A running-row client refuses to start on a schema that does not
// record its mechanism (none recorded means the lock table), and a
// lock-table client on one that records the running row; each error names
// both mechanisms.
func TestExclusiveMechanismsRefuseToMix(t *testing.T) {
	ctx := context.Background()
	schema := exclSchema(t)
	rec := newExclRecorder(exclusive.ProcessInstance)

	running := newExclNode(t, schema, rec, exclNodeOpts{scope: exclusive.ProcessInstance, maxWorkers: 1, poolConns: 2, poll: time.Second})
	running.engine.config.ExclusiveMechanism = exclusive.RunningRow // the record says the lock table
	err := running.client.Start(ctx)
	require.ErrorIs(t, err, exclusive.ErrMechanismMismatch)
	require.ErrorContains(t, err, "Config.ExclusiveMechanism is running-row")
	require.ErrorContains(t, err, "records lock-table")

	require.NoError(t, running.engine.SetExclusiveMechanism(ctx, exclusive.RunningRow))
	lockTable := newExclNode(t, schema, rec, exclNodeOpts{scope: exclusive.ProcessInstance, maxWorkers: 1, poolConns: 2, poll: time.Second})
	err = lockTable.client.Start(ctx)
	require.ErrorIs(t, err, exclusive.ErrMechanismMismatch)
	require.ErrorContains(t, err, "Config.ExclusiveMechanism is lock-table")

	// With the record, the running-row client starts.
	again := newExclNode(t, schema, rec, exclNodeOpts{scope: exclusive.ProcessInstance, mechanism: exclusive.RunningRow, maxWorkers: 1, poolConns: 2, poll: time.Second})
	require.NoError(t, again.client.Start(ctx))
	require.NoError(t, again.client.Stop(ctx))
}

// TestExclusiveRunningRowManagement checks that the management reads agree
// with the running-row mechanism: with a job of a key at work, the locks
// listing (ExclusiveLocks, ExclusiveLocksPage) shows the key held by that
// running job, and ExclusiveWait of the key's next job says it waits for it.
func TestExclusiveRunningRowManagement(t *testing.T) {
	ctx := context.Background()
	schema := exclSchema(t)
	rec := newExclRecorder(exclusive.ProcessInstance)
	node := newExclNode(t, schema, rec, exclNodeOpts{
		scope: exclusive.ProcessInstance, mechanism: exclusive.RunningRow, maxWorkers: 4, poolConns: 4,
		poll: 50 * time.Millisecond, cooldown: time.Millisecond,
	})
	insertExcl(ctx, t, node.client, []exclArgs{
		{Instance: "pi-m", SleepMicros: 3_000_000},
		{Instance: "pi-m", SleepMicros: 1},
	})
	require.NoError(t, node.client.Start(ctx))
	defer func() { require.NoError(t, node.client.StopAndCancel(ctx)) }()

	var locks []*ExclusiveLock
	require.Eventually(t, func() bool {
		var err error
		locks, err = node.engine.ExclusiveLocks(ctx)
		require.NoError(t, err)
		return len(locks) == 1
	}, 30*time.Second, 10*time.Millisecond)
	holder := locks[0]
	require.Equal(t, "pi-m", holder.Key)
	require.False(t, holder.Stale)
	require.Equal(t, rivertype.JobStateRunning, holder.HolderState)

	page, err := node.engine.ExclusiveLocksPage(ctx, "", 10)
	require.NoError(t, err)
	require.Len(t, page, 1)
	require.Equal(t, holder.JobID, page[0].JobID)

	var next int64
	require.NoError(t, testPool(t).QueryRow(ctx, fmt.Sprintf("SELECT id FROM %s.river_job WHERE id <> $1", schema), holder.JobID).Scan(&next))
	wait, err := node.engine.ExclusiveWait(ctx, next)
	require.NoError(t, err)
	require.True(t, wait.Waiting, "the next job waits: %v", wait)
	require.Equal(t, holder.JobID, wait.Holder.JobID)
	require.Equal(t, "pi-m", wait.Key)
}
