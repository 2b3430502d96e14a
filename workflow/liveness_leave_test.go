package workflow

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/diagnose"
	"github.com/riverbpmn/riverbpmn/exclusive"
	"github.com/riverbpmn/riverbpmn/internal/longtest"
	"github.com/riverbpmn/riverbpmn/liveness"
)

// The tests of this file prove, with real worker processes
// (internal/livenessworker, each with the default configuration), that every
// way a client leaves frees its keys within a bound derived from the
// liveness settings, without using an attempt and without two runs of a key
// at once: a stop that gives up, a stall, a silent partition, River's rescuer
// racing the takeover, and a transaction-mode pooler. The crash (SIGKILL)
// is TestLivenessKillWorker's.

// loadAvg returns the machine's load average, for the tests' logs.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	return strings.Join(strings.Fields(string(b))[:3], " ")
}

// requireNextBegins waits, for each run in held, for the next run of its
// key by a worker other than except after from, requires it within bound,
// and returns the longest gap.
func (p *livenessProcs) requireNextBegins(held []exclusive.Span, from time.Time, except string, bound time.Duration) time.Duration {
	t := p.t
	var longest time.Duration
	for _, run := range held {
		var next time.Time
		require.Eventually(t, func() bool {
			var ok bool
			next, ok = p.nextBegin(run.Key, from, except)
			return ok
		}, bound+30*time.Second, 20*time.Millisecond, "no job of %s started after %s", run.Key, from.Format(time.StampMilli))
		gap := next.Sub(from)
		longest = max(longest, gap)
		require.Less(t, gap, bound, "key %s: next job started %s after the client left (bound from the liveness defaults)", run.Key, gap)
	}
	return longest
}

// TestLivenessStopGivesUp is a rolling deploy whose grace period is shorter
// than a job: a worker gets SIGTERM while it runs jobs (one of them an
// R0/PT1S job whose first run lasts a minute), its client.Stop gives up
// after 1 s, and the process exits with the jobs still running. Its session
// was left open (a stop with runs under way does not close it), so the exit
// ends it as a crash would: the next job of each of its keys starts on
// another worker within the crash bound, `why` says the client is gone while
// the job still reads running, no attempt is used, and no key overlaps.
func TestLivenessStopGivesUp(t *testing.T) {
	longtest.Skip(t)
	ctx := context.Background()
	schema, inserter := livenessSetup(t)
	procs := newLivenessProcs(t, schema)
	procs.args = []string{"-stop-timeout", "1s"}
	workers := []string{procs.start(), procs.start(), procs.start()}

	survivor, err := inserter.Insert(ctx, livenessArgs{Instance: "survivor", SleepMillis: 100, LongFirstRun: true, RetryCycle: "R0/PT1S"}, nil)
	require.NoError(t, err)
	insertHot(ctx, t, inserter, 50, 8)
	victim := procs.runnerOf(workers, map[int64]bool{survivor.Job.ID: true}, 1, 30*time.Second)
	procs.waitOpenRuns(victim, 2, 30*time.Second)

	termAt := time.Now()
	gone, held, exitErr := procs.end(victim, syscall.SIGTERM, 30*time.Second)
	var exitCode *exec.ExitError
	require.ErrorAs(t, exitErr, &exitCode)
	require.Equal(t, 3, exitCode.ExitCode(), "the worker's stop gave up (status 3) with jobs running")
	t.Logf("%s: SIGTERM, stop gave up, exited %s later with %d runs under way", victim, gone.Sub(termAt).Round(time.Millisecond), len(held))

	// Right after the exit, before the takeover delay has passed, the job
	// reads running and `why` says its client is gone.
	engine, err := NewEngine(testPool(t), &Config{Schema: schema})
	require.NoError(t, err)
	locks, err := engine.ExclusiveLocks(ctx)
	require.NoError(t, err)
	d, err := diagnose.Diagnose(ctx, testPool(t), schema, survivor.Job.ID, diagnose.Exclusive{})
	require.NoError(t, err)
	if d.State == "running" {
		for _, l := range locks {
			if l.JobID == survivor.Job.ID {
				require.True(t, l.ClientGone, "the locks listing says the holder is gone: %v", l)
				t.Logf("locks: %v", l)
			}
		}
		require.True(t, d.Has(diagnose.ClientGone), "why names the gone client: %+v", d.Reasons)
		for _, r := range d.Reasons {
			if r.Code == diagnose.ClientGone {
				require.Equal(t, victim, r.HolderClientID)
				t.Logf("why: %s %s", r.Text, r.Fix)
			}
		}
	} else {
		t.Logf("job %d was already given back when why looked (%s)", survivor.Job.ID, d.State)
	}

	longest := procs.requireNextBegins(held, gone, victim, killGapBound())
	waitAllFinished(ctx, t, schema, 3*time.Minute)
	procs.stopAll()
	t.Logf("longest gap between the exit and the next run of a key it held: %s (bound %s); load %s", longest, killGapBound(), loadAvg())

	overlaps := exclusive.Overlaps(procs.allSpans())
	require.Empty(t, overlaps, "runs of one key overlapped: %v", overlaps)
	_, _, _, errs := livenessJob(ctx, t, schema, survivor.Job.ID)
	require.Contains(t, errs, "client "+victim+" ", "the error entry names the client that left")
	requireNoAttemptUsed(ctx, t, schema)
	require.Zero(t, exclHeldLockCount(ctx, t, schema), "an exclusive key is still held")
}

