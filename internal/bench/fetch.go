package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/riverbpmn/riverbpmn/exclusive"
	"github.com/riverbpmn/riverbpmn/liveness"
	"github.com/riverbpmn/riverbpmn/workflow"
)

// fetchSize is the number of jobs one fetch locks: River's producer asks for
// at most its free worker slots, 100 with 100 workers.
const fetchSize = 100

// FetchTargetP99Ratio is the highest acceptable ratio of a riverbpmn
// variant's fetch p99 to stock River's.
const FetchTargetP99Ratio = 2.0

// SizeResult is the fetch latency of every variant with one backlog size.
type SizeResult struct {
	// Available is the number of available jobs, constant while sampling.
	Available int `json:"available"`
	// LoadSeconds is how long queueing the backlog took (indexes and
	// ANALYZE included).
	LoadSeconds float64 `json:"load_seconds"`
	// Samples is the number of fetches timed per variant.
	Samples int `json:"samples"`
	// Variants has stock River first.
	Variants []VariantResult `json:"variants"`
}

// VariantResult is one variant's fetch latency with one backlog size.
type VariantResult struct {
	Variant string  `json:"variant"`
	Summary string  `json:"summary"`
	Latency Latency `json:"latency"`
	// RatioP50 and RatioP99 are the percentiles over stock River's.
	RatioP50 float64 `json:"ratio_p50"`
	RatioP99 float64 `json:"ratio_p99"`
	// MeetsTarget says whether RatioP99 <= FetchTargetP99Ratio (riverbpmn
	// variants only).
	MeetsTarget *bool `json:"meets_target,omitempty"`
}

// fetchVariant is one way of fetching: stock River (acq nil) or riverbpmn's
// pilot with an acquisition, on an engine enforcing exclusivity with scope.
type fetchVariant struct {
	name    string
	summary string
	acq     *workflow.Acquisition
	scope   exclusive.Scope
	batch   int // workflow.Config.ExclusiveBatch
}

// fetchInstances is the number of process instances the fetch latency
// backlog's jobs are spread over, round-robin: 10 jobs each at 1M available
// jobs, as many instances as jobs up to 100k.
const fetchInstances = 100_000

func fetchVariants(w Workload) []fetchVariant {
	r := w.PriorityRange()
	camunda := camundaAcquisition(w)
	everything := workflow.Acquisition{ByPriority: true, TimersFirst: true, ByDueDate: true, PriorityRange: &r,
		DeploymentAware: true, Deployments: w.DeploymentIDs()}
	return []fetchVariant{
		{"stock", "riverpgxv5 executor JobGetAvailable", nil, exclusive.None, 0},
		{"none", "riverbpmn pilot, no acquisition feature", &workflow.Acquisition{}, exclusive.None, 0},
		{"priority", "by priority", &workflow.Acquisition{ByPriority: true}, exclusive.None, 0},
		{"priority-range-deployment", "by priority, full range, deployment aware (all deployments)", &workflow.Acquisition{
			ByPriority: true, PriorityRange: &r, DeploymentAware: true, Deployments: w.DeploymentIDs(),
		}, exclusive.None, 0},
		{"timers-due-date", "timers first, by due date", &workflow.Acquisition{TimersFirst: true, ByDueDate: true}, exclusive.None, 0},
		{"all-orderings", "by priority, timers first, by due date", &workflow.Acquisition{ByPriority: true, TimersFirst: true, ByDueDate: true}, exclusive.None, 0},
		{"exclusive", "exclusive per process instance, River's order", &workflow.Acquisition{}, exclusive.ProcessInstance, 0},
		{"camunda", "exclusive per process instance, by priority, full range, deployment aware (all deployments)", &camunda, exclusive.ProcessInstance, 0},
		{"exclusive-everything", "exclusive per process instance, by priority, timers first, by due date, full range, deployment aware", &everything, exclusive.ProcessInstance, 0},
		{"exclusive-root-everything", "exclusive per root process instance, every acquisition option", &everything, exclusive.RootProcessInstance, 0},
		{"exclusive-batch", fmt.Sprintf("exclusive per process instance, River's order, runs of up to %d jobs of a key (ExclusiveBatch)", benchExclusiveBatch),
			&workflow.Acquisition{}, exclusive.ProcessInstance, benchExclusiveBatch},
		{"camunda-batch", fmt.Sprintf("camunda, runs of up to %d jobs of a key (ExclusiveBatch)", benchExclusiveBatch),
			&camunda, exclusive.ProcessInstance, benchExclusiveBatch},
	}
}

