package compat

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/riverqueue/river/rivershared/riversharedtest"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/workflow"
)

// TestLogsOnAdoption is a River application adopting riverbpmn: its schema
// has held plain River's jobs, riverbpmn's migrations are added, and the
// application's client, built without a logger, now comes from
// workflow.NewClient. It must log what stock River logs on such a schema:
// through River's default logger (warnings and errors, on standard output),
// nothing through slog.Default, and no warning about an earlier riverbpmn.
//
// Not parallel: it swaps os.Stdout while it builds each client (River's
// default logger writes to the os.Stdout of that moment) and slog's default
// logger, which no other test of the package may use meanwhile.
func TestLogsOnAdoption(t *testing.T) {
	type observed struct {
		Stdout  []string
		Default []string
	}
	var got [2]observed
	for i, adopt := range []bool{false, true} {
		got[i] = func() observed {
			ctx := context.Background()
			pool := riversharedtest.DBPool(ctx, t)
			schema := freshRiverSchema(t, pool)

			// The application's life before: plain River worked a job.
			before, err := river.NewClient(riverpgxv5.New(pool), &river.Config{Schema: schema, Queues: queues(),
				Logger:  slog.New(slog.NewTextHandler(io.Discard, nil)),
				Workers: workers(func(ctx context.Context, job *river.Job[args]) error { return nil })})
			require.NoError(t, err)
			events, cancel := before.Subscribe(finalKinds...)
			require.NoError(t, before.Start(ctx))
			_, err = before.Insert(ctx, args{Name: "before"}, nil)
			require.NoError(t, err)
			awaitEvents(t, events, completedCount(1))
			cancel()
			require.NoError(t, before.Stop(ctx))

			build := func(config *river.Config) (*river.Client[pgx.Tx], error) {
				config.Schema = schema
				return river.NewClient(riverpgxv5.New(pool), config)
			}
			if adopt {
				_, err := workflow.MigrateUp(ctx, pool, &workflow.MigrateOpts{Schema: schema, SkipMainLine: true})
				require.NoError(t, err)
				engine, err := workflow.NewEngine(pool, &workflow.Config{Schema: schema})
				require.NoError(t, err)
				build = func(config *river.Config) (*river.Client[pgx.Tx], error) { return workflow.NewClient(engine, config) }
			}

			defaultLog := &lineRecorder{}
			previous := slog.Default()
			slog.SetDefault(slog.New(slog.NewTextHandler(defaultLog, &slog.HandlerOptions{Level: slog.LevelDebug})))
			defer slog.SetDefault(previous)

			stdout := captureStdout(t)
			// A retried job (River logs it at INFO) and a job that outlives
			// its timeout (River warns that it appears stuck).
			client, err := build(&river.Config{Queues: queues(), JobTimeout: 50 * time.Millisecond, JobStuckThreshold: 50 * time.Millisecond,
				Workers: workers(func(ctx context.Context, job *river.Job[args]) error {
					if job.Args.Mode == "stuck" {
						time.Sleep(500 * time.Millisecond) // ignores its context
						return nil
					}
					if job.Attempt == 1 {
						return errBoom
					}
					return nil
				})})
			stdout.restore()
			require.NoError(t, err)

			events, cancel = client.Subscribe(finalKinds...)
			defer cancel()
			require.NoError(t, client.Start(ctx))
			_, err = client.Insert(ctx, args{Name: "retried"}, &river.InsertOpts{MaxAttempts: 2})
			require.NoError(t, err)
			_, err = client.Insert(ctx, args{Name: "stuck", Mode: "stuck"}, nil)
			require.NoError(t, err)
			awaitEvents(t, events, completedCount(2))
			require.NoError(t, client.Stop(ctx))
			// What River logs about itself under load (its elector, its
			// notifier) may differ from run to run: the jobs' lines and
			// riverbpmn's are compared, and slog.Default's whole.
			var jobLines []string
			for _, line := range stdout.lines(t) {
				if strings.Contains(line, "JobExecutor") || strings.Contains(line, "riverbpmn") {
					jobLines = append(jobLines, line)
				}
			}
			return observed{Stdout: jobLines, Default: defaultLog.lines()}
		}()
	}
	require.Equal(t, got[0], got[1], "stock River (expected) and workflow.NewClient after adoption (actual) log differently")
}

// freshRiverSchema creates a schema of its own with River's main line only,
// dropped when the test ends.
func freshRiverSchema(t *testing.T, pool *pgxpool.Pool) string {
	t.Helper()
	ctx := context.Background()
	schema := fmt.Sprintf("compat_adopted_%d", time.Now().UnixNano())
	_, err := pool.Exec(ctx, "CREATE SCHEMA "+pgx.Identifier{schema}.Sanitize())
	require.NoError(t, err)
	t.Cleanup(func() {
		_, err := pool.Exec(context.Background(), "DROP SCHEMA "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
		require.NoError(t, err)
	})
	migrator, err := rivermigrate.New(riverpgxv5.New(pool), &rivermigrate.Config{Schema: schema})
	require.NoError(t, err)
	_, err = migrator.Migrate(ctx, rivermigrate.DirectionUp, nil)
	require.NoError(t, err)
	return schema
}

// stdoutCapture is os.Stdout replaced by a pipe whose writes are kept.
type stdoutCapture struct {
	saved *os.File
	w     *os.File
	done  chan struct{}
	buf   bytes.Buffer
}

func captureStdout(t *testing.T) *stdoutCapture {
	t.Helper()
	r, w, err := os.Pipe()
	require.NoError(t, err)
	c := &stdoutCapture{saved: os.Stdout, w: w, done: make(chan struct{})}
	go func() {
		defer close(c.done)
		_, _ = io.Copy(&c.buf, r)
	}()
	os.Stdout = w
	t.Cleanup(func() { c.restore() })
	return c
}

// restore puts os.Stdout back; what was given the pipe keeps writing to it.
func (c *stdoutCapture) restore() { os.Stdout = c.saved }

// lines closes the pipe and returns what was written, as logLines.
func (c *stdoutCapture) lines(t *testing.T) []string {
	t.Helper()
	require.NoError(t, c.w.Close())
	<-c.done
	return logLines(c.buf.Bytes())
}

// lineRecorder is an io.Writer for a slog handler.
type lineRecorder struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *lineRecorder) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *lineRecorder) lines() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return logLines(l.buf.Bytes())
}

var levelAndMessage = regexp.MustCompile(`level=(\S+) msg=("(?:[^"\\]|\\.)*"|\S+)`)

// logLines reduces slog text lines to their level and message (times, ids
// and durations differ from run to run), sorted.
func logLines(raw []byte) []string {
	var out []string
	scanner := bufio.NewScanner(bytes.NewReader(raw))
	for scanner.Scan() {
		if m := levelAndMessage.FindStringSubmatch(scanner.Text()); m != nil {
			out = append(out, m[1]+" "+m[2])
		} else {
			out = append(out, scanner.Text())
		}
	}
	slices.Sort(out)
	return out
}
