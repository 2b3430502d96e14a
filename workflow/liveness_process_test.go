package workflow

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdbtest"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/exclusive"
	"github.com/riverbpmn/riverbpmn/internal/longtest"
	"github.com/riverbpmn/riverbpmn/liveness"
)

// The liveness acceptance tests run real worker processes
// (internal/livenessworker, each an engine with the default configuration:
// exclusivity by process instance and liveness, both on by default), kill
// them with SIGKILL or cut their database connections, and check the
// timeline the processes printed. They belong to `make test-long`
// (longtest). Set RIVERBPMN_LIVENESS_LONG=1 for the full sizes (50
// instances x 40 jobs, 20 kills).

// livenessArgs is internal/livenessworker's LivenessArgs.
type livenessArgs struct {
	Instance      string `json:"instance"`
	SleepMillis   int    `json:"sleep_millis"`
	LongFirstRun  bool   `json:"long_first_run,omitempty"`
	StuckFirstRun bool   `json:"stuck_first_run,omitempty"`
	TimeoutMillis int    `json:"timeout_millis,omitempty"`
	RetryCycle    string `json:"retry_cycle,omitempty"`
}

func (livenessArgs) Kind() string { return "liveness_work" }

func (a livenessArgs) JobContext() JobContext {
	return JobContext{ProcessInstanceID: a.Instance, ProcessDefinitionKey: "liveness", RetryCycle: a.RetryCycle}
}

func livenessLong() bool { return os.Getenv("RIVERBPMN_LIVENESS_LONG") != "" }

var (
	livenessWorkerOnce sync.Once
	livenessWorkerPath string
	livenessWorkerErr  error
)

// buildLivenessWorker builds the worker binary once per test run.
func buildLivenessWorker(t *testing.T) string {
	t.Helper()
	livenessWorkerOnce.Do(func() {
		dir, err := os.MkdirTemp("", "livenessworker")
		if err != nil {
			livenessWorkerErr = err
			return
		}
		livenessWorkerPath = filepath.Join(dir, "livenessworker")
		args := []string{"build", "-o", livenessWorkerPath}
		if os.Getenv("RIVERBPMN_LIVENESS_RACE") != "" {
			args = append(args, "-race") // a race makes the worker exit with 66
		}
		args = append(args, "github.com/riverbpmn/riverbpmn/internal/livenessworker")
		out, err := exec.Command("go", args...).CombinedOutput()
		if err != nil {
			livenessWorkerErr = fmt.Errorf("building the worker: %w: %s", err, out)
		}
	})
	require.NoError(t, livenessWorkerErr)
	return livenessWorkerPath
}

// procRun is a run a worker process printed the start of.
type procRun struct {
	jobID   int64
	attempt int
}

// livenessProcs is a set of worker processes on one schema and the timeline
// they printed.
type livenessProcs struct {
	t      *testing.T
	bin    string
	schema string

	mu     sync.Mutex
	spans  []exclusive.Span
	open   map[string]map[procRun]exclusive.Span // worker id -> runs under way
	procs  map[string]*exec.Cmd
	ended  map[string]chan struct{} // closed when the worker's output ends
	exits  map[string]error         // the worker's exit, once ended
	begins map[string][]exclusive.Span
	ends   map[string][]exclusive.Span // worker id -> finished runs
	n      int
	// batch is the workers' ExclusiveBatch.
	batch int
	// url is the workers' database URL (TEST_DATABASE_URL when empty), and
	// args are more flags for every worker.
	url  string
	args []string
}

func newLivenessProcs(t *testing.T, schema string) *livenessProcs {
	return &livenessProcs{
		t: t, bin: buildLivenessWorker(t), schema: schema,
		open: map[string]map[procRun]exclusive.Span{}, procs: map[string]*exec.Cmd{},
		ended: map[string]chan struct{}{}, begins: map[string][]exclusive.Span{}, ends: map[string][]exclusive.Span{}, exits: map[string]error{},
	}
}