// fetchFunc locks one batch of jobs and returns their ids.
type fetchFunc func(ctx context.Context) ([]int64, error)

func newFetchFunc(ctx context.Context, pool *pgxpool.Pool, engine *workflow.Engine, schema string, v fetchVariant) (fetchFunc, error) {
	params := &riverdriver.JobGetAvailableParams{
		ClientID:       "riverbpmn-bench",
		MaxAttemptedBy: 100,
		MaxToLock:      fetchSize,
		Queue:          "default",
		Schema:         schema,
	}
	var get func(ctx context.Context) (*riverdriver.JobGetAvailableResult, error)
	if v.acq == nil {
		exec := riverpgxv5.New(pool).GetExecutor()
		get = func(ctx context.Context) (*riverdriver.JobGetAvailableResult, error) {
			return exec.JobGetAvailable(ctx, params)
		}
	} else {
		if v.scope.Enabled() {
			var err error
			engine, err = workflow.NewEngine(pool, &workflow.Config{Schema: schema, ExclusiveScope: v.scope, ExclusiveBatch: v.batch, Liveness: liveness.Config{Disabled: true}})
			if err != nil {
				return nil, err
			}
		}
		driver, err := engine.NewDriver(*v.acq)
		if err != nil {
			return nil, err
		}
		// What the client of this acquisition does when it starts; the
		// head-of-key index for the variant's own scope, which a schema
		// whose clients enforce it records (this schema records one scope
		// for every variant).
		if err := engine.EnableFetchOrderIndexes(ctx, *v.acq); err != nil {
			return nil, err
		}
		if v.scope.Enabled() {
			if err := engine.Exclusive().EnableHeadIndexesForScope(ctx, v.scope, v.acq.Order()); err != nil {
				return nil, err
			}
		}
		// The call River's producer makes: the client's pilot with the
		// driver's executor.
		pilot, exec := driver.PluginPilot(), driver.GetExecutor()
		get = func(ctx context.Context) (*riverdriver.JobGetAvailableResult, error) {
			return pilot.JobGetAvailable(ctx, exec, nil, params)
		}
	}
	return func(ctx context.Context) ([]int64, error) {
		res, err := get(ctx)
		if err != nil {
			return nil, err
		}
		ids := make([]int64, len(res.Jobs))
		for i, job := range res.Jobs {
			ids[i] = job.ID
		}
		return ids, nil
	}, nil
}

// warmupRounds are fetches per variant before timing: connections, prepared
// statements and caches.
const warmupRounds = 5

