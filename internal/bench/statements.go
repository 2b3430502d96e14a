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
// its client worked the backlog off, per job worked, from
// pg_stat_statements (planning times need track_planning). Unlike jobs/s it
// hardly depends on what else the machine runs, so designs measured on a
// busy machine still compare.
type ServerTime struct {
	// FetchPlanUs and FetchExecUs are the fetch statements' planning and
	// execution time per job, in microseconds: River's fetch or
	// riverbpmn's.
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
	// WALBytes is the WAL every statement of the database wrote, per job:
	// unlike the server's WAL position (SideResult.WALBytesPerJob), it
	// leaves out what other databases' sessions write meanwhile.
	WALBytes float64 `json:"wal_bytes"`
	// Evicted counts the statements pg_stat_statements evicted and counted
	// anew during the run (pg_stat_statements.max reached): their time
	// before the eviction is missing.
	Evicted int `json:"evicted,omitempty"`
}

// statementsByQuery is one snapshot of pg_stat_statements for the current
// database, by query id.
type statementsByQuery map[int64]statementRow

type statementRow struct {
	query          string
	fetch          bool
	calls, plans   int64
	planMs, execMs float64
	walBytes       int64
}

// statementsSQL reads pg_stat_statements for the current database. A fetch
// statement moves jobs to running and appends the client to attempted_by
// (River's, riverbpmn's); constants are normalized away in
// the stored text, names are not.
const statementsSQL = `
SELECT
    queryid,
    calls,
    plans,
    total_plan_time,
    total_exec_time,
    wal_bytes::bigint,
    query LIKE '%attempted_by = array_append%',
    left(regexp_replace(query, '\s+', ' ', 'g'), 110)
FROM
    STATS_SCHEMA.pg_stat_statements
WHERE
    dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
    AND query NOT LIKE '%pg_stat_statements%'`

// statementsSchema returns the schema pg_stat_statements is installed in for
// the current database, installing it (in public) if the server loads the
// module; "" when it cannot be used.
func statementsSchema(ctx context.Context, pool *pgxpool.Pool) string {
	var schema string
	err := pool.QueryRow(ctx, `SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pg_stat_statements'`).Scan(&schema)
	if err != nil {
		if _, err := pool.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS pg_stat_statements SCHEMA public"); err != nil {
			return ""
		}
		schema = "public"
	}
	var probe int64
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM "+pgx.Identifier{schema}.Sanitize()+".pg_stat_statements").Scan(&probe); err != nil {
		return "" // installed, but the server does not load the module
	}
	return schema
}

func readStatementsByQuery(ctx context.Context, pool *pgxpool.Pool, schema string) (statementsByQuery, error) {
	rows, err := pool.Query(ctx, strings.Replace(statementsSQL, "STATS_SCHEMA", pgx.Identifier{schema}.Sanitize(), 1))
	if err != nil {
		return nil, fmt.Errorf("reading pg_stat_statements: %w", err)
	}
	defer rows.Close()
	byQuery := statementsByQuery{}
	for rows.Next() {
		var id int64
		var r statementRow
		if err := rows.Scan(&id, &r.calls, &r.plans, &r.planMs, &r.execMs, &r.walBytes, &r.fetch, &r.query); err != nil {
			return nil, fmt.Errorf("reading pg_stat_statements: %w", err)
		}
		byQuery[id] = r
	}
	return byQuery, rows.Err()
}

// statementDiffs are the statements run between two snapshots, with what
// they took in between; evicted counts those counted anew (an entry with
// fewer calls at the end than at the start: only its new count is taken).
func statementDiffs(start, end statementsByQuery) (diffs []statementRow, evicted int) {
	for id, e := range end {
		s, ok := start[id]
		if ok && e.calls < s.calls {
			evicted++
			ok = false
		}
		if ok {
			e.calls, e.plans, e.planMs, e.execMs, e.walBytes = e.calls-s.calls, e.plans-s.plans, e.planMs-s.planMs, e.execMs-s.execMs, e.walBytes-s.walBytes
		}
		if e.calls > 0 {
			diffs = append(diffs, e)
		}
	}
	slices.SortFunc(diffs, func(a, b statementRow) int { return cmp.Compare(b.planMs+b.execMs, a.planMs+a.execMs) })
	return diffs, evicted
}

// serverTimePerJob sums the statements run between two snapshots over jobs
// jobs.
func serverTimePerJob(start, end statementsByQuery, jobs int) *ServerTime {
	diffs, evicted := statementDiffs(start, end)
	per := 1000 / float64(max(jobs, 1))
	st := &ServerTime{Evicted: evicted}
	for _, d := range diffs {
		st.AllUs += (d.planMs + d.execMs) * per
		st.WALBytes += float64(d.walBytes) / float64(max(jobs, 1))
		if d.fetch {
			st.FetchPlanUs += d.planMs * per
			st.FetchExecUs += d.execMs * per
			st.FetchCalls += float64(d.calls)
			st.FetchPlans += float64(d.plans)
		}
	}
	return st
}

// writeTopStatements prints the n statements with the most server time
// between two snapshots, per job.
func writeTopStatements(w io.Writer, start, end statementsByQuery, jobs, n int) {
	diffs, _ := statementDiffs(start, end)
	per := 1000 / float64(max(jobs, 1))
	for _, d := range diffs[:min(n, len(diffs))] {
		fmt.Fprintf(w, "    %7.1f+%7.1f us/job %6.0f B WAL/job %6d calls %6d plans  %s\n",
			d.planMs*per, d.execMs*per, float64(d.walBytes)/float64(max(jobs, 1)), d.calls, d.plans, d.query)
	}
}