// start starts a worker and waits until its client started.
func (p *livenessProcs) start() string {
	t := p.t
	p.mu.Lock()
	p.n++
	id := fmt.Sprintf("lw%d-%d", p.n, rand.IntN(1_000_000)) //nolint:gosec // test data
	p.mu.Unlock()
	url := p.url
	if url == "" {
		url = os.Getenv("TEST_DATABASE_URL")
	}
	args := append([]string{"-db", url, "-schema", p.schema, "-id", id, "-workers", "10", "-batch", strconv.Itoa(p.batch)}, p.args...)
	cmd := exec.Command(p.bin, args...)
	cmd.Stderr = &prefixWriter{t: t, prefix: id}
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	ready := make(chan struct{})
	ended := make(chan struct{})
	p.mu.Lock()
	p.procs[id] = cmd
	p.open[id] = map[procRun]exclusive.Span{}
	p.ended[id] = ended
	p.mu.Unlock()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-ended })
	go func() {
		defer close(ended)
		scanner := bufio.NewScanner(stdout)
		var once sync.Once
		for scanner.Scan() {
			p.record(id, scanner.Text(), func() { once.Do(func() { close(ready) }) })
		}
		err := cmd.Wait()
		p.mu.Lock()
		p.exits[id] = err
		p.mu.Unlock()
	}()
	select {
	case <-ready:
	case <-ended:
		t.Fatalf("worker %s exited before it was ready", id)
	case <-time.After(60 * time.Second):
		t.Fatalf("worker %s not ready after 60 s", id)
	}
	return id
}

func (p *livenessProcs) record(id, line string, ready func()) {
	fields := strings.Fields(line)
	if len(fields) == 1 && fields[0] == "READY" {
		ready()
		return
	}
	if len(fields) < 5 {
		return
	}
	ns, _ := strconv.ParseInt(fields[1], 10, 64)
	jobID, _ := strconv.ParseInt(fields[2], 10, 64)
	attempt, _ := strconv.Atoi(fields[3])
	at := time.Unix(0, ns)
	run := procRun{jobID, attempt}
	p.mu.Lock()
	defer p.mu.Unlock()
	switch fields[0] {
	case "BEGIN":
		span := exclusive.Span{Key: fields[4], JobID: jobID, Attempt: attempt, Start: at}
		p.open[id][run] = span
		p.begins[id] = append(p.begins[id], span)
	case "END":
		span := p.open[id][run]
		delete(p.open[id], run)
		span.End = at
		p.spans = append(p.spans, span)
		p.ends[id] = append(p.ends[id], span)
	}
}

// openRuns returns the runs worker id has under way.
func (p *livenessProcs) openRuns(id string) []exclusive.Span {
	p.mu.Lock()
	defer p.mu.Unlock()
	var spans []exclusive.Span
	for _, s := range p.open[id] {
		spans = append(spans, s)
	}
	return spans
}

// kill kills worker id with SIGKILL and returns when it was killed and the
// runs it had under way, which end (for the timeline) when its process was
// seen gone: later than they really did, so the overlap check errs on the
// strict side.
func (p *livenessProcs) kill(id string) (time.Time, []exclusive.Span) {
	killedAt := time.Now()
	_, held, _ := p.end(id, syscall.SIGKILL, time.Minute)
	return killedAt, held
}

// end sends sig to worker id, waits (at most timeout) until its process has
// exited, and returns when it was seen gone, the runs it had under way
// (ended then, for the timeline) and how it exited.
func (p *livenessProcs) end(id string, sig syscall.Signal, timeout time.Duration) (time.Time, []exclusive.Span, error) {
	p.mu.Lock()
	cmd, ended := p.procs[id], p.ended[id]
	p.mu.Unlock()
	require.NoError(p.t, cmd.Process.Signal(sig))
	select {
	case <-ended:
	case <-time.After(timeout):
		p.t.Fatalf("worker %s still runs %s after %s", id, timeout, sig)
	}
	gone := time.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	var held []exclusive.Span
	for run, span := range p.open[id] {
		span.End = gone
		p.spans = append(p.spans, span)
		held = append(held, span)
		delete(p.open[id], run)
	}
	delete(p.procs, id)
	return gone, held, p.exits[id]
}