func runFetchLatency(ctx context.Context, pool *pgxpool.Pool, opts *Options) ([]SizeResult, error) {
	// The variants without exclusivity opt out of what is on by default;
	// the fetches call the pilot directly, with no client and no liveness
	// session.
	engine, err := workflow.NewEngine(pool, &workflow.Config{Schema: opts.Schema, ExclusiveScope: exclusive.None, Liveness: liveness.Config{Disabled: true}})
	if err != nil {
		return nil, err
	}
	workload := Workload{Instances: fetchInstances, PriorityLevels: opts.PriorityLevels}
	variants := fetchVariants(workload)
	fetchers := make([]fetchFunc, len(variants))
	for i, v := range variants {
		if fetchers[i], err = newFetchFunc(ctx, pool, engine, opts.Schema, v); err != nil {
			return nil, fmt.Errorf("fetch variant %s: %w", v.name, err)
		}
	}

	sizes := slices.Clone(opts.Sizes)
	slices.Sort(sizes)
	sizes = slices.Compact(sizes)

	if _, err := pool.Exec(ctx, "TRUNCATE "+table(opts.Schema, "river_job")); err != nil {
		return nil, err
	}
	loaded := 0
	results := make([]SizeResult, 0, len(sizes))
	for _, size := range sizes {
		fmt.Fprintf(opts.Progress, "fetch latency: queueing %d available jobs\n", size)
		start := time.Now()
		if err := loadBacklog(ctx, pool, opts.Progress, opts.Schema, workload, loaded, size); err != nil {
			return nil, err
		}
		loaded = size
		res := SizeResult{Available: size, LoadSeconds: time.Since(start).Seconds(), Samples: opts.Samples}
		fmt.Fprintf(opts.Progress, "fetch latency: %d jobs queued in %.1fs; timing %d fetches of %d per variant\n",
			size, res.LoadSeconds, opts.Samples, fetchSize)

		durations, err := sampleFetches(ctx, pool, opts, size, variants, fetchers)
		if err != nil {
			return nil, err
		}
		for i, v := range variants {
			vr := VariantResult{Variant: v.name, Summary: v.summary, Latency: latencyOf(durations[i])}
			stock := latencyOf(durations[0])
			vr.RatioP50 = ratio(vr.Latency.P50Ms, stock.P50Ms)
			vr.RatioP99 = ratio(vr.Latency.P99Ms, stock.P99Ms)
			if v.acq != nil {
				meets := vr.RatioP99 <= FetchTargetP99Ratio
				vr.MeetsTarget = &meets
			}
			res.Variants = append(res.Variants, vr)
			fmt.Fprintf(opts.Progress, "fetch latency: %8d available %-27s p50 %7.2fms p99 %7.2fms (x%.2f, x%.2f)\n",
				size, v.name, vr.Latency.P50Ms, vr.Latency.P99Ms, vr.RatioP50, vr.RatioP99)
		}
		results = append(results, res)
	}
	return results, nil
}

// sampleFetches times opts.Samples fetches per variant. The variants take
// turns in a shuffled order each round (seeded, so runs are repeatable), so
// that drift and periodic events affect them alike. Every fetch's jobs are
// put back to available, so the backlog stays the same size, and the
// exclusive keys they took are given back, as the end of their work would
// give them back: a key left held by a job put back to available is stale,
// and every later fetch of that key would time a takeover (a probe of the
// holder and a replacing write) that a running system does not do.
//
// After each put-back (untimed), the pending lists of river_job's GIN
// indexes are flushed. Without that, whichever statement fills a pending
// list (4MB by default) merges it into the index, a 50-70ms stall that
// belongs to no variant: it follows the number of rows updated, so with a
// fixed order it would land on the same variants every time. The
// throughput benchmark keeps these stalls, where they are part of the cost.
func sampleFetches(ctx context.Context, pool *pgxpool.Pool, opts *Options, size int, variants []fetchVariant, fetchers []fetchFunc) ([][]time.Duration, error) {
	putBack := fmt.Sprintf(`UPDATE %s SET state = 'available', attempt = 0, attempted_at = NULL, attempted_by = NULL
		WHERE id = ANY($1::bigint[])`, table(opts.Schema, "river_job"))
	giveKeysBack := fmt.Sprintf(`UPDATE %s SET job_id = NULL, attempt = NULL, released_at = now()
		WHERE job_id = ANY($1::bigint[])`, table(opts.Schema, "river_bpmn_exclusive_lock"))
	flushGIN := `SELECT gin_clean_pending_list(i.indexrelid)
		FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am am ON am.oid = c.relam
		WHERE i.indrelid = $1::regclass AND am.amname = 'gin'`
	vacuum := "VACUUM " + table(opts.Schema, "river_job")
	// Vacuum as autovacuum would (20% of the rows updated), but between
	// samples rather than during one.
	vacuumAfter := max(size/5, 10*fetchSize*len(variants))
	touched := 0

	rng := rand.New(rand.NewPCG(uint64(size), 7)) //nolint:gosec // an order, not a secret
	order := make([]int, len(variants))
	for i := range order {
		order[i] = i
	}
	durations := make([][]time.Duration, len(variants))
	for round := -warmupRounds; round < opts.Samples; round++ {
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for _, vi := range order {
			start := time.Now()
			ids, err := fetchers[vi](ctx)
			elapsed := time.Since(start)
			if err != nil {
				return nil, fmt.Errorf("fetch variant %s: %w", variants[vi].name, err)
			}
			if len(ids) != fetchSize {
				return nil, fmt.Errorf("fetch variant %s locked %d jobs of %d available, want %d", variants[vi].name, len(ids), size, fetchSize)
			}
			if _, err := pool.Exec(ctx, putBack, ids); err != nil {
				return nil, fmt.Errorf("putting fetched jobs back: %w", err)
			}
			if variants[vi].scope.Enabled() {
				if _, err := pool.Exec(ctx, giveKeysBack, ids); err != nil {
					return nil, fmt.Errorf("giving fetched jobs' keys back: %w", err)
				}
			}
			if _, err := pool.Exec(ctx, flushGIN, table(opts.Schema, "river_job")); err != nil {
				return nil, fmt.Errorf("flushing GIN pending lists: %w", err)
			}
			if round >= 0 {
				durations[vi] = append(durations[vi], elapsed)
			}
			touched += len(ids)
		}
		if touched >= vacuumAfter {
			if _, err := pool.Exec(ctx, vacuum); err != nil {
				return nil, err
			}
			touched = 0
		}
	}
	return durations, nil
}

