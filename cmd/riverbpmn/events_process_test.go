package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdbtest"
	"github.com/riverqueue/river/rivershared/riversharedtest"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/events"
	"github.com/riverbpmn/riverbpmn/internal/longtest"
	"github.com/riverbpmn/riverbpmn/jobcontrol"
	"github.com/riverbpmn/riverbpmn/riverbpmntest"
	"github.com/riverbpmn/riverbpmn/workflow"
)

// The job kinds of internal/testworker.
type blockArgs struct{}

func (blockArgs) Kind() string { return "testworker_block" }

type noopArgs struct {
	Seq int `json:"seq"`
}

func (noopArgs) Kind() string { return "testworker_noop" }

// binaries builds the riverbpmn CLI and internal/testworker into a temporary
// directory (Go's build cache makes it quick after the first time).
func binaries(t *testing.T) (cli, worker string) {
	t.Helper()
	dir := t.TempDir()
	cli, worker = filepath.Join(dir, "riverbpmn"), filepath.Join(dir, "testworker")
	for _, b := range []struct{ out, pkg string }{{cli, "."}, {worker, "../../internal/testworker"}} {
		cmd := exec.Command("go", "build", "-o", b.out, b.pkg)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "go build %s: %s", b.pkg, out)
	}
	return cli, worker
}

// process is a child OS process whose stdout lines are read into a channel.
type process struct {
	cmd   *exec.Cmd
	lines chan string
	done  chan struct{}
}

func startProcess(t *testing.T, name string, args ...string) *process {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Stderr = &prefixWriter{t: t, prefix: filepath.Base(name) + ": "}
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	p := &process{cmd: cmd, lines: make(chan string, 1<<16), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		scanner := bufio.NewScanner(stdout)
		scanner.Buffer(make([]byte, 1<<20), 1<<20)
		for scanner.Scan() {
			p.lines <- scanner.Text()
		}
		_ = cmd.Wait()
		close(p.lines)
	}()
	t.Cleanup(func() { p.kill() })
	return p
}

// kill ends the process with SIGKILL and waits for it.
func (p *process) kill() {
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// waitLine returns the first line with prefix, skipping others.
func (p *process) waitLine(t *testing.T, prefix string, timeout time.Duration) string {
	t.Helper()
	deadline := time.After(timeout)
	for {
		select {
		case line, ok := <-p.lines:
			require.True(t, ok, "process ended before printing %q", prefix)
			if strings.HasPrefix(line, prefix) {
				return line
			}
		case <-deadline:
			t.Fatalf("no line %q within %s", prefix, timeout)
		}
	}
}

type prefixWriter struct {
	t      *testing.T
	prefix string
	mu     sync.Mutex
}

func (w *prefixWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, line := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		if line != "" && !strings.Contains(line, "job cancelled remotely") {
			fmt.Fprintln(os.Stderr, w.prefix+line)
		}
	}
	return len(b), nil
}

func processSchema(t *testing.T) (*workflow.Engine, *pgxpool.Pool, string) {
	t.Helper()
	ctx := context.Background()
	schema := riverdbtest.TestSchema(ctx, t, riverbpmntest.Driver(t), nil)
	b := riverbpmntest.New(ctx, t, schema, nil)
	return b.Engine, b.DBPool, schema
}

func insertClient(t *testing.T, engine *workflow.Engine, schema string) *river.Client[pgx.Tx] {
	t.Helper()
	client, err := river.NewClient(engine.Driver(), &river.Config{
		Middleware: []rivertype.Middleware{engine.Middleware()},
		Schema:     schema,
	})
	require.NoError(t, err)
	return client
}