// signal sends sig to worker id's process.
func (p *livenessProcs) signal(id string, sig syscall.Signal) {
	p.mu.Lock()
	cmd := p.procs[id]
	p.mu.Unlock()
	require.NoError(p.t, cmd.Process.Signal(sig))
}

// stopAll stops every worker cleanly (SIGTERM) and waits for them.
func (p *livenessProcs) stopAll() {
	p.mu.Lock()
	waits := map[string]chan struct{}{}
	for id, cmd := range p.procs {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		waits[id] = p.ended[id]
	}
	p.mu.Unlock()
	for id, w := range waits {
		select {
		case <-w:
		case <-time.After(30 * time.Second):
			p.t.Fatalf("worker %s did not stop within 30 s of SIGTERM", id)
		}
		p.mu.Lock()
		err := p.exits[id]
		p.mu.Unlock()
		require.NoError(p.t, err, "worker %s did not stop cleanly", id)
	}
}

// allSpans returns every finished run.
func (p *livenessProcs) allSpans() []exclusive.Span {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.spans)
}

// nextBegin returns the first start of a run of key after at by a worker
// other than except.
func (p *livenessProcs) nextBegin(key string, at time.Time, except string) (time.Time, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var first time.Time
	for id, spans := range p.begins {
		if id == except {
			continue
		}
		for _, s := range spans {
			if s.Key == key && s.Start.After(at) && (first.IsZero() || s.Start.Before(first)) {
				first = s.Start
			}
		}
	}
	return first, !first.IsZero()
}

type prefixWriter struct {
	t      *testing.T
	prefix string
}

func (w *prefixWriter) Write(b []byte) (int, error) {
	w.t.Logf("%s: %s", w.prefix, strings.TrimSpace(string(b)))
	return len(b), nil
}

// livenessSetup returns a migrated schema and a client that inserts into it.
func livenessSetup(t *testing.T) (string, *river.Client[pgx.Tx]) {
	t.Helper()
	if os.Getenv("TEST_DATABASE_URL") == "" {
		t.Skip("TEST_DATABASE_URL is not set")
	}
	engine, err := NewEngine(testPool(t), &Config{})
	require.NoError(t, err)
	schema := riverdbtest.TestSchema(context.Background(), t, engine.Driver(), nil)
	engine.config.Schema = schema
	client, err := river.NewClient(engine.Driver(), &river.Config{
		Middleware: []rivertype.Middleware{engine.Middleware()},
		Schema:     schema,
	})
	require.NoError(t, err)
	return schema, client
}

// insertHot inserts jobs per instance for instances instances, 100-300 ms
// each, interleaved so that every instance has work waiting all along.
func insertHot(ctx context.Context, t *testing.T, client *river.Client[pgx.Tx], instances, jobs int) {
	t.Helper()
	var params []river.InsertManyParams
	for j := range jobs {
		for i := range instances {
			_ = j
			params = append(params, river.InsertManyParams{Args: livenessArgs{
				Instance: fmt.Sprintf("pi-%02d", i), SleepMillis: 100 + rand.IntN(201), //nolint:gosec // test data
			}})
		}
	}
	for chunk := range slices.Chunk(params, 1000) {
		_, err := client.InsertMany(ctx, chunk)
		require.NoError(t, err)
	}
}