// droppedIndexTable remembers the indexes of river_job that loadBacklog
// dropped, until they are rebuilt, so that an interrupted load is repaired
// by the next run (prepareSchema).
const droppedIndexTable = "riverbpmn_bench_dropped_index"

// loadBacklog grows the backlog from jobs from+1 to to, all available. Rows
// are generated in SQL with the metadata the middleware would store
// (Workload.metadataSQL). Indexes are dropped for the load and rebuilt
// afterwards (a million rows through a dozen indexes, two of them GIN, take
// minutes row by row and tens of seconds in bulk); both steps run on
// several connections.
func loadBacklog(ctx context.Context, pool *pgxpool.Pool, progress io.Writer, schema string, w Workload, from, to int) error {
	start := time.Now()
	if err := dropIndexes(ctx, pool, schema); err != nil {
		return err
	}

	insert := fmt.Sprintf(`INSERT INTO %s (args, kind, max_attempts, metadata, priority, queue, state, scheduled_at)
		SELECT jsonb_build_object('seq', i), %s, 25, %s, 1, 'default', 'available',
			now() - ((i * 7) %% 3600) * interval '1 second'
		FROM generate_series($1::bigint, $2::bigint) AS i`,
		table(schema, "river_job"), quoteLiteral(Args{}.Kind()), w.metadataSQL("i"))
	const chunk = 50_000
	var tasks []func(ctx context.Context, conn *pgxpool.Conn) error
	for lo := from + 1; lo <= to; lo += chunk {
		hi := min(lo+chunk-1, to)
		tasks = append(tasks, func(ctx context.Context, conn *pgxpool.Conn) error {
			_, err := conn.Exec(ctx, insert, lo, hi)
			return err
		})
	}
	insertErr := parallel(ctx, pool, tasks)
	inserted := time.Now()

	// Rebuild even after a failed insert: the schema must keep its indexes.
	rebuildErr := restoreIndexes(ctx, pool, schema)
	if err := errors.Join(insertErr, rebuildErr); err != nil {
		return fmt.Errorf("queueing the fetch latency backlog: %w", err)
	}
	rebuilt := time.Now()
	if _, err := pool.Exec(ctx, "VACUUM (ANALYZE) "+table(schema, "river_job")); err != nil {
		return err
	}
	fmt.Fprintf(progress, "fetch latency: %d jobs inserted in %.1fs, indexes rebuilt in %.1fs, VACUUM ANALYZE in %.1fs\n",
		to-from, inserted.Sub(start).Seconds(), rebuilt.Sub(inserted).Seconds(), time.Since(rebuilt).Seconds())
	return nil
}

