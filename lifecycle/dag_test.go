package lifecycle_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/lifecycle"
)

// bigVariant says whether the acceptance-size variants run
// (RIVERBPMN_LIFECYCLE_BIG=1); the normal suite runs smaller ones.
func bigVariant() bool { return os.Getenv("RIVERBPMN_LIFECYCLE_BIG") != "" }

// dag is a random DAG: prereqs[i] are indexes of earlier jobs.
type dag struct {
	levels  [][]int
	prereqs [][]int
	failing []bool
	sink    int
}

// randomDAG builds n jobs in levels; job 0 is a hub with maxFanOut
// dependents, every 40th job has a fan-in of up to maxFanIn, others 0-4,
// about 5% of the first three levels fail once, and the last job (the sink) depends on maxFanIn jobs
// of the last levels.
func randomDAG(seed uint64, n, levels, maxFanIn, maxFanOut int) *dag {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	d := &dag{prereqs: make([][]int, n), failing: make([]bool, n), sink: n - 1}
	per := (n - 1) / levels
	fanOut := make([]int, n)
	for l := range levels {
		var level []int
		end := (l + 1) * per
		if l == levels-1 {
			end = n - 1
		}
		for i := l * per; i < end; i++ {
			level = append(level, i)
		}
		d.levels = append(d.levels, level)
	}
	d.levels = append(d.levels, []int{n - 1})
	add := func(job, pre int) bool {
		if fanOut[pre] >= maxFanOut || slices.Contains(d.prereqs[job], pre) {
			return false
		}
		d.prereqs[job] = append(d.prereqs[job], pre)
		fanOut[pre]++
		return true
	}
	for l := 1; l < len(d.levels); l++ {
		earlier := l * per
		for _, job := range d.levels[l] {
			k := r.IntN(5)
			if job%40 == 0 || job == d.sink {
				k = maxFanIn
			}
			k = min(k, earlier)
			lo := 0
			if job == d.sink {
				lo = max(0, earlier-3*per) // the last levels: it completes late
				k = min(k, earlier-lo)
			}
			for tries := 0; len(d.prereqs[job]) < k && tries < 20*k; tries++ {
				add(job, lo+r.IntN(earlier-lo))
			}
			if fanOut[0] < maxFanOut && job != d.sink {
				add(job, 0)
			}
		}
	}
	// Jobs fail once in the first levels only: River does not wake a
	// producer for a retry, so each retry waits for the 10 s poll.
	for l := 0; l < min(3, len(d.levels)-1); l++ {
		for _, i := range d.levels[l] {
			d.failing[i] = i != 0 && r.IntN(20) == 0
		}
	}
	return d
}