// TestLivenessStall freezes a worker (SIGSTOP, standing in for a GC pause,
// CPU starvation or a paused VM) for 8 s (20 s with
// RIVERBPMN_LIVENESS_LONG), well past FenceAfter and below StallAfter,
// while it runs 12 s jobs; its database connections stay up. Thawed
// (SIGCONT), it keeps its jobs: each of its runs ends "done" on that
// worker, at attempt 1, with no error entry (nothing was given back), and no
// other worker started a run of its keys meanwhile.
func TestLivenessStall(t *testing.T) {
	longtest.Skip(t)
	ctx := context.Background()
	stall := 8 * time.Second
	if livenessLong() {
		stall = 20 * time.Second
	}
	require.Less(t, stall, liveness.DefaultStallAfter-liveness.DefaultFenceAfter, "the stall stays within the bound")
	schema, inserter := livenessSetup(t)
	procs := newLivenessProcs(t, schema)
	workers := []string{procs.start(), procs.start(), procs.start()}
	insertHot(ctx, t, inserter, 30, 8)
	long := insertLong(ctx, t, inserter, 10, 12_000)
	victim := procs.runnerOf(workers, long, 3, 30*time.Second)

	procs.signal(victim, syscall.SIGSTOP)
	stoppedAt := time.Now()
	held := procs.openRuns(victim)
	time.Sleep(stall)
	procs.signal(victim, syscall.SIGCONT)
	t.Logf("%s frozen for %s with %d runs under way", victim, time.Since(stoppedAt).Round(time.Millisecond), len(held))

	for _, run := range held {
		require.Eventually(t, func() bool {
			_, ok := procs.endOf(victim, run.JobID, run.Attempt)
			return ok
		}, time.Minute, 10*time.Millisecond, "the stalled worker ends its run of job %d", run.JobID)
	}
	waitAllFinished(ctx, t, schema, 3*time.Minute)
	procs.stopAll()

	overlaps := exclusive.Overlaps(procs.allSpans())
	require.Empty(t, overlaps, "runs of one key overlapped: %v", overlaps)
	for _, run := range held {
		state, attempt, _, errs := livenessJob(ctx, t, schema, run.JobID)
		require.Equal(t, "completed", state, "job %d", run.JobID)
		require.Equal(t, 1, attempt, "job %d", run.JobID)
		require.Empty(t, errs, "job %d: the stalled worker kept its run (nothing given back, nothing cancelled)", run.JobID)
		for id, spans := range procs.begins {
			if id == victim {
				continue
			}
			for _, s := range spans {
				require.NotEqual(t, run.JobID, s.JobID, "job %d also ran on %s", run.JobID, id)
			}
		}
	}
	requireNoAttemptUsed(ctx, t, schema)
	t.Logf("stall of %s: %d runs kept and completed by the stalled worker; load %s", stall, len(held), loadAvg())
}

