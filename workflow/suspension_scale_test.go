package workflow

import (
	"context"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/exclusive"
	"github.com/riverbpmn/riverbpmn/internal/longtest"
)

// TestSuspensionScale suspends, then activates, a job definition with
// IncludeJobs over many jobs while another goroutine keeps inserting jobs of
// the definition, and reports how long the cascade took and how long an
// insert waited at most. 5,000 jobs by default; set
// RIVERBPMN_SUSPENSION_SCALE_JOBS=100000 for the figure in the README.
func TestSuspensionScale(t *testing.T) {
	longtest.Skip(t)
	t.Parallel()
	ctx := context.Background()
	jobs := 5_000
	if v := os.Getenv("RIVERBPMN_SUSPENSION_SCALE_JOBS"); v != "" {
		n, err := strconv.Atoi(v)
		require.NoError(t, err)
		jobs = n
	}
	engine, schema := suspEngine(t, exclusive.None)
	client := newSuspClient(t, engine, engine.Driver(), schema, newSuspRecorder())

	// The backlog, written as the engine writes it (the insert trigger runs).
	_, err := engine.dbPool.Exec(ctx, engine.sql(`
		INSERT INTO /* TEMPLATE: schema */river_job (args, kind, max_attempts, metadata, priority, queue, state)
		SELECT '{}', 'susp_test', 3,
			jsonb_build_object('bpmn', jsonb_build_object('process_definition_key', 'susp_process', 'job_definition_id', 'susp_task',
				'activity_id', 'task', 'process_instance_id', 'pi-' || i, 'priority', 0, 'exclusive', true)),
			1, 'default', 'available'
		FROM generate_series(1, $1::integer) AS i`), jobs)
	require.NoError(t, err)
	_, err = engine.dbPool.Exec(ctx, engine.sql(`ANALYZE /* TEMPLATE: schema */river_job`))
	require.NoError(t, err)

	// measure runs f while inserting jobs of the definition one by one, and
	// returns the insert latencies.
	measure := func(f func()) []time.Duration {
		var (
			stop      atomic.Bool
			mu        sync.Mutex
			latencies []time.Duration
			wg        sync.WaitGroup
		)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				start := time.Now()
				_, err := client.Insert(ctx, suspArgs{Name: "concurrent", JobDef: "susp_task"}, &river.InsertOpts{})
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				latencies = append(latencies, time.Since(start))
				mu.Unlock()
			}
		}()
		time.Sleep(50 * time.Millisecond)
		f()
		stop.Store(true)
		wg.Wait()
		slices.Sort(latencies)
		return latencies
	}
	report := func(what string, res *SuspensionResult, latencies []time.Duration) {
		require.NotEmpty(t, latencies)
		t.Logf("%s: %d jobs in %d batches of %d in %s (longest batch %s); %d concurrent inserts, median %s, max %s",
			what, res.Jobs, res.Batches, 1000, res.Duration.Round(time.Millisecond), res.LongestBatch.Round(time.Millisecond),
			len(latencies), latencies[len(latencies)/2].Round(time.Microsecond), latencies[len(latencies)-1].Round(time.Microsecond))
		// An insert waits for at most one batch (plus the machine's noise).
		require.Less(t, latencies[len(latencies)-1], 5*time.Second)
	}

	var res *SuspensionResult
	latencies := measure(func() {
		res, err = engine.SuspendJobDefinition(ctx, "susp_task", &SuspendOpts{IncludeJobs: true})
		require.NoError(t, err)
	})
	report("suspend", res, latencies)
	require.GreaterOrEqual(t, res.Jobs, int64(jobs))
	var active int
	require.NoError(t, engine.dbPool.QueryRow(ctx, engine.sql(`SELECT count(*) FROM /* TEMPLATE: schema */river_job WHERE state <> 'pending'`)).Scan(&active))
	require.Zero(t, active)

	latencies = measure(func() {
		res, err = engine.ActivateJobDefinition(ctx, "susp_task", &SuspendOpts{IncludeJobs: true})
		require.NoError(t, err)
	})
	report("activate", res, latencies)
	require.NoError(t, engine.dbPool.QueryRow(ctx, engine.sql(`SELECT count(*) FROM /* TEMPLATE: schema */river_job WHERE state = 'pending'`)).Scan(&active))
	require.Zero(t, active)
}
