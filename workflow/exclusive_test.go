package workflow

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/exclusive"
	"github.com/riverbpmn/riverbpmn/internal/longtest"
)

// exclStressResult is what a stress run observed.
type exclStressResult struct {
	rec      *exclRecorder
	overlaps []exclusive.Overlap
	jobs     int
	elapsed  time.Duration
}

// runExclusiveStress is the exclusive jobs' acceptance workload: 4 nodes (each its
// own pool, engine and River client) x MaxWorkers 20 on one queue of one
// schema; 200 instances x 20 jobs of 0-5 ms random work in random order,
// some inserting a follow-up of their instance, some failing once, snoozing
// once or cancelling themselves, a few non-exclusive ones, and 100 jobs of
// no process instance; one node stopped (StopAndCancel) a third of the way
// through. scope is what the engines enforce; the timeline is always checked
// against the process-instance rule.
//
// batches, when given, are the nodes' Config.ExclusiveBatch in turn (say 5, 0:
// nodes 0 and 2 take runs, 1 and 3 do not).
func runExclusiveStress(t *testing.T, scope exclusive.Scope, batches ...int) *exclStressResult {
	t.Helper()
	ctx := context.Background()
	schema := exclSchema(t)
	rec := newExclRecorder(exclusive.ProcessInstance)

	const (
		numNodes     = 4
		maxWorkers   = 20
		numInstances = 200
		jobsPer      = 20
		keyless      = 100
	)
	nodes := make([]*exclNode, numNodes)
	for i := range nodes {
		batch := 0
		if len(batches) > 0 {
			batch = batches[i%len(batches)]
		}
		nodes[i] = newExclNode(t, schema, rec, exclNodeOpts{
			scope: scope, maxWorkers: maxWorkers, poolConns: 6,
			poll: 50 * time.Millisecond, cooldown: 5 * time.Millisecond, batch: batch,
		})
	}

	rng := rand.New(rand.NewPCG(6, 6)) //nolint:gosec // reproducible test data
	var jobs []exclArgs
	for i := range numInstances {
		for j := range jobsPer {
			args := exclArgs{Instance: fmt.Sprintf("pi-%03d", i), SleepMicros: rng.IntN(5001)}
			switch r := rng.Float64(); {
			case r < 0.05:
				args.FailOnce = true
			case r < 0.07:
				args.SnoozeOnce = true
			case r < 0.08:
				args.Cancel = true
			case r < 0.11:
				args.NonExclusive = true
			}
			args.FollowUp = j%7 == 3
			jobs = append(jobs, args)
		}
	}
	for range keyless {
		jobs = append(jobs, exclArgs{SleepMicros: rng.IntN(5001)})
	}
	rng.Shuffle(len(jobs), func(i, j int) { jobs[i], jobs[j] = jobs[j], jobs[i] })
	insertExcl(ctx, t, nodes[0].client, jobs)

	start := time.Now()
	for _, node := range nodes {
		require.NoError(t, node.client.Start(ctx))
	}
	stopped := make(chan error, 1)
	require.Eventually(t, func() bool { return rec.finishedCount.Load() >= int64(len(jobs)/3) }, time.Minute, time.Millisecond)
	go func() { stopped <- nodes[numNodes-1].client.StopAndCancel(ctx) }()

	// Done when every job, follow-ups included, is finalized.
	assert.Eventually(t, func() bool {
		states := exclJobStates(ctx, t, schema)
		return states["completed"]+states["cancelled"] == len(jobs)+int(rec.followUps.Load()) &&
			states["completed"]+states["cancelled"] == sumValues(states)
	}, time.Minute, 20*time.Millisecond, "every job finishes")
	if t.Failed() {
		t.Fatalf("states: %v, follow-ups %d, finished %d", exclJobStates(ctx, t, schema), rec.followUps.Load(), rec.finishedCount.Load())
	}
	elapsed := time.Since(start)
	require.NoError(t, <-stopped)
	for _, node := range nodes[:numNodes-1] {
		require.NoError(t, node.client.Stop(ctx))
	}
	var carried, runJobs uint64
	for _, node := range nodes {
		carried += node.engine.exclusive.Carried()
		runJobs += node.engine.exclusive.RunJobs()
	}

	// No job finished twice, and every job finished (by its work, not by
	// someone else's state change).
	total := len(jobs) + int(rec.followUps.Load())
	rec.mu.Lock()
	defer rec.mu.Unlock()
	require.Len(t, rec.finished, total, "every job's work finished it")
	for id, n := range rec.finished {
		require.Equal(t, 1, n, "job %d finished %d times", id, n)
	}
	require.Zero(t, exclJobStates(ctx, t, schema)["discarded"])
	require.Zero(t, exclHeldLockCount(ctx, t, schema), "every key was given back")
	t.Logf("scope %s, batches %v: %d jobs (%d follow-ups, %d failures, %d snoozes, %d runs interrupted by the stop) in %s; %d keys given back by a fetch (deferred releases); %d jobs fetched in runs",
		scope, batches, total, rec.followUps.Load(), rec.failures.Load(), rec.snoozes.Load(), rec.interruptedRuns.Load(), elapsed.Round(time.Millisecond), carried, runJobs)
	if slices.ContainsFunc(batches, func(b int) bool { return b > 1 }) {
		require.NotZero(t, runJobs, "some jobs were fetched in runs")
	}
	if scope.Enabled() {
		// Within a key, jobs start their first run in River's order (every
		// client here fetches in River's order), judged by the place each
		// had when it started (a job snoozed or given back by the stop
		// goes behind the key's waiting jobs).
		byKey := map[string][]exclFirstRun{}
		for _, r := range rec.firstRuns {
			if r.key != "" {
				byKey[r.key] = append(byKey[r.key], r)
			}
		}
		pairs := 0
		for key, runs := range byKey {
			slices.SortFunc(runs, func(a, b exclFirstRun) int { return a.start.Compare(b.start) })
			for i := 1; i < len(runs); i++ {
				a, b := runs[i-1], runs[i]
				pairs++
				require.True(t, exclRiverBefore(a, b), "key %s: job %d (priority %d, at %s) started before job %d (priority %d, at %s), which comes first in River's order",
					key, a.jobID, a.priority, a.scheduledAt, b.jobID, b.priority, b.scheduledAt)
			}
		}
		require.Positive(t, pairs)
	}
	if scope.Enabled() {
		// The zero-overlap check below covers keys given back by the
		// next fetch, not only by a statement of their own.
		require.NotZero(t, carried, "some releases were deferred to a fetch")
	}

	return &exclStressResult{rec: rec, overlaps: exclusive.Overlaps(rec.timeline.Spans()), jobs: total, elapsed: elapsed}
}

