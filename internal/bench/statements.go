package bench

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// ServerTime is the database's own time spent on a side's statements while
// its client worked the backlog off, per job worked, in microseconds, from
// pg_stat_statements (planning times need track_planning). Unlike jobs/s it
// hardly depends on what else the machine runs, so designs measured on a
// busy machine still compare.
type ServerTime struct {
	// FetchPlanUs and FetchExecUs are the fetch statements' planning and
	// execution time per job: River's fetch, riverbpmn's, and both
	// statements of a running-row fetch.
	FetchPlanUs float64 `json:"fetch_plan_us"`
	FetchExecUs float64 `json:"fetch_exec_us"`
	// FetchCalls is the number of fetch statements run, FetchPlans how
	// many of them were planned (a statement running a cached generic plan
	// is not).
	FetchCalls float64 `json:"fetch_calls"`
	FetchPlans float64 `json:"fetch_plans"`
	// AllUs is every statement's planning and execution time per job (the
	// fetches, the completer, the producers' bookkeeping, releases).
	AllUs float64 `json:"all_us"`
}

// statementTotals are pg_stat_statements' cumulative totals for the current
// database at one moment.
type statementTotals struct {
	fetchPlanMs, fetchExecMs, allMs float64
	fetchCalls, fetchPlans          int64
	dealloc                         int64
}

// statementTotalsSQL sums pg_stat_statements over the current database. A
// fetch statement moves jobs to running and appends the client to
// attempted_by (River's, riverbpmn's), or takes advisory locks on candidate
// keys (statement 1 of a running-row fetch); constants are normalized away
// in the stored text, names are not.
const statementTotalsSQL = `
SELECT
    coalesce(sum(total_plan_time) FILTER (WHERE is_fetch), 0),
    coalesce(sum(total_exec_time) FILTER (WHERE is_fetch), 0),
    coalesce(sum(total_plan_time + total_exec_time), 0),
    coalesce(sum(calls) FILTER (WHERE is_fetch), 0)::bigint,
    coalesce(sum(plans) FILTER (WHERE is_fetch), 0)::bigint
FROM (
    SELECT
        s.*,
        (s.query LIKE '%attempted_by = array_append%' OR s.query LIKE '%pg_try_advisory_xact_lock%') AS is_fetch
    FROM STATS_SCHEMA.pg_stat_statements AS s
    WHERE s.dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
        AND s.query NOT LIKE '%pg_stat_statements%'
) AS s`

// statementsSchema returns the schema pg_stat_statements is installed in for
// the current database, installing it (in public) if the server loads the
// module; "" when it cannot be used.
func statementsSchema(ctx context.Context, pool *pgxpool.Pool) string {
	var schema string
	err := pool.QueryRow(ctx, `SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pg_stat_statements'`).Scan(&schema)
	if err == nil {
		return schema
	}
	if _, err := pool.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS pg_stat_statements SCHEMA public"); err != nil {
		return ""
	}
	var probe int64
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM public.pg_stat_statements").Scan(&probe); err != nil {
		return "" // installed, but the server does not load the module
	}
	return "public"
}

func readStatementTotals(ctx context.Context, pool *pgxpool.Pool, schema string) (*statementTotals, error) {
	var t statementTotals
	quoted := pgx.Identifier{schema}.Sanitize()
	err := pool.QueryRow(ctx, strings.Replace(statementTotalsSQL, "STATS_SCHEMA", quoted, 1)).Scan(&t.fetchPlanMs, &t.fetchExecMs, &t.allMs, &t.fetchCalls, &t.fetchPlans)
	if err != nil {
		return nil, fmt.Errorf("reading pg_stat_statements: %w", err)
	}
	// Entries evicted in between (pg_stat_statements.max reached) would be
	// missing from a difference.
	if err := pool.QueryRow(ctx, "SELECT dealloc FROM "+quoted+".pg_stat_statements_info").Scan(&t.dealloc); err != nil {
		return nil, fmt.Errorf("reading pg_stat_statements_info: %w", err)
	}
	return &t, nil
}

// serverTimePerJob is the difference end - start over jobs jobs; nil when
// pg_stat_statements evicted entries in between.
func serverTimePerJob(start, end *statementTotals, jobs int) *ServerTime {
	if start == nil || end == nil || end.dealloc != start.dealloc {
		return nil
	}
	n := float64(max(jobs, 1))
	return &ServerTime{
		FetchPlanUs: (end.fetchPlanMs - start.fetchPlanMs) * 1000 / n,
		FetchExecUs: (end.fetchExecMs - start.fetchExecMs) * 1000 / n,
		FetchCalls:  float64(end.fetchCalls - start.fetchCalls),
		FetchPlans:  float64(end.fetchPlans - start.fetchPlans),
		AllUs:       (end.allMs - start.allMs) * 1000 / n,
	}
}

// statementsByQuery is one snapshot of pg_stat_statements for the current
// database, by query id.
type statementsByQuery map[int64]statementRow

type statementRow struct {
	query          string
	calls, plans   int64
	planMs, execMs float64
}

func readStatementsByQuery(ctx context.Context, pool *pgxpool.Pool, schema string) (statementsByQuery, error) {
	rows, err := pool.Query(ctx, `SELECT queryid, calls, plans, total_plan_time, total_exec_time, left(regexp_replace(query, '\s+', ' ', 'g'), 110)
		FROM `+pgx.Identifier{schema}.Sanitize()+`.pg_stat_statements
		WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) AND query NOT LIKE '%pg_stat_statements%'`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	byQuery := statementsByQuery{}
	for rows.Next() {
		var id int64
		var r statementRow
		if err := rows.Scan(&id, &r.calls, &r.plans, &r.planMs, &r.execMs, &r.query); err != nil {
			return nil, err
		}
		byQuery[id] = r
	}
	return byQuery, rows.Err()
}

// writeTopStatements prints the n statements with the most server time
// between two snapshots, per job.
func writeTopStatements(w io.Writer, start, end statementsByQuery, jobs, n int) {
	type diff struct {
		statementRow
		total float64
	}
	var diffs []diff
	for id, e := range end {
		s := start[id]
		d := diff{statementRow: statementRow{query: e.query, calls: e.calls - s.calls, plans: e.plans - s.plans, planMs: e.planMs - s.planMs, execMs: e.execMs - s.execMs}}
		d.total = d.planMs + d.execMs
		if d.calls > 0 {
			diffs = append(diffs, d)
		}
	}
	slices.SortFunc(diffs, func(a, b diff) int { return cmp.Compare(b.total, a.total) })
	per := 1000 / float64(max(jobs, 1))
	for _, d := range diffs[:min(n, len(diffs))] {
		fmt.Fprintf(w, "    %7.1f+%7.1f us/job %6d calls %6d plans  %s\n", d.planMs*per, d.execMs*per, d.calls, d.plans, d.query)
	}
}