// dropIndexes drops every index of river_job but its primary key, recording
// their definitions in droppedIndexTable in the same transaction.
func dropIndexes(ctx context.Context, pool *pgxpool.Pool, schema string) error {
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, fmt.Sprintf(`CREATE TABLE IF NOT EXISTS %s (name text PRIMARY KEY, definition text NOT NULL)`,
			table(schema, droppedIndexTable))); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `
			SELECT c.relname, pg_get_indexdef(i.indexrelid)
			FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
			WHERE i.indrelid = $1::regclass AND NOT i.indisprimary
			ORDER BY c.relname`, table(schema, "river_job"))
		if err != nil {
			return err
		}
		indexes, err := collectIndexes(rows)
		if err != nil {
			return err
		}
		for _, ix := range indexes {
			if _, err := tx.Exec(ctx, fmt.Sprintf(`INSERT INTO %s (name, definition) VALUES ($1, $2)`,
				table(schema, droppedIndexTable)), ix.name, ix.def); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, "DROP INDEX "+table(schema, ix.name)); err != nil {
				return err
			}
		}
		return nil
	})
}

// index is an index's name and definition (pg_get_indexdef).
type index struct{ name, def string }

// collectIndexes reads (name, definition) rows.
func collectIndexes(rows pgx.Rows) ([]index, error) {
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (index, error) {
		var ix index
		return ix, row.Scan(&ix.name, &ix.def)
	})
}

// restoreIndexes rebuilds the indexes recorded in droppedIndexTable, on
// several connections, GIN indexes (the slowest) first, and drops the table.
// Without the table it does nothing.
func restoreIndexes(ctx context.Context, pool *pgxpool.Pool, schema string) error {
	var exists bool
	if err := pool.QueryRow(ctx, "SELECT to_regclass($1) IS NOT NULL", table(schema, droppedIndexTable)).Scan(&exists); err != nil {
		return err
	}
	if !exists {
		return nil
	}
	rows, err := pool.Query(ctx, fmt.Sprintf(`SELECT name, definition FROM %s ORDER BY definition LIKE '%% USING gin %%' DESC, name`,
		table(schema, droppedIndexTable)))
	if err != nil {
		return err
	}
	indexes, err := collectIndexes(rows)
	if err != nil {
		return err
	}
	tasks := make([]func(ctx context.Context, conn *pgxpool.Conn) error, len(indexes))
	for i, ix := range indexes {
		tasks[i] = func(ctx context.Context, conn *pgxpool.Conn) error {
			return pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
				if _, err := tx.Exec(ctx, "SET LOCAL maintenance_work_mem = '256MB'"); err != nil {
					return err
				}
				if _, err := tx.Exec(ctx, ix.def); err != nil {
					return fmt.Errorf("rebuilding index %s: %w", ix.name, err)
				}
				_, err := tx.Exec(ctx, fmt.Sprintf("DELETE FROM %s WHERE name = $1", table(schema, droppedIndexTable)), ix.name)
				return err
			})
		}
	}
	if err := parallel(ctx, pool, tasks); err != nil {
		return err
	}
	_, err = pool.Exec(ctx, "DROP TABLE "+table(schema, droppedIndexTable))
	return err
}

// parallel runs tasks in order on as many connections as there are CPUs
// (at least two, at most the pool's size), and returns the first error.
// After an error no further task starts.
func parallel(ctx context.Context, pool *pgxpool.Pool, tasks []func(ctx context.Context, conn *pgxpool.Conn) error) error {
	workers := min(max(runtime.NumCPU(), 2), int(pool.Config().MaxConns), len(tasks))
	var (
		mu    sync.Mutex
		next  int
		first error
		wg    sync.WaitGroup
	)
	take := func() func(ctx context.Context, conn *pgxpool.Conn) error {
		mu.Lock()
		defer mu.Unlock()
		if first != nil || next == len(tasks) {
			return nil
		}
		next++
		return tasks[next-1]
	}
	fail := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		if first == nil {
			first = err
		}
	}
	for range workers {
		wg.Go(func() {
			conn, err := pool.Acquire(ctx)
			if err != nil {
				fail(err)
				return
			}
			defer conn.Release()
			for task := take(); task != nil; task = take() {
				if err := task(ctx, conn); err != nil {
					fail(err)
					return
				}
			}
		})
	}
	wg.Wait()
	return first
}