// exclRiverBefore says whether a comes before b in River's order.
func exclRiverBefore(a, b exclFirstRun) bool {
	if a.priority != b.priority {
		return a.priority < b.priority
	}
	if c := a.scheduledAt.Compare(b.scheduledAt); c != 0 {
		return c < 0
	}
	return a.jobID < b.jobID
}

func sumValues(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// TestExclusiveStress runs the acceptance workload with exclusivity enforced
// (zero overlaps per key, every job finished once) and without (the same
// check finds overlaps, so it can fail).
func TestExclusiveStress(t *testing.T) {
	longtest.Skip(t)
	t.Run("Enforced", func(t *testing.T) {
		res := runExclusiveStress(t, exclusive.ProcessInstance)
		for _, overlap := range res.overlaps[:min(len(res.overlaps), 10)] {
			t.Error(overlap)
		}
		require.Empty(t, res.overlaps, "no two exclusive jobs of one instance ran at the same time")
	})
	t.Run("Batched", func(t *testing.T) {
		// Nodes 0 and 2 take runs of up to 5 jobs of a key
		// (Config.ExclusiveBatch), nodes 1 and 3 one job per key; node 3
		// is stopped midway.
		res := runExclusiveStress(t, exclusive.ProcessInstance, 5, 0)
		for _, overlap := range res.overlaps[:min(len(res.overlaps), 10)] {
			t.Error(overlap)
		}
		require.Empty(t, res.overlaps, "no two exclusive jobs of one instance ran at the same time")
	})
	t.Run("BatchedStopped", func(t *testing.T) {
		// Every node takes runs, and the stopped node gives back the waiting
		// jobs of its runs.
		res := runExclusiveStress(t, exclusive.ProcessInstance, 4)
		for _, overlap := range res.overlaps[:min(len(res.overlaps), 10)] {
			t.Error(overlap)
		}
		require.Empty(t, res.overlaps, "no two exclusive jobs of one instance ran at the same time")
	})
	t.Run("NotEnforced", func(t *testing.T) {
		res := runExclusiveStress(t, exclusive.None)
		t.Logf("without exclusivity: %d overlapping pairs", len(res.overlaps))
		require.NotEmpty(t, res.overlaps, "without exclusivity, jobs of one instance do overlap: the check can fail")
	})
}

// TestExclusiveHierarchy runs two sub-instances of one root, 20 jobs each,
// on one client: with the root scope no two of the 40 jobs overlap; with the
// instance scope the two sub-instances run side by side.
func TestExclusiveHierarchy(t *testing.T) {
	t.Parallel()
	run := func(t *testing.T, scope exclusive.Scope) []exclusive.Overlap {
		t.Helper()
		ctx := context.Background()
		schema := exclSchema(t)
		rec := newExclRecorder(exclusive.RootProcessInstance) // the hierarchy rule
		node := newExclNode(t, schema, rec, exclNodeOpts{
			scope: scope, maxWorkers: 10, poolConns: 4, poll: 50 * time.Millisecond, cooldown: 5 * time.Millisecond,
		})
		var jobs []exclArgs
		for range 20 {
			for _, sub := range []string{"sub-1", "sub-2"} {
				jobs = append(jobs, exclArgs{Instance: sub, Root: "root", SleepMicros: 5000})
			}
		}
		insertExcl(ctx, t, node.client, jobs)
		require.NoError(t, node.client.Start(ctx))
		require.Eventually(t, func() bool { return rec.finishedCount.Load() == int64(len(jobs)) }, 30*time.Second, time.Millisecond)
		require.NoError(t, node.client.Stop(ctx))
		return exclusive.Overlaps(rec.timeline.Spans())
	}

	t.Run("RootScope", func(t *testing.T) {
		t.Parallel()
		overlaps := run(t, exclusive.RootProcessInstance)
		for _, overlap := range overlaps[:min(len(overlaps), 10)] {
			t.Error(overlap)
		}
		require.Empty(t, overlaps, "jobs of two sub-instances of one root never overlap")
	})
	t.Run("InstanceScope", func(t *testing.T) {
		t.Parallel()
		overlaps := run(t, exclusive.ProcessInstance)
		require.NotEmpty(t, overlaps, "with the instance scope, the sub-instances run side by side")
		for _, o := range overlaps {
			require.NotEqual(t, o.First.JobID, o.Second.JobID)
		}
	})
}

// exclGaps returns the pauses between consecutive spans of one key.
func exclGaps(spans []exclusive.Span) []time.Duration {
	slices.SortFunc(spans, func(a, b exclusive.Span) int { return a.Start.Compare(b.Start) })
	var gaps []time.Duration
	for i := 1; i < len(spans); i++ {
		gaps = append(gaps, spans[i].Start.Sub(spans[i-1].End))
	}
	return gaps
}