// TestLivenessStallPastBound freezes a worker (SIGSTOP) for StallAfter +
// 8 s while it runs 60 s jobs. Past StallAfter, a live worker's ping
// declares its session dead and ends its backend, and the leader gives its
// jobs back: each key it held runs again on another worker within
// StallAfter + killGapBound of the freeze, no attempt used. Thawed, the
// frozen worker finds its connection ended and fences itself: each of its
// runs is cancelled within CancelGrace (and slack) of the thaw. Those runs
// overlap the new ones only by the time the frozen process was not
// running; every other key's runs never overlap.
func TestLivenessStallPastBound(t *testing.T) {
	longtest.Skip(t)
	if !livenessLong() {
		t.Skip("a 38 s freeze: runs with RIVERBPMN_LIVENESS_LONG=1")
	}
	ctx := context.Background()
	d := liveness.Config{}.WithDefaults()
	stall := d.StallAfter + 8*time.Second
	schema, inserter := livenessSetup(t)
	procs := newLivenessProcs(t, schema)
	workers := []string{procs.start(), procs.start(), procs.start()}
	long := map[int64]bool{}
	for i := range 10 {
		instance := fmt.Sprintf("long-%d", i)
		res, err := inserter.Insert(ctx, livenessArgs{Instance: instance, SleepMillis: 100, LongFirstRun: true}, nil)
		require.NoError(t, err)
		long[res.Job.ID] = true
		_, err = inserter.Insert(ctx, livenessArgs{Instance: instance, SleepMillis: 100}, nil)
		require.NoError(t, err)
	}
	victim := procs.busiest(workers, 2, 30*time.Second)
	procs.signal(victim, syscall.SIGSTOP)
	stoppedAt := time.Now()
	held := procs.openRuns(victim)
	bound := d.StallAfter + killGapBound()
	longest := procs.requireNextBegins(held, stoppedAt, victim, bound)
	time.Sleep(time.Until(stoppedAt.Add(stall)))
	procs.signal(victim, syscall.SIGCONT)
	thawedAt := time.Now()
	for _, run := range held {
		require.Eventually(t, func() bool {
			_, ok := procs.endOf(victim, run.JobID, run.Attempt)
			return ok
		}, time.Minute, 10*time.Millisecond)
		end, _ := procs.endOf(victim, run.JobID, run.Attempt)
		require.Less(t, end.Sub(thawedAt), d.CancelGrace+3*time.Second, "the thawed worker stops its run of job %d", run.JobID)
	}
	waitAllFinished(ctx, t, schema, 3*time.Minute)
	procs.stopAll()
	var others []exclusive.Span
	heldKeys := map[string]bool{}
	for _, run := range held {
		heldKeys[run.Key] = true
	}
	for _, s := range procs.allSpans() {
		if !heldKeys[s.Key] {
			others = append(others, s)
		}
	}
	require.Empty(t, exclusive.Overlaps(others), "runs of keys the frozen worker did not hold overlapped")
	requireNoAttemptUsed(ctx, t, schema)
	t.Logf("frozen %s (StallAfter %s) with %d runs: keys run again within %s (bound %s); load %s", stall, d.StallAfter, len(held), longest, bound, loadAvg())
}

// cutProxy is a TCP proxy to PostgreSQL that can go silent: once cut, it
// forwards nothing in either direction and closes nothing (bytes are read
// and dropped, so neither side's TCP stack sees an error), as a network
// that silently stopped delivering does. New connections are accepted and
// stay silent too.
type cutProxy struct {
	ln     net.Listener
	target string
	cut    atomic.Bool
	wg     sync.WaitGroup
	mu     sync.Mutex
	conns  []net.Conn
}

