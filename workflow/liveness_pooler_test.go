package workflow

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/exclusive"
	"github.com/riverbpmn/riverbpmn/internal/longtest"
	"github.com/riverbpmn/riverbpmn/liveness"
)

// startPgBouncer runs Debian's PgBouncer (installed by scripts/pgbouncer.sh
// when missing) in transaction mode in front of TEST_DATABASE_URL's server,
// on a free port, until the test ends, and returns the URL of the test
// database through it, for pgx without prepared statements
// (default_query_exec_mode=exec), as such a pooler needs. It skips the test,
// loudly, when PgBouncer cannot be installed.
func startPgBouncer(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("../scripts/pgbouncer.sh").Output()
	if err != nil {
		t.Skipf("*** SKIPPED: PgBouncer could not be installed (scripts/pgbouncer.sh: %v); the pooler proof did not run ***", err)
	}
	bin := strings.TrimSpace(string(out))
	direct, err := url.Parse(os.Getenv("TEST_DATABASE_URL"))
	require.NoError(t, err)
	host, port, err := net.SplitHostPort(direct.Host)
	require.NoError(t, err)
	user := direct.User.Username()

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	listen := ln.Addr().(*net.TCPAddr).Port
	require.NoError(t, ln.Close())

	// A directory of its own under the system's temporary directory (not
	// t.TempDir, whose parent only this user may enter): PgBouncer may run as
	// another user, and reads its files after switching.
	dir, err := os.MkdirTemp("", "pgbouncer")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	require.NoError(t, os.Chmod(dir, 0o755)) //nolint:gosec // PgBouncer may run as another user
	ini := fmt.Sprintf(`[databases]
* = host=%s port=%s
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = %d
unix_socket_dir =
auth_type = trust
auth_file = %s
pool_mode = transaction
default_pool_size = 40
max_client_conn = 500
ignore_startup_parameters = extra_float_digits
`, host, port, listen, filepath.Join(dir, "users.txt"))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "users.txt"), fmt.Appendf(nil, "%q \"\"\n", user), 0o644)) //nolint:gosec // test config
	require.NoError(t, os.WriteFile(filepath.Join(dir, "pgbouncer.ini"), []byte(ini), 0o644))                     //nolint:gosec // test config
	args := []string{filepath.Join(dir, "pgbouncer.ini")}
	if os.Getuid() == 0 {
		args = append([]string{"-u", "postgres"}, args...) // PgBouncer refuses to run as root
	}
	cmd := exec.Command(bin, args...)
	cmd.Stderr = &prefixWriter{t: t, prefix: "pgbouncer"}
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })

	through := *direct
	through.Host = fmt.Sprintf("127.0.0.1:%d", listen)
	q := through.Query()
	q.Set("default_query_exec_mode", "exec")
	q.Del("pool_max_conns")
	through.RawQuery = q.Encode()
	require.Eventually(t, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, through.String())
		if err != nil {
			return false
		}
		defer conn.Close(ctx)
		return conn.Ping(ctx) == nil
	}, 30*time.Second, 100*time.Millisecond, "PgBouncer answers on port %d", listen)
	return through.String()
}

// poolerBound is killGapBound for poll-only workers: a killed leader's row
// is deleted by a live client's ping, but its resignation is a notification
// that poll-only clients do not hear, so the next leader (who runs the
// takeover) is elected at River's next election attempt (5 s, 1 s jitter).
func poolerBound() time.Duration {
	const riverElectInterval = 6 * time.Second
	return killGapBound() + riverElectInterval
}