func TestDAGWorkedByFourClients(t *testing.T) {
	t.Parallel()
	n, levels, fanIn, fanOut := 300, 6, 60, 60
	timeout := 120 * time.Second
	if bigVariant() {
		n, levels, fanIn, fanOut = 2000, 20, 500, 500
		timeout = 5 * time.Minute
	}
	ctx := context.Background()
	f := setup(t)
	d := randomDAG(uint64(time.Now().UnixNano()), n, levels, fanIn, fanOut)
	rec := newRecorder()
	f.startClients(t, 4, rec, 5, time.Minute) // a prompt start was woken, not polled

	// Insert level by level while the clients work: prerequisites complete
	// while their dependents are inserted.
	ids := make([]int64, n)
	for _, level := range d.levels {
		params := make([]river.InsertManyParams, len(level))
		for k, job := range level {
			pre := make([]int64, len(d.prereqs[job]))
			for m, p := range d.prereqs[job] {
				pre[m] = ids[p]
			}
			params[k] = river.InsertManyParams{
				Args:       lcArgs{Name: fmt.Sprint(job), FailOnce: d.failing[job]},
				InsertOpts: insertOpts(t, "", lifecycle.Opts{DependsOn: pre}),
			}
		}
		res, err := f.client.InsertMany(ctx, params)
		require.NoError(t, err)
		for k, r := range res {
			ids[level[k]] = r.Job.ID
		}
	}
	maxIn, maxOut := 0, map[int]int{}
	for job := range n {
		maxIn = max(maxIn, len(d.prereqs[job]))
		for _, p := range d.prereqs[job] {
			maxOut[p]++
		}
	}
	t.Logf("DAG: %d jobs, max fan-in %d, max fan-out %d", n, maxIn, slices.Max(mapValues(maxOut)))

	// Wait for every job to complete.
	deadline := time.Now().Add(timeout)
	table := pgx.Identifier{f.schema, "river_job"}.Sanitize()
	for {
		var done int
		require.NoError(t, f.pool.QueryRow(ctx, fmt.Sprintf(`SELECT count(*) FROM %s WHERE state = 'completed'`, table)).Scan(&done))
		if done == n {
			break
		}
		if time.Now().After(deadline) {
			rows, err := f.pool.Query(ctx, fmt.Sprintf(`SELECT id, state, metadata FROM %s WHERE state <> 'completed' ORDER BY id LIMIT 20`, table))
			require.NoError(t, err)
			for rows.Next() {
				var (
					id       int64
					state    string
					metadata []byte
				)
				require.NoError(t, rows.Scan(&id, &state, &metadata))
				p, _ := f.engine.Lifecycle().Dependencies(ctx, id)
				t.Logf("job %d %s %s progress %+v", id, state, metadata, p)
			}
			t.Fatalf("%d of %d jobs completed before the timeout", done, n)
		}
		time.Sleep(100 * time.Millisecond)
	}
	finalized := map[int64]time.Time{}
	rows, err := f.pool.Query(ctx, fmt.Sprintf(`SELECT id, finalized_at FROM %s`, table))
	require.NoError(t, err)
	for rows.Next() {
		var (
			id int64
			at time.Time
		)
		require.NoError(t, rows.Scan(&id, &at))
		finalized[id] = at
	}
	require.NoError(t, rows.Err())

	// The timeline: every job succeeded once; no execution started before
	// every prerequisite's successful execution ended (and River recorded
	// it completed).
	rec.mu.Lock()
	defer rec.mu.Unlock()
	var worstWake time.Duration
	for job := range n {
		id := ids[job]
		require.Equal(t, 1, rec.successes[id], "job %d (%d) succeeded %d times", job, id, rec.successes[id])
		if d.failing[job] {
			require.Len(t, rec.starts[id], 2, "job %d fails once", job)
		}
		first := rec.starts[id][0]
		var lastPre time.Time
		for _, p := range d.prereqs[job] {
			pid := ids[p]
			require.False(t, first.Before(rec.ends[pid]), "job %d started at %s before prerequisite %d ended at %s", id, first, pid, rec.ends[pid])
			require.False(t, first.Before(finalized[pid]), "job %d started before prerequisite %d was completed", id, pid)
			if rec.ends[pid].After(lastPre) {
				lastPre = rec.ends[pid]
			}
		}
		if len(d.prereqs[job]) > 0 && job != d.sink {
			worstWake = max(worstWake, first.Sub(lastPre))
		}
	}
	sinkID := ids[d.sink]
	var sinkLastPre time.Time
	for _, p := range d.prereqs[d.sink] {
		if e := rec.ends[ids[p]]; e.After(sinkLastPre) {
			sinkLastPre = e
		}
	}
	sinkWake := rec.starts[sinkID][0].Sub(sinkLastPre)
	t.Logf("sink (fan-in %d) started %s after its last prerequisite's work ended (poll interval 1 min); worst over all jobs %s",
		len(d.prereqs[d.sink]), sinkWake, worstWake)
	// Woken, the sink starts within River's completer delay plus a fetch
	// (about 0.4 s here; 1.9 s seen on a loaded machine); polled, it would
	// wait for a poll, up to a minute: a third of it leaves load its room.
	require.Less(t, sinkWake, 20*time.Second, "the last job was woken, not polled")
	p, err := f.engine.Lifecycle().Dependencies(ctx, sinkID)
	require.NoError(t, err)
	require.Equal(t, p.Total, p.Done)
	require.Equal(t, len(d.prereqs[d.sink]), p.Total)
}

