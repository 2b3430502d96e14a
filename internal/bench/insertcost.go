package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// InsertCostResult is what the indexes that only some clients use (the
// head-of-key indexes by priority of migration riverbpmn/010) cost every
// insert of an exclusive job: the time to queue the same backlog with and
// without them.
type InsertCostResult struct {
	// Indexes are the indexes measured.
	Indexes []string `json:"indexes"`
	// Jobs is the number of exclusive jobs queued per sample, in one
	// INSERT ... SELECT.
	Jobs int `json:"jobs"`
	// With and Without summarize the milliseconds per sample.
	With    Summary `json:"with_ms"`
	Without Summary `json:"without_ms"`
	// Ratio is With's median over Without's.
	Ratio float64 `json:"ratio"`
}

// insertCostIndexes are the indexes insert cost is measured for.
var insertCostIndexes = []string{"river_bpmn_job_exclusive_instance_p", "river_bpmn_job_exclusive_root_p"}

// runInsertCost queues opts.Jobs (default 20,000) exclusive jobs of the
// benchmark workload (10 per process instance) opts.Rounds times with the
// indexes and as often without, alternating, and returns the times.
func runInsertCost(ctx context.Context, pool *pgxpool.Pool, opts *Options) (*InsertCostResult, error) {
	jobs := opts.Jobs
	if jobs == 0 {
		jobs = DefaultOptions.Jobs
	}
	w := Workload{Instances: max(jobs/10, 1)}
	insertCostIndexes := insertCostIndexes
	if len(opts.InsertCostIndexes) > 0 {
		insertCostIndexes = opts.InsertCostIndexes
	}
	insert := fmt.Sprintf(`INSERT INTO %s (args, kind, max_attempts, metadata, priority, queue, state, scheduled_at)
		SELECT jsonb_build_object('seq', i), %s, 25, %s, 1, 'default', 'available', now()
		FROM generate_series(1, $1::bigint) AS i`,
		table(opts.Schema, "river_job"), quoteLiteral(Args{}.Kind()), w.metadataSQL("i"))

	var defs []string
	for _, name := range insertCostIndexes {
		var def string
		if err := pool.QueryRow(ctx, "SELECT pg_get_indexdef(to_regclass($1))", table(opts.Schema, name)).Scan(&def); err != nil {
			return nil, fmt.Errorf("reading index %s (is its migration applied?): %w", name, err)
		}
		defs = append(defs, def)
	}
	restore := func() error {
		for i, name := range insertCostIndexes {
			var exists bool
			if err := pool.QueryRow(ctx, "SELECT to_regclass($1) IS NOT NULL", table(opts.Schema, name)).Scan(&exists); err != nil {
				return err
			}
			if !exists {
				if _, err := pool.Exec(ctx, defs[i]); err != nil {
					return err
				}
			}
		}
		return nil
	}
	defer func() { _ = restore() }()

	sample := func(with bool) (float64, error) {
		if _, err := pool.Exec(ctx, "TRUNCATE "+table(opts.Schema, "river_job")); err != nil {
			return 0, err
		}
		if with {
			if err := restore(); err != nil {
				return 0, err
			}
		} else {
			for _, name := range insertCostIndexes {
				if _, err := pool.Exec(ctx, "DROP INDEX IF EXISTS "+table(opts.Schema, name)); err != nil {
					return 0, err
				}
			}
		}
		start := time.Now()
		if _, err := pool.Exec(ctx, insert, jobs); err != nil {
			return 0, err
		}
		return ms(time.Since(start)), nil
	}
	var with, without []float64
	for round := range opts.Rounds {
		for _, w := range []bool{round%2 == 0, round%2 != 0} {
			d, err := sample(w)
			if err != nil {
				return nil, err
			}
			if w {
				with = append(with, d)
			} else {
				without = append(without, d)
			}
			fmt.Fprintf(opts.Progress, "insert cost: round %d/%d, %d exclusive jobs %s the indexes: %.0fms\n",
				round+1, opts.Rounds, jobs, map[bool]string{true: "with", false: "without"}[w], d)
		}
	}
	res := &InsertCostResult{Indexes: insertCostIndexes, Jobs: jobs, With: summarize(with), Without: summarize(without)}
	res.Ratio = ratio(res.With.Median, res.Without.Median)
	return res, nil
}