// TestLivenessPooler runs riverbpmn behind PgBouncer in transaction mode
// (Debian's package; pgx with default_query_exec_mode=exec; River
// poll-only, as River needs behind such a pooler):
//
//   - a worker whose liveness session would go through the pooler refuses to
//     start, naming the pooler and what to configure;
//   - migrations through the pooler leave no advisory lock behind;
//   - workers whose sessions are on a direct connection
//     (Config.Liveness.ConnConfig) and everything else through the pooler:
//     one is killed (SIGKILL) while it runs jobs; the next job of each of its
//     keys starts within poolerBound, no key overlaps, no attempt is used,
//     and afterwards no pooled server connection holds a session lock.
func TestLivenessPooler(t *testing.T) {
	longtest.Skip(t)
	ctx := context.Background()
	bouncer := startPgBouncer(t)

	// Migrations through the pooler, twice: the second must not wait for a
	// lock the first left with a pooled server connection.
	pooledConfig, err := pgxpool.ParseConfig(bouncer)
	require.NoError(t, err)
	pooled, err := pgxpool.NewWithConfig(ctx, pooledConfig)
	require.NoError(t, err)
	t.Cleanup(pooled.Close)
	migSchema := fmt.Sprintf("pooler_migrate_%d", time.Now().UnixNano())
	_, err = testPool(t).Exec(ctx, "CREATE SCHEMA "+migSchema)
	require.NoError(t, err)
	t.Cleanup(func() { _, _ = testPool(t).Exec(context.Background(), "DROP SCHEMA "+migSchema+" CASCADE") })
	for i := range 2 {
		migCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		_, err := MigrateUp(migCtx, pooled, &MigrateOpts{Schema: migSchema})
		cancel()
		require.NoError(t, err, "migration %d through the pooler", i+1)
		var left int
		require.NoError(t, testPool(t).QueryRow(ctx, `SELECT count(*) FROM pg_locks
			WHERE locktype = 'advisory' AND objsubid = 1 AND objid = hashtext('riverbpmn migrate ' || $1::text)::oid`, migSchema).Scan(&left))
		require.Zero(t, left, "the migration lock outlived migration %d", i+1)
	}

	schema, inserter := livenessSetup(t)

	// A session through the pooler: the worker refuses to start.
	refusedCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	out, err := exec.CommandContext(refusedCtx, buildLivenessWorker(t), "-db", bouncer, "-schema", schema, "-id", "pooled-1", "-poll-only").CombinedOutput()
	require.Error(t, err, "a worker whose session goes through the pooler must not start: %s", out)
	require.Contains(t, string(out), "transaction-mode connection pooler")
	require.Contains(t, string(out), "Config.Liveness.ConnConfig")
	t.Logf("refused: %s", strings.TrimSpace(string(out)))
	sessionLocks := func() int {
		var n int
		require.NoError(t, testPool(t).QueryRow(ctx, `SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 2 AND classid = $1::integer::oid`,
			liveness.LockClass(schema)).Scan(&n))
		return n
	}
	// The refused worker ended the pooled backend that took its lock
	// (pg_terminate_backend signals it; it exits a moment later).
	require.Eventually(t, func() bool { return sessionLocks() == 0 }, 10*time.Second, 50*time.Millisecond,
		"the refused worker left its session lock with a pooled server connection")

	procs := newLivenessProcs(t, schema)
	procs.url = bouncer
	direct, err := url.Parse(os.Getenv("TEST_DATABASE_URL"))
	require.NoError(t, err)
	q := direct.Query()
	q.Del("pool_max_conns") // a pool setting, not a connection's
	direct.RawQuery = q.Encode()
	procs.args = []string{"-poll-only", "-liveness-db", direct.String()}
	workers := []string{procs.start(), procs.start(), procs.start()}
	survivor, err := inserter.Insert(ctx, livenessArgs{Instance: "survivor", SleepMillis: 100, LongFirstRun: true, RetryCycle: "R0/PT1S"}, nil)
	require.NoError(t, err)
	insertHot(ctx, t, inserter, 30, 8)
	victim := procs.runnerOf(workers, map[int64]bool{survivor.Job.ID: true}, 1, 30*time.Second)
	procs.waitOpenRuns(victim, 2, 30*time.Second)
	killedAt, held := procs.kill(victim)
	longest := procs.requireNextBegins(held, killedAt, victim, poolerBound())
	waitAllFinished(ctx, t, schema, 3*time.Minute)
	procs.stopAll()
	t.Logf("behind PgBouncer: %d keys held by the killed worker, longest gap to their next run %s (bound %s); load %s", len(held), longest, poolerBound(), loadAvg())

	overlaps := exclusive.Overlaps(procs.allSpans())
	require.Empty(t, overlaps, "runs of one key overlapped: %v", overlaps)
	requireNoAttemptUsed(ctx, t, schema)
	require.Zero(t, exclHeldLockCount(ctx, t, schema), "an exclusive key is still held")
	// A backend exits a moment after its client closed the connection.
	require.Eventually(t, func() bool { return sessionLocks() == 0 }, 10*time.Second, 50*time.Millisecond, "a session lock outlived its client")
}