func newCutProxy(t *testing.T, target string) *cutProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &cutProxy{ln: ln, target: target}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(p.close)
	return p
}

func (p *cutProxy) accept() {
	defer p.wg.Done()
	for {
		down, err := p.ln.Accept()
		if err != nil {
			return
		}
		up, err := net.Dial("tcp", p.target)
		if err != nil {
			_ = down.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, down, up)
		p.mu.Unlock()
		p.wg.Add(2)
		go p.pipe(down, up)
		go p.pipe(up, down)
	}
}

// pipe copies from src to dst until src fails, dropping what it reads once
// the proxy is cut. A side that closes while cut is not told to the other.
func (p *cutProxy) pipe(src, dst net.Conn) {
	defer p.wg.Done()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 && !p.cut.Load() {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			if !p.cut.Load() {
				_ = dst.Close()
			}
			return
		}
	}
}

func (p *cutProxy) close() {
	_ = p.ln.Close()
	p.mu.Lock()
	for _, c := range p.conns {
		_ = c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

// partitionBound is how long after a silent partition the next run of a
// key the cut-off worker held may start: the database cannot tell the
// client is gone until its session has had no ping for StallAfter (TCP
// keepalives are answered by the network in between, here the proxy), then
// a live client's ping (PingInterval) declares it dead and ends its
// backend, the takeover waits TakeoverAfter and runs on the leader's next
// check (CheckInterval); then River's fetch poll, a re-election if the
// cut-off worker led, and slack for a loaded machine, as killGapBound.
func partitionBound() time.Duration {
	d := liveness.Config{}.WithDefaults()
	return d.StallAfter + killGapBound()
}

// TestLivenessSilentPartition cuts one of 3 workers off the database
// silently (every connection of it goes through a proxy that stops
// forwarding without closing anything) while it runs jobs. The cut-off
// worker fences itself within FenceAfter (it cancels its runs), the others
// declare its session stalled after StallAfter and take its jobs over:
// every key it held runs again within partitionBound, after its run ended
// on the cut-off worker, and no attempt is used.
func TestLivenessSilentPartition(t *testing.T) {
	longtest.Skip(t)
	ctx := context.Background()
	schema, inserter := livenessSetup(t)
	procs := newLivenessProcs(t, schema)

	dbURL, err := url.Parse(os.Getenv("TEST_DATABASE_URL"))
	require.NoError(t, err)
	proxy := newCutProxy(t, dbURL.Host)
	viaProxy := *dbURL
	viaProxy.Host = proxy.ln.Addr().String()
	procs.url = viaProxy.String()
	victim := procs.start()
	procs.url = ""

	// The worker behind the proxy starts alone and takes long jobs first
	// (with the others already fetching, they could take every long job
	// before it), then the others start and the hot jobs run on all three.
	long := insertLong(ctx, t, inserter, 10, 8000)
	procs.runnerOf([]string{victim}, long, 2, time.Minute)
	procs.start()
	procs.start()
	insertHot(ctx, t, inserter, 30, 8)
	proxy.cut.Store(true)
	cutAt := time.Now()
	held := procs.openRuns(victim)
	t.Logf("cut %s off silently with %d runs under way", victim, len(held))

	d := liveness.Config{}.WithDefaults()
	fenceBound := d.FenceAfter + d.CancelGrace + 3*time.Second // slack for load
	for _, run := range held {
		require.Eventually(t, func() bool {
			_, ok := procs.endOf(victim, run.JobID, run.Attempt)
			return ok
		}, time.Minute, 10*time.Millisecond, "the cut-off worker stops its run of job %d", run.JobID)
		end, _ := procs.endOf(victim, run.JobID, run.Attempt)
		if long[run.JobID] {
			require.Less(t, end.Sub(cutAt), fenceBound, "the cut-off worker fenced its long run of job %d", run.JobID)
		}
	}
	longest := procs.requireNextBegins(onlyLong(held, long), cutAt, victim, partitionBound())
	waitAllFinished(ctx, t, schema, 3*time.Minute)
	procs.kill(victim)
	procs.stopAll()
	t.Logf("longest gap between the cut and the next run of a long job's key it held: %s (bound %s); load %s", longest, partitionBound(), loadAvg())

	overlaps := exclusive.Overlaps(procs.allSpans())
	require.Empty(t, overlaps, "runs of one key overlapped: %v", overlaps)
	for _, run := range held {
		end, _ := procs.endOf(victim, run.JobID, run.Attempt)
		if next, ok := procs.nextBegin(run.Key, cutAt, victim); ok {
			require.True(t, end.Before(next), "key %s: the cut-off worker ended its run at %s, another started one at %s",
				run.Key, end.Format(time.StampMicro), next.Format(time.StampMicro))
		}
		if long[run.JobID] {
			_, _, _, errs := livenessJob(ctx, t, schema, run.JobID)
			require.Contains(t, errs, "client "+victim+" ", "the long run of job %d was given back", run.JobID)
		}
	}
	requireNoAttemptUsed(ctx, t, schema)
}

// onlyLong returns the runs of held whose job is a long one.
func onlyLong(held []exclusive.Span, long map[int64]bool) []exclusive.Span {
	var out []exclusive.Span
	for _, run := range held {
		if long[run.JobID] {
			out = append(out, run)
		}
	}
	return out
}

// TestLivenessRescuerSkipsDeadClients runs workers with
// RescueStuckJobsAfter = 1 s, shorter than the takeover (about 4 s), and
// kills the leader while it runs R0/PT1S jobs (one execution allowed)
// whose first runs are stuck (a minute, deaf to their 300 ms timeout). The
// new leader's rescuer runs within a second of its election and finds them
// stuck; River alone would rescue them, using their one execution
// (discarded). They belong to a dead session, so the rescuer leaves them to
// the takeover, and every one completes at attempt 1.
func TestLivenessRescuerSkipsDeadClients(t *testing.T) {
	longtest.Skip(t)
	ctx := context.Background()
	schema, inserter := livenessSetup(t)
	procs := newLivenessProcs(t, schema)
	procs.args = []string{"-rescue-after", "1s"}
	victim := procs.start()
	var ids []int64
	for i := range 4 {
		res, err := inserter.Insert(ctx, livenessArgs{
			Instance: fmt.Sprintf("r0-%d", i), SleepMillis: 100, LongFirstRun: true, StuckFirstRun: true, TimeoutMillis: 300, RetryCycle: "R0/PT1S",
		}, nil)
		require.NoError(t, err)
		ids = append(ids, res.Job.ID)
	}
	procs.waitOpenRuns(victim, len(ids), 30*time.Second)
	require.Eventually(t, func() bool {
		var leader string
		err := testPool(t).QueryRow(ctx, fmt.Sprintf(`SELECT leader_id FROM %s.river_leader`, pgx.Identifier{schema}.Sanitize())).Scan(&leader)
		return err == nil && leader == victim
	}, 30*time.Second, 20*time.Millisecond, "the first worker leads")
	procs.start()
	procs.start()
	time.Sleep(1500 * time.Millisecond) // the runs are stuck for River's rescuer now
	killedAt, held := procs.kill(victim)
	longest := procs.requireNextBegins(held, killedAt, victim, killGapBound())
	waitAllFinished(ctx, t, schema, 2*time.Minute)
	procs.stopAll()
	for _, id := range ids {
		state, attempt, _, errs := livenessJob(ctx, t, schema, id)
		require.Equal(t, "completed", state, "job %d (R0/PT1S) was not rescued by River: %s", id, errs)
		require.Equal(t, 1, attempt, "job %d", id)
		require.Contains(t, errs, "lost its liveness", "job %d was given back by the takeover", id)
	}
	t.Logf("leader killed with %d stuck R0 runs; all given back by the takeover (longest gap %s), none rescued; load %s", len(held), longest, loadAvg())
}