// TestStopAcrossProcesses: a job running in another OS process (a River
// client of its own) is stopped from this one: its context is cancelled
// there (River's control notification), and it ends ABORTED with no
// incident. A waiting job is aborted at once.
func TestStopAcrossProcesses(t *testing.T) {
	ctx := context.Background()
	engine, _, schema := processSchema(t)
	_, workerBin := binaries(t)
	url := riversharedtest.TestDatabaseURL()

	worker := startProcess(t, workerBin, "--database-url", url, "--schema", schema)
	worker.waitLine(t, "ready", time.Minute)
	client := insertClient(t, engine, schema)

	waiting, err := client.Insert(ctx, blockArgs{}, &river.InsertOpts{ScheduledAt: time.Now().Add(time.Hour)})
	require.NoError(t, err)
	res, err := engine.StopJob(ctx, waiting.Job.ID)
	require.NoError(t, err)
	require.Equal(t, jobcontrol.StopAborted, res.Outcome)

	running, err := client.Insert(ctx, blockArgs{}, nil)
	require.NoError(t, err)
	require.Equal(t, fmt.Sprintf("started %d", running.Job.ID), worker.waitLine(t, "started", time.Minute))

	res, err = engine.StopJob(ctx, running.Job.ID)
	require.NoError(t, err)
	require.Equal(t, jobcontrol.StopResult{JobID: running.Job.ID, State: "running", Outcome: jobcontrol.StopRequested}, *res)
	require.Equal(t, fmt.Sprintf("cancelled %d: JobCancelError: job cancelled remotely", running.Job.ID), worker.waitLine(t, "cancelled", time.Minute))

	require.Eventually(t, func() bool {
		st, err := engine.JobStatus(ctx, running.Job.ID)
		require.NoError(t, err)
		return st.Status == jobcontrol.Aborted
	}, time.Minute, 10*time.Millisecond)
	st, err := engine.JobStatus(ctx, running.Job.ID)
	require.NoError(t, err)
	require.Equal(t, "cancelled", st.State)
	incidents, err := engine.OpenIncidents(ctx)
	require.NoError(t, err)
	require.Empty(t, incidents)

	// Asked again: the job has finished and is left as it is.
	res, err = engine.StopJob(ctx, running.Job.ID)
	require.NoError(t, err)
	require.Equal(t, jobcontrol.StopAlreadyFinished, res.Outcome)
}