// waitAllFinished waits until no job of the schema is unfinished.
func waitAllFinished(ctx context.Context, t *testing.T, schema string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		states := exclJobStates(ctx, t, schema)
		if states["available"]+states["running"]+states["retryable"]+states["scheduled"] == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("jobs unfinished after %s: %v", timeout, states)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// livenessJob reads one job's state, attempt, max attempts and errors.
func livenessJob(ctx context.Context, t *testing.T, schema string, id int64) (string, int, int, string) {
	t.Helper()
	var (
		state                string
		attempt, maxAttempts int
		errs                 string
	)
	require.NoError(t, testPool(t).QueryRow(ctx, fmt.Sprintf(
		`SELECT state::text, attempt, max_attempts, coalesce(array_to_string(errors, ' '), '') FROM %s.river_job WHERE id = $1`,
		pgx.Identifier{schema}.Sanitize()), id).Scan(&state, &attempt, &maxAttempts, &errs))
	return state, attempt, maxAttempts, errs
}

// waitOpenRuns waits until worker id has at least n runs under way (and,
// with want, one of job want) and returns them.
func (p *livenessProcs) waitOpenRuns(id string, n int, timeout time.Duration) []exclusive.Span {
	deadline := time.Now().Add(timeout)
	for {
		if runs := p.openRuns(id); len(runs) >= n {
			return runs
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("worker %s has fewer than %d runs under way after %s", id, n, timeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestLivenessKillWorker is the crash acceptance test: 3 worker processes on
// hot exclusive instances; SIGKILL one while it holds keys (and the one
// R0/PT1S job whose first run lasts a minute); the next job of each of its
// instances must start within 10 s, no two runs of a key overlap, the killed
// runs use up no execution (the R0 job completes), and no lock is left held.
// The kill is repeated (2 times here, 20 with RIVERBPMN_LIVENESS_LONG), a
// fresh worker replacing each killed one.
//
// The workers run the default configuration (nothing but the schema): the
// claim is that a crashed run costs nothing out of the box.
func TestLivenessKillWorker(t *testing.T) {
	longtest.Skip(t)
	testLivenessKillWorker(t, 0)
}

// TestLivenessKillWorkerBatched is TestLivenessKillWorker with workers that
// take runs of up to 4 jobs of a key (Config.ExclusiveBatch): a killed
// worker's whole runs (the job at work and those waiting their turn, all
// running in the database) are given back by the leader's takeover, which
// frees their keys in the same transaction, and nothing overlaps.
func TestLivenessKillWorkerBatched(t *testing.T) {
	longtest.Skip(t)
	testLivenessKillWorker(t, 4)
}

// killGapBound is how long after a SIGKILL the next run of a key the killed
// worker held may start, derived from the liveness configuration the
// workers run (the defaults): the killed session's lock goes at once, a live
// client's ping sees it within PingInterval, the takeover waits
// TakeoverAfter and runs on the leader's next check (CheckInterval). On top
// of that: River's fetch poll (FetchPollInterval, 1 s by default; the
// takeover also wakes the queues), a leader re-election when the killed
// worker was the leader (a live client's ping deletes a dead leader's row
// and notifies its resignation, so the next election attempt, within
// River's elect interval, wins), and slack for a loaded machine.
func killGapBound() time.Duration {
	d := liveness.Config{}.WithDefaults()
	const (
		riverFetchPoll = time.Second
		reElection     = time.Second
		loadSlack      = 3 * time.Second
	)
	return d.PingInterval + d.TakeoverAfter + d.CheckInterval + riverFetchPoll + reElection + loadSlack
}

func testLivenessKillWorker(t *testing.T, batch int) {
	ctx := context.Background()
	instances, jobs, kills := 50, 8, 2
	if livenessLong() {
		jobs, kills = 40, 20
	}
	schema, inserter := livenessSetup(t)
	procs := newLivenessProcs(t, schema)
	procs.batch = batch
	workers := []string{procs.start(), procs.start(), procs.start()}

	survivor, err := inserter.Insert(ctx, livenessArgs{Instance: "survivor", SleepMillis: 100, LongFirstRun: true, RetryCycle: "R0/PT1S"}, nil)
	require.NoError(t, err)
	require.Equal(t, 1, survivor.Job.MaxAttempts, "R0/PT1S allows one execution")
	insertHot(ctx, t, inserter, instances, jobs)

	// Who runs the survivor's first run is the first victim.
	victim := procs.runnerOf(workers, map[int64]bool{survivor.Job.ID: true}, 1, 30*time.Second)

	var (
		maxGap     time.Duration
		killed     []string
		killedRuns []exclusive.Span
	)
	for k := range kills {
		if k > 0 {
			// Keep the instances hot however many kills there are.
			if exclJobStates(ctx, t, schema)["available"] < instances*jobs/2 {
				insertHot(ctx, t, inserter, instances, jobs)
			}
			victim = procs.busiest(workers, 2, 30*time.Second)
		}
		procs.waitOpenRuns(victim, 2, 30*time.Second)
		killedAt, held := procs.kill(victim)
		killed = append(killed, victim)
		killedRuns = append(killedRuns, held...)
		workers = slices.DeleteFunc(workers, func(id string) bool { return id == victim })
		workers = append(workers, procs.start())
		t.Logf("kill %d: %s held %d keys", k+1, victim, len(held))
		for _, run := range held {
			var next time.Time
			require.Eventually(t, func() bool {
				var ok bool
				next, ok = procs.nextBegin(run.Key, killedAt, victim)
				return ok
			}, 30*time.Second, 20*time.Millisecond, "no job of %s started after kill %d", run.Key, k+1)
			gap := next.Sub(killedAt)
			maxGap = max(maxGap, gap)
			require.Less(t, gap, killGapBound(), "key %s: next job started %s after the kill (bound from the liveness defaults)", run.Key, gap)
		}
	}
	waitAllFinished(ctx, t, schema, 3*time.Minute)
	procs.stopAll()

	t.Logf("%d kills; longest gap between a kill and the next run of a key the killed worker held: %s", kills, maxGap)
	overlaps := exclusive.Overlaps(procs.allSpans())
	require.Empty(t, overlaps, "runs of one key overlapped: %v", overlaps)

	state, attempt, maxAttempts, errs := livenessJob(ctx, t, schema, survivor.Job.ID)
	require.Equal(t, "completed", state, "the R0/PT1S job survives the kill")
	require.Equal(t, 1, attempt, "the killed run used up no execution")
	require.Equal(t, 1, maxAttempts)
	require.Contains(t, errs, "client "+killed[0]+" ", "the error entry names the dead client")

	// Every job whose run was killed completed, and was given back once per
	// killed run (each give-back leaves one error entry).
	killedOf := map[int64]int{}
	for _, run := range killedRuns {
		killedOf[run.JobID]++
	}
	for jobID, n := range killedOf {
		state, _, _, errs := livenessJob(ctx, t, schema, jobID)
		require.Equal(t, "completed", state, "job %d", jobID)
		require.GreaterOrEqual(t, strings.Count(errs, "lost its liveness"), n, "job %d: every killed run was given back", jobID)
	}
	// No give-back used up an execution: these jobs never fail, so every
	// job completed at attempt 1, whatever happened to its earlier runs.
	requireNoAttemptUsed(ctx, t, schema)
	require.Zero(t, exclHeldLockCount(ctx, t, schema), "an exclusive key is still held")
	var sessions int
	require.NoError(t, testPool(t).QueryRow(ctx, fmt.Sprintf(`SELECT count(*) FROM %s.river_bpmn_client_session`, pgx.Identifier{schema}.Sanitize())).Scan(&sessions))
	require.Zero(t, sessions, "a session row outlived its client")
}

// requireNoAttemptUsed checks that every job of schema completed at
// attempt 1 (the liveness tests' jobs never fail, so a higher attempt is a
// run that used up an execution), and logs how many runs were given back.
func requireNoAttemptUsed(ctx context.Context, t *testing.T, schema string) {
	t.Helper()
	var (
		jobsTotal      int
		givenBackTotal int
		wrongAttempt   []string
	)
	rows, err := testPool(t).Query(ctx, fmt.Sprintf(`SELECT id, state::text, attempt,
			(SELECT count(*) FROM unnest(errors) AS e WHERE e->>'error' LIKE '%%lost its liveness%%')
		FROM %s.river_job`, pgx.Identifier{schema}.Sanitize()))
	require.NoError(t, err)
	for rows.Next() {
		var (
			id               int64
			state            string
			attempt, handled int
		)
		require.NoError(t, rows.Scan(&id, &state, &attempt, &handled))
		jobsTotal++
		givenBackTotal += handled
		if attempt != 1 || state != "completed" {
			wrongAttempt = append(wrongAttempt, fmt.Sprintf("%d (%s, attempt %d)", id, state, attempt))
		}
	}
	require.NoError(t, rows.Err())
	require.Empty(t, wrongAttempt, "jobs that did not complete at attempt 1")
	t.Logf("%d jobs, %d runs given back, every job completed at attempt 1", jobsTotal, givenBackTotal)
}

// endOf returns when worker id's run of job jobID, attempt attempt, ended.
func (p *livenessProcs) endOf(id string, jobID int64, attempt int) (time.Time, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, s := range p.ends[id] {
		if s.JobID == jobID && s.Attempt == attempt {
			return s.End, true
		}
	}
	return time.Time{}, false
}

// TestLivenessPartition is the fencing acceptance test: one of 3 live worker
// processes has every database connection terminated (pg_terminate_backend)
// while it runs jobs. The process stays alive; it must stop each run it had
// under way before any other worker starts a run of the same key (read from
// the processes' timeline), and its runs are given back (the error entry names
// it) and completed elsewhere or by itself later. Once it has stopped its
// runs it is frozen (SIGSTOP) until another worker has started one of its
// keys, then thawed (SIGCONT): the freeze stands for a worker slower to come
// back than the others, so that the ordering is checked on at least one key.
func TestLivenessPartition(t *testing.T) {
	longtest.Skip(t)
	testLivenessPartition(t)
}

func testLivenessPartition(t *testing.T) {
	ctx := context.Background()
	instances, jobs := 50, 8
	if livenessLong() {
		jobs = 40
	}
	schema, inserter := livenessSetup(t)
	procs := newLivenessProcs(t, schema)
	workers := []string{procs.start(), procs.start(), procs.start()}
	insertHot(ctx, t, inserter, instances, jobs)
	// Long jobs (each followed by a short one of its instance): the worker
	// cut off is one running a long job and some short ones.
	long := insertLong(ctx, t, inserter, 10, 4000)
	victim := procs.runnerOf(workers, long, 3, 30*time.Second)
	cutAt := time.Now()
	var terminated int
	require.NoError(t, testPool(t).QueryRow(ctx,
		`WITH victim AS MATERIALIZED (
			SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1 AND pid <> pg_backend_pid()
		)
		SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) FROM victim`, victim).Scan(&terminated))
	held := procs.openRuns(victim) // what it had under way when cut off
	require.Positive(t, terminated)
	t.Logf("terminated %d connections of %s, which ran %d jobs", terminated, victim, len(held))

	// Once the cut-off worker has stopped its runs, it is frozen (SIGSTOP)
	// until another worker has started one of its keys: reconnected, it
	// could otherwise take every run given back itself, and the ordering
	// below would be checked against nothing.
	require.Eventually(t, func() bool {
		for _, run := range held {
			if _, ok := procs.endOf(victim, run.JobID, run.Attempt); !ok {
				return false
			}
		}
		return true
	}, time.Minute, 5*time.Millisecond, "the cut-off worker stops its runs")
	procs.signal(victim, syscall.SIGSTOP)
	require.Eventually(t, func() bool {
		for _, run := range held {
			if _, ok := procs.nextBegin(run.Key, cutAt, victim); ok {
				return true
			}
		}
		return false
	}, 2*time.Minute, 5*time.Millisecond, "another worker starts a key the cut-off worker had under way")
	procs.signal(victim, syscall.SIGCONT)

	waitAllFinished(ctx, t, schema, 3*time.Minute)
	procs.stopAll()

	overlaps := exclusive.Overlaps(procs.allSpans())
	require.Empty(t, overlaps, "runs of one key overlapped: %v", overlaps)

	var (
		givenBack, measured int
		minMargin           = time.Duration(1<<63 - 1)
	)
	for _, run := range held {
		end, ok := procs.endOf(victim, run.JobID, run.Attempt)
		require.True(t, ok, "the cut-off worker never ended its run of job %d", run.JobID)
		if next, ok := procs.nextBegin(run.Key, cutAt, victim); ok {
			require.True(t, end.Before(next), "key %s: the cut-off worker ended its run at %s, another started one at %s",
				run.Key, end.Format(time.StampMicro), next.Format(time.StampMicro))
			minMargin = min(minMargin, next.Sub(end))
			measured++
		}
		state, _, _, errs := livenessJob(ctx, t, schema, run.JobID)
		require.Equal(t, "completed", state)
		if strings.Contains(errs, "client "+victim+" ") {
			givenBack++
		}
		if long[run.JobID] {
			require.Contains(t, errs, "client "+victim+" ", "the long run of job %d was under way when its worker was cut off; it must have been given back", run.JobID)
		}
	}
	require.Positive(t, measured, "no other worker started a job of a key the cut-off worker had under way")
	t.Logf("%d of its %d runs given back; over %d keys, shortest time from the cut-off worker stopping its run to another worker starting the key: %s",
		givenBack, len(held), measured, minMargin)
	// Keys the cut-off worker could not give back (its connections were
	// gone) are stale once their jobs ended, and swept later; none may be
	// held by a job still running its attempt.
	var live int
	require.NoError(t, testPool(t).QueryRow(ctx, fmt.Sprintf(`SELECT count(*) FROM %[1]s.river_bpmn_exclusive_lock AS lock
		JOIN %[1]s.river_job AS job ON job.id = lock.job_id
		WHERE job.state = 'running' AND job.attempt = lock.attempt`, pgx.Identifier{schema}.Sanitize())).Scan(&live))
	require.Zero(t, live, "an exclusive key is still held by a running job")
}

// busiest waits until one of workers has at least n runs under way and
// returns the one with the most.
func (p *livenessProcs) busiest(workers []string, n int, timeout time.Duration) string {
	deadline := time.Now().Add(timeout)
	for {
		best, most := "", 0
		for _, id := range workers {
			if runs := len(p.openRuns(id)); runs > most {
				best, most = id, runs
			}
		}
		if most >= n {
			return best
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("no worker has %d runs under way after %s", n, timeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// runnerOf waits until one of workers runs one of jobs (with at least
// minRuns runs under way) and returns it.
func (p *livenessProcs) runnerOf(workers []string, jobs map[int64]bool, minRuns int, timeout time.Duration) string {
	var runner string
	require.Eventually(p.t, func() bool {
		for _, id := range workers {
			runs := p.openRuns(id)
			for _, run := range runs {
				if jobs[run.JobID] && len(runs) >= minRuns {
					runner = id
					return true
				}
			}
		}
		return false
	}, timeout, 5*time.Millisecond, "no worker runs one of jobs %v", jobs)
	return runner
}

// insertLong inserts n long jobs of sleepMillis, each followed by a short
// one of its instance (long-0, long-1, ...), and returns the long ones.
func insertLong(ctx context.Context, t *testing.T, client *river.Client[pgx.Tx], n, sleepMillis int) map[int64]bool {
	t.Helper()
	long := map[int64]bool{}
	for i := range n {
		instance := fmt.Sprintf("long-%d", i)
		res, err := client.Insert(ctx, livenessArgs{Instance: instance, SleepMillis: sleepMillis}, nil)
		require.NoError(t, err)
		long[res.Job.ID] = true
		_, err = client.Insert(ctx, livenessArgs{Instance: instance, SleepMillis: 100}, nil)
		require.NoError(t, err)
	}
	return long
}
