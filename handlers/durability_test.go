package handlers_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river/rivershared/riversharedtest"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/handlers"
	"github.com/riverbpmn/riverbpmn/internal/longtest"
	"github.com/riverbpmn/riverbpmn/workflow"
)

type tickArgs struct {
	N int `json:"n"`
}

func (tickArgs) Kind() string { return "tick" }

// workerProcess is one timerworker OS process.
type workerProcess struct {
	clientID string
	cmd      *exec.Cmd
	done     chan error
}

func startWorker(t *testing.T, bin, schema, clientID string) *workerProcess {
	t.Helper()
	cmd := exec.Command(bin, "--database-url", riversharedtest.TestDatabaseURL(), "--schema", schema, "--client-id", clientID)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err, "worker %s did not start", clientID)
	require.Equal(t, "started\n", line)
	p := &workerProcess{clientID: clientID, cmd: cmd, done: make(chan error, 1)}
	go func() { p.done <- cmd.Wait() }()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	return p
}

// TestTimerDurabilityAcrossProcesses works 100 cycle timers R/PT1S with two
// worker processes, SIGKILLs one of them (the River leader, so that the
// survivor's rescuer takes over the killed runs when it is elected, without
// waiting out its 30-second interval; jobs count as stuck after 10 s, so
// that no run of a live process is rescued on a loaded machine) while it runs jobs, restarts it, and checks the
// recorded timeline: every timer has exactly one pending next occurrence,
// no occurrence was created twice, and no occurrence ran twice except runs
// cut by the kill.
func TestTimerDurabilityAcrossProcesses(t *testing.T) {
	longtest.Skip(t) // SIGKILLs worker processes
	const numTimers = 100
	ctx := context.Background()
	s := newTestSetup(t, nil)
	q := func(sql string) string {
		return strings.ReplaceAll(sql, "$schema.", pgx.Identifier{s.schema}.Sanitize()+".")
	}
	_, err := s.pool.Exec(ctx, q(`CREATE TABLE $schema.timer_runs (
		job_id bigint NOT NULL, timer_id bigint NOT NULL, occurrence bigint NOT NULL, attempt int NOT NULL,
		client_id text NOT NULL, pid int NOT NULL, event text NOT NULL, at timestamptz NOT NULL DEFAULT clock_timestamp())`))
	require.NoError(t, err)
	t.Cleanup(func() { _, _ = s.pool.Exec(context.Background(), q(`DROP TABLE $schema.timer_runs`)) })

	bin := filepath.Join(t.TempDir(), "timerworker")
	build := exec.Command("go", "build", "-o", bin, "github.com/riverbpmn/riverbpmn/internal/timerworker")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)

	timers := handlers.NewTimers(s.pool, &handlers.TimersConfig{Schema: s.schema})
	client := s.insertClient(t)
	s.inTx(t, func(tx pgx.Tx) {
		for i := range numTimers {
			jc := workflow.JobContext{ProcessInstanceID: fmt.Sprintf("ticker-%d", i), ProcessDefinitionKey: "ticker"}
			_, err := timers.InsertTx(ctx, client, tx, tickArgs{N: i}, handlers.Timer{Cycle: "R/PT1S"}, jc.InsertOpts())
			require.NoError(t, err)
		}
	})

	workers := map[string]*workerProcess{}
	for _, id := range []string{"a1", "b1"} {
		workers[id] = startWorker(t, bin, s.schema, id)
	}
	count := func(sql string, args ...any) int {
		t.Helper()
		var n int
		require.NoError(t, s.pool.QueryRow(ctx, q(sql), args...).Scan(&n))
		return n
	}
	waitFor := func(what string, timeout time.Duration, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(timeout)
		for !cond() {
			require.True(t, time.Now().Before(deadline), "timed out waiting for %s", what)
			time.Sleep(50 * time.Millisecond)
		}
	}

	// Let both work a few rounds, then kill the leader while it runs jobs.
	waitFor("two rounds of firings", 60*time.Second, func() bool {
		return count(`SELECT count(*) FROM $schema.timer_runs WHERE event = 'completed'`) >= 2*numTimers
	})
	var leader string
	waitFor("a leader", 30*time.Second, func() bool {
		err := s.pool.QueryRow(ctx, q(`SELECT leader_id FROM $schema.river_leader`)).Scan(&leader)
		return err == nil && workers[leader] != nil
	})
	victim := workers[leader]
	waitFor("the leader to run jobs", 60*time.Second, func() bool {
		return count(`SELECT count(*) FROM $schema.timer_runs r WHERE r.client_id = $1 AND r.event = 'started'
			AND NOT EXISTS (SELECT 1 FROM $schema.timer_runs c WHERE c.job_id = r.job_id AND c.attempt = r.attempt AND c.event = 'completed')`, victim.clientID) >= 5
	})
	require.NoError(t, victim.cmd.Process.Signal(syscall.SIGKILL))
	<-victim.done
	killedAt := time.Now()
	cut := count(`SELECT count(*) FROM $schema.timer_runs r WHERE r.client_id = $1 AND r.event = 'started'
		AND NOT EXISTS (SELECT 1 FROM $schema.timer_runs c WHERE c.job_id = r.job_id AND c.attempt = r.attempt AND c.event = 'completed')`, victim.clientID)
	require.Positive(t, cut, "the kill cut runs short")
	t.Logf("killed %s (the leader) with %d runs under way", victim.clientID, cut)

	restarted := strings.TrimSuffix(victim.clientID, "1") + "2"
	delete(workers, victim.clientID)
	workers[restarted] = startWorker(t, bin, s.schema, restarted)

	// The new leader's rescuer gives the killed runs back; wait until every
	// one of them has run again and completed. (Live processes keep running
	// occurrences, one per timer and second, so some job is almost always
	// running: only the killed process's runs must be gone.)
	waitFor("the killed runs to be rescued and completed", 90*time.Second, func() bool {
		return count(`SELECT count(*) FROM $schema.river_job WHERE kind = 'tick'
				AND (state NOT IN ('completed', 'scheduled', 'available', 'running')
					OR (state = 'running' AND attempted_by[array_length(attempted_by, 1)] = $1))`, victim.clientID) == 0 &&
			count(`SELECT count(*) FROM $schema.timer_runs r WHERE r.client_id = $1 AND r.event = 'started'
				AND NOT EXISTS (SELECT 1 FROM $schema.timer_runs c WHERE c.job_id = r.job_id AND c.event = 'completed')`, victim.clientID) == 0
	})
	t.Logf("rescued and completed %s after the kill", time.Since(killedAt).Round(time.Second))
	time.Sleep(2 * time.Second) // a couple more rounds with the restarted process

	for _, w := range workers {
		require.NoError(t, w.cmd.Process.Signal(syscall.SIGTERM))
	}
	for id, w := range workers {
		select {
		case err := <-w.done:
			require.NoError(t, err, "worker %s", id)
		case <-time.After(30 * time.Second):
			t.Fatalf("worker %s did not stop", id)
		}
	}

	// Every timer has exactly one pending next occurrence: the latest, which
	// the timer row names.
	require.Zero(t, count(`SELECT count(*) FROM $schema.river_job WHERE kind = 'tick' AND state NOT IN ('completed', 'scheduled', 'available')`))
	require.Equal(t, numTimers, count(`SELECT count(*) FROM $schema.river_bpmn_timer t
		WHERE t.ended_at IS NULL
		AND (SELECT count(*) FROM $schema.river_job j WHERE j.kind = 'tick' AND j.state IN ('scheduled', 'available')
			AND (j.metadata -> 'bpmn_timer' ->> 'timer_id')::bigint = t.id) = 1
		AND (SELECT j.state FROM $schema.river_job j WHERE j.id = t.job_id) IN ('scheduled', 'available')`),
		"each timer: one pending occurrence, and it is the latest")
	// Occurrences 1..N of each timer exist once each.
	require.Zero(t, count(`SELECT count(*) FROM (
		SELECT t.id FROM $schema.river_bpmn_timer t
		JOIN $schema.river_job j ON (j.metadata -> 'bpmn_timer' ->> 'timer_id')::bigint = t.id
		GROUP BY t.id, t.occurrence
		HAVING count(*) <> t.occurrence
			OR count(DISTINCT (j.metadata -> 'bpmn_timer' ->> 'occurrence')::bigint) <> t.occurrence
			OR max((j.metadata -> 'bpmn_timer' ->> 'occurrence')::bigint) <> t.occurrence) gaps`))
	dump := func(what, sql string, args ...any) {
		rows, err := s.pool.Query(ctx, q(sql), args...)
		require.NoError(t, err)
		defer rows.Close()
		for rows.Next() {
			vals, err := rows.Values()
			require.NoError(t, err)
			t.Logf("%s: %v", what, vals)
		}
	}
	// Every finished occurrence completed exactly once.
	if n := count(`SELECT count(*) FROM $schema.river_job j WHERE j.kind = 'tick' AND j.state = 'completed'
		AND (SELECT count(*) FROM $schema.timer_runs c WHERE c.job_id = j.id AND c.event = 'completed') <> 1`); n != 0 {
		dump("runs", `SELECT r.* FROM $schema.timer_runs r JOIN $schema.river_job j ON j.id = r.job_id WHERE j.state = 'completed'
			AND (SELECT count(*) FROM $schema.timer_runs c WHERE c.job_id = j.id AND c.event = 'completed') <> 1 ORDER BY r.at`)
		t.Fatalf("%d completed occurrences were not completed exactly once", n)
	}
	// No occurrence ran twice, except runs cut by the kill: every start but
	// the last one of an occurrence was made by the killed process.
	const ranAgain = `FROM $schema.timer_runs r WHERE r.event = 'started'
		AND r.client_id <> $1
		AND EXISTS (SELECT 1 FROM $schema.timer_runs later WHERE later.timer_id = r.timer_id
			AND later.occurrence = r.occurrence AND later.event = 'started' AND later.at > r.at)`
	if n := count(`SELECT count(*) `+ranAgain, victim.clientID); n != 0 {
		dump("run followed by another run", `SELECT r.* `+ranAgain+` ORDER BY r.at`, victim.clientID)
		t.Fatalf("%d runs of live processes were followed by another run of the same occurrence", n)
	}
	reruns := count(`SELECT count(*) FROM (SELECT timer_id, occurrence FROM $schema.timer_runs WHERE event = 'started'
		GROUP BY timer_id, occurrence HAVING count(*) > 1) x`)
	total := count(`SELECT count(*) FROM $schema.timer_runs WHERE event = 'completed'`)
	t.Logf("%d firings completed; %d occurrences ran twice, all cut by the kill", total, reruns)
}