// TestEventsFollowAcrossRestarts: `riverbpmn events --follow` in another OS
// process receives every event of a run of jobs worked by a third process,
// although it is killed (SIGKILL) and restarted midway with the same durable
// subscription; with RIVERBPMN_EVENTS_PG_RESTART (a shell command that
// restarts the PostgreSQL server of TEST_DATABASE_URL; never point it at a
// server others use) the server is restarted midway too. Every event in the
// outbox must be received (at least once), none that is not, and every job
// must have its SUCCEEDED event. RIVERBPMN_EVENTS_JOBS sets the job count
// (default 2,000; the target is 50,000).
func TestEventsFollowAcrossRestarts(t *testing.T) {
	longtest.Skip(t)
	ctx := context.Background()
	jobs := 2000
	if s := os.Getenv("RIVERBPMN_EVENTS_JOBS"); s != "" {
		var err error
		jobs, err = strconv.Atoi(s)
		require.NoError(t, err, "RIVERBPMN_EVENTS_JOBS")
	}
	restart := os.Getenv("RIVERBPMN_EVENTS_PG_RESTART")

	engine, pool, schema := processSchema(t)
	require.NoError(t, engine.EnableEvents(ctx))
	// riverdbtest reuses schemas: leave none with events on.
	t.Cleanup(func() { require.NoError(t, engine.DisableEvents(context.Background())) })
	cliBin, workerBin := binaries(t)
	url := riversharedtest.TestDatabaseURL()

	var (
		mu         sync.Mutex
		received   = map[int64]events.Event{}
		deliveries int
	)
	follow := func() *process {
		p := startProcess(t, cliBin, "events", "--follow", "--json", "--subscription", "restart-test", "--from", "beginning",
			"--poll-interval", "200ms", "--database-url", url, "--schema", schema)
		go func() {
			for line := range p.lines {
				var ev events.Event
				if err := json.Unmarshal([]byte(line), &ev); err != nil {
					continue // a line cut by SIGKILL; its event comes again
				}
				mu.Lock()
				received[ev.ID] = ev
				deliveries++
				mu.Unlock()
			}
		}()
		return p
	}
	receivedCount := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(received)
	}
	subscriber := follow()

	client := insertClient(t, engine, schema)
	for start := 0; start < jobs; start += 1000 {
		params := make([]river.InsertManyParams, 0, 1000)
		for i := start; i < min(start+1000, jobs); i++ {
			jc := workflow.JobContext{ProcessInstanceID: fmt.Sprintf("pi-%d", i%100), ProcessDefinitionKey: "restart_process"}
			params = append(params, river.InsertManyParams{Args: noopArgs{Seq: i}, InsertOpts: jc.InsertOpts()})
		}
		_, err := client.InsertManyFast(ctx, params)
		require.NoError(t, err)
	}
	worker := startProcess(t, workerBin, "--database-url", url, "--schema", schema, "--workers", "50")

	completed := func() int {
		var n int
		if err := pool.QueryRow(ctx, "SELECT count(*) FROM "+pgx.Identifier{schema}.Sanitize()+".river_job WHERE state = 'completed'").Scan(&n); err != nil {
			return -1 // the server may be restarting
		}
		return n
	}
	waitFor := func(what string, timeout time.Duration, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(timeout)
		for !cond() {
			require.True(t, time.Now().Before(deadline), "timed out waiting for %s", what)
			time.Sleep(20 * time.Millisecond)
		}
	}
	timeout := 2*time.Minute + time.Duration(jobs)*5*time.Millisecond

	// Kill the subscriber once it has a third of the events, and restart it.
	waitFor("a third of the events", timeout, func() bool { return receivedCount() >= 2*jobs/3 })
	subscriber.kill()
	t.Logf("subscriber killed after %d events (%d jobs completed)", receivedCount(), completed())
	time.Sleep(300 * time.Millisecond)
	subscriber = follow()

	if restart != "" {
		waitFor("two thirds of the jobs", timeout, func() bool { return completed() >= 2*jobs/3 })
		t.Logf("restarting PostgreSQL at %d completed jobs: %s", completed(), restart)
		out, err := exec.Command("sh", "-c", restart).CombinedOutput()
		require.NoError(t, err, "%s", out)
		pool.Reset()
	}

	waitFor("every job to complete", timeout, func() bool { return completed() == jobs })
	var outbox []int64
	waitFor("every recorded event to be received", timeout, func() bool {
		rows, err := pool.Query(ctx, "SELECT e.id + i - 1 FROM "+pgx.Identifier{schema}.Sanitize()+".river_bpmn_event e, "+
			"generate_series(1, cardinality(e.job_id)) AS i ORDER BY 1")
		if err != nil {
			return false
		}
		ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
		if err != nil {
			return false
		}
		outbox = ids
		mu.Lock()
		defer mu.Unlock()
		for _, id := range ids {
			if _, ok := received[id]; !ok {
				return false
			}
		}
		return true
	})
	worker.kill()
	subscriber.kill()

	mu.Lock()
	defer mu.Unlock()
	require.Len(t, received, len(outbox), "every event received, and none that was not recorded")
	succeeded := map[int64]int{}
	for _, ev := range received {
		if ev.Status == events.Succeeded {
			succeeded[ev.JobID]++
		}
	}
	require.Len(t, succeeded, jobs, "every job's SUCCEEDED event")
	for id, n := range succeeded {
		require.Equal(t, 1, n, "job %d", id)
	}
	t.Logf("%d jobs, %d events recorded, all received (%d deliveries: %d repeated after the restart)",
		jobs, len(outbox), deliveries, deliveries-len(received))
}

var _ io.Writer = (*prefixWriter)(nil)