func mapValues(m map[int]int) []int {
	var out []int
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// A prerequisite discarded after its retries keeps its dependents held
// (blocked, never run); an operator's retry that completes releases the
// chain.
func TestDiscardedPrerequisiteBlocksUntilRetried(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := setup(t)
	rec := newRecorder()
	rec.setFailing("bad", true)
	clients := f.startClients(t, 1, rec, 2, 500*time.Millisecond) // retries wait for a poll

	bad := f.insert(t, lcArgs{Name: "bad"}, lifecycle.Opts{})
	mid := f.insert(t, lcArgs{Name: "mid"}, lifecycle.Opts{DependsOn: []int64{bad.ID}})
	last := f.insert(t, lcArgs{Name: "last"}, lifecycle.Opts{DependsOn: []int64{mid.ID}})
	waitState(t, f, bad.ID, rivertype.JobStateDiscarded, 20*time.Second)

	p := f.progress(t, mid.ID)
	require.Equal(t, 1, p.Blocked)
	require.Equal(t, "discarded", p.Prerequisites[0].Blocked)
	require.Equal(t, rivertype.JobStatePending, f.job(t, mid.ID).State)
	require.Equal(t, rivertype.JobStatePending, f.job(t, last.ID).State)
	time.Sleep(300 * time.Millisecond)
	rec.mu.Lock()
	require.Empty(t, rec.starts[mid.ID])
	rec.mu.Unlock()

	// The operator fixes the cause and retries the prerequisite.
	rec.setFailing("bad", false)
	_, err := clients[0].JobRetry(ctx, bad.ID)
	require.NoError(t, err)
	waitState(t, f, last.ID, rivertype.JobStateCompleted, 20*time.Second)
	require.Equal(t, 0, f.progress(t, mid.ID).Blocked)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	require.False(t, rec.starts[mid.ID][0].Before(rec.ends[bad.ID]))
	require.False(t, rec.starts[last.ID][0].Before(rec.ends[mid.ID]))
}

func waitState(t *testing.T, f *fixture, id int64, state rivertype.JobState, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for f.job(t, id).State != state {
		require.True(t, time.Now().Before(deadline), "job %d is %s, want %s", id, f.job(t, id).State, state)
		time.Sleep(50 * time.Millisecond)
	}
}

// Fan-in: one job depends on many prerequisites; inserting it and
// completing them (in River-sized batches) stay fast.
func TestFanIn(t *testing.T) {
	t.Parallel()
	n := 2000
	if bigVariant() {
		n = 10000
	}
	ctx := context.Background()
	f := setup(t)
	params := make([]river.InsertManyParams, n)
	for i := range params {
		params[i] = river.InsertManyParams{Args: lcArgs{Name: fmt.Sprint(i)}}
	}
	res, err := f.client.InsertMany(ctx, params)
	require.NoError(t, err)
	ids := make([]int64, n)
	for i, r := range res {
		ids[i] = r.Job.ID
	}
	start := time.Now()
	dep := f.insert(t, lcArgs{Name: "dep"}, lifecycle.Opts{DependsOn: ids})
	insertTook := time.Since(start)
	require.Equal(t, rivertype.JobStatePending, dep.State)

	start = time.Now()
	var lastBatch time.Duration
	for i := 0; i < n; i += 1000 {
		batchStart := time.Now()
		f.complete(t, ids[i:min(i+1000, n)]...)
		lastBatch = time.Since(batchStart)
		if i+1000 < n {
			require.Equal(t, rivertype.JobStatePending, f.job(t, dep.ID).State)
		}
	}
	completeTook := time.Since(start)
	require.Equal(t, rivertype.JobStateAvailable, f.job(t, dep.ID).State)
	t.Logf("fan-in %d: insert of the dependent %s; completing the prerequisites in batches of 1000 %s (last batch, with the release, %s)",
		n, insertTook, completeTook, lastBatch)
}
