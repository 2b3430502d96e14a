package workflow

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/exclusive"
	"github.com/riverbpmn/riverbpmn/fetchplan"
	"github.com/riverbpmn/riverbpmn/internal/longtest"
)

// explainBacklogSQL writes 100,000 available jobs into a schema, in one
// INSERT ... SELECT: 9,000 process instances with 10 exclusive jobs each
// (grouped, as one instance's jobs are inserted together), 5,000 jobs of no
// instance and 5,000 plain River jobs; plus 100 running jobs holding the keys
// of the first 100 instances, as a busy client would, and free lock rows of
// the other instances (as if each had run a job within the last minute).
const explainBacklogSQL = `
INSERT INTO %[1]s.river_job (args, kind, max_attempts, metadata, priority, queue, state, scheduled_at, attempt)
SELECT
    '{}', 'excl_test', 25,
    CASE
        WHEN i <= 90000 THEN jsonb_build_object('bpmn', jsonb_build_object(
            'process_instance_id', 'pi-' || ((i - 1) / 10), 'root_process_instance_id', 'pi-' || ((i - 1) / 10),
            'process_definition_key', 'p', 'exclusive', true))
        WHEN i <= 95000 THEN '{"bpmn": {"process_definition_key": "p", "exclusive": true}}'::jsonb
        ELSE '{}'::jsonb
    END,
    1, 'default', 'available', now() - interval '1 hour' + i * interval '1 ms', 0
FROM generate_series(1, 100000) AS i;

INSERT INTO %[1]s.river_job (args, kind, max_attempts, metadata, priority, queue, state, scheduled_at, attempt, attempted_at)
SELECT
    '{}', 'excl_test', 25,
    jsonb_build_object('bpmn', jsonb_build_object('process_instance_id', 'pi-' || i, 'process_definition_key', 'p', 'exclusive', true)),
    1, 'default', 'running', now() - interval '2 hours', 1, now()
FROM generate_series(0, 99) AS i;

INSERT INTO %[1]s.river_bpmn_exclusive_lock (key, job_id, attempt, client_id, queue, locked_at)
SELECT %[1]s.river_bpmn_ctx_instance(metadata), id, 1, 'busy-client', 'default', now()
FROM %[1]s.river_job WHERE state = 'running';

-- Free rows of keys given back recently, kept for reuse.
INSERT INTO %[1]s.river_bpmn_exclusive_lock (key, client_id, queue, locked_at, released_at)
SELECT 'pi-' || i, 'busy-client', 'default', now(), now()
FROM generate_series(100, 8999) AS i;

ANALYZE %[1]s.river_job;
ANALYZE %[1]s.river_bpmn_exclusive_lock;`

// planNode is the part of EXPLAIN (FORMAT JSON) the test reads.
type planNode struct {
	NodeType     string     `json:"Node Type"`
	Relationship string     `json:"Parent Relationship"`
	RelationName string     `json:"Relation Name"`
	IndexName    string     `json:"Index Name"`
	Alias        string     `json:"Alias"`
	IndexCond    string     `json:"Index Cond"`
	Filter       string     `json:"Filter"`
	PlanRows     float64    `json:"Plan Rows"`
	TotalCost    float64    `json:"Total Cost"`
	ActualRows   float64    `json:"Actual Rows"`
	Plans        []planNode `json:"Plans"`
}

func (n planNode) walk(visit func(node planNode, ancestors []planNode)) {
	var rec func(node planNode, ancestors []planNode)
	rec = func(node planNode, ancestors []planNode) {
		visit(node, ancestors)
		for _, child := range node.Plans {
			rec(child, append(ancestors, node))
		}
	}
	rec(n, nil)
}

func (n planNode) String() string {
	var sb strings.Builder
	var rec func(node planNode, depth int)
	rec = func(node planNode, depth int) {
		fmt.Fprintf(&sb, "%s%s", strings.Repeat("  ", depth), node.NodeType)
		if node.RelationName != "" {
			fmt.Fprintf(&sb, " on %s %s", node.RelationName, node.Alias)
		}
		if node.IndexName != "" {
			fmt.Fprintf(&sb, " using %s", node.IndexName)
		}
		sb.WriteString("\n")
		for _, child := range node.Plans {
			rec(child, depth+1)
		}
	}
	rec(n, 0)
	return sb.String()
}

// explainPlan returns the plan of query: the generic plan if generic (the
// parameters, of the given types, unknown to the planner, and literals the
// SQL text of args), else the plan for args.
func explainPlan(ctx context.Context, t *testing.T, conn *pgxpool.Conn, query string, types []string, args []any, literals []string, generic bool) planNode {
	t.Helper()
	var raw []byte
	if generic {
		tx, err := conn.Begin(ctx)
		require.NoError(t, err)
		defer func() { require.NoError(t, tx.Rollback(ctx)) }()
		_, err = tx.Exec(ctx, "SET LOCAL plan_cache_mode = force_generic_plan")
		require.NoError(t, err)
		_, err = tx.Exec(ctx, fmt.Sprintf("PREPARE explain_me(%s) AS %s", strings.Join(types, ", "), strings.TrimSuffix(strings.TrimSpace(query), ";")))
		require.NoError(t, err)
		defer func() { _, _ = conn.Exec(ctx, "DEALLOCATE explain_me") }()
		require.NoError(t, tx.QueryRow(ctx, "EXPLAIN (FORMAT JSON) EXECUTE explain_me("+strings.Join(literals, ", ")+")").Scan(&raw))
	} else {
		require.NoError(t, conn.QueryRow(ctx, "EXPLAIN (FORMAT JSON) "+query, args...).Scan(&raw))
	}
	var plans []struct {
		Plan planNode `json:"Plan"`
	}
	require.NoError(t, json.Unmarshal(raw, &plans))
	require.Len(t, plans, 1)
	return plans[0].Plan
}

// requireIndexedPlan checks that a plan reads river_job only through
// indexes (no sequential or bitmap scan of the table), never sorts rows read
// from river_job (so no ranking of all candidates; sorting a handful of
// locked rows, or rows a subquery looks up, is fine), and uses every index in
// wantIndexes.
func requireIndexedPlan(t *testing.T, plan planNode, wantIndexes ...string) {
	t.Helper()
	used := map[string]bool{}
	plan.walk(func(node planNode, _ []planNode) {
		if node.IndexName != "" {
			used[node.IndexName] = true
		}
		if node.RelationName == "river_job" {
			require.NotContains(t, []string{"Seq Scan", "Bitmap Heap Scan"}, node.NodeType,
				"river_job is read without an index:\n%s", plan)
		}
		if node.NodeType == "Sort" || node.NodeType == "Incremental Sort" {
			require.False(t, readsRiverJob(node), "river_job rows are sorted (%s):\n%s", node.NodeType, plan)
		}
	})
	for _, index := range wantIndexes {
		require.True(t, used[index], "index %s is not used:\n%s", index, plan)
	}
}

// readsRiverJob reports whether node's own input (not its subqueries, nor
// the CTEs it scans) comes from a scan of river_job.
func readsRiverJob(node planNode) bool {
	for _, child := range node.Plans {
		if child.Relationship == "SubPlan" || child.Relationship == "InitPlan" {
			continue
		}
		if child.RelationName == "river_job" || readsRiverJob(child) {
			return true
		}
	}
	return false
}

// TestExclusiveFetchUsesIndexes EXPLAINs the exclusive fetch, the release and
// ExclusiveWait on a schema with 100,000 available jobs (and 100 held keys),
// for both the plan PostgreSQL makes for given values and the generic plan it
// caches after a few executions: the fetch streams River's fetch index and
// probes the head-of-key index; nothing sorts or scans the table. It also
// times one real fetch of 100 jobs (rolled back).
func TestExclusiveFetchUsesIndexes(t *testing.T) {
	longtest.Skip(t)
	t.Parallel()
	ctx := context.Background()
	schema := exclSchema(t)
	pool := testPool(t)
	_, err := pool.Exec(ctx, fmt.Sprintf(explainBacklogSQL, pgx.Identifier{schema}.Sanitize()))
	require.NoError(t, err)

	conn, err := pool.Acquire(ctx)
	require.NoError(t, err)
	defer conn.Release()

	for _, scope := range []exclusive.Scope{exclusive.ProcessInstance, exclusive.RootProcessInstance} {
		keyIndex := map[exclusive.Scope]string{
			exclusive.ProcessInstance:     "river_bpmn_job_exclusive_instance",
			exclusive.RootProcessInstance: "river_bpmn_job_exclusive_root",
		}[scope]
		for _, generic := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/generic=%t", strings.ReplaceAll(scope.String(), " ", "_"), generic), func(t *testing.T) {
				fetch := testFetchQuery(t, schema, scope, Acquisition{})
				types, args, literals := fetch.explainArgs(t)
				plan := explainPlan(ctx, t, conn, fetch.SQL, types, args, literals, generic)
				requireIndexedPlan(t, plan, "river_job_prioritized_fetching_index", keyIndex, "river_bpmn_exclusive_lock_pkey")

				release := exclusive.RenderSQL(exclusive.ReleaseSQL(), schema, scope)
				plan = explainPlan(ctx, t, conn, release,
					[]string{"text[]", "bigint[]", "text[]", "bigint[]", "boolean[]"},
					[]any{[]string{"pi-5"}, []int64{1}, []string{"default"}, []int64{1}, []bool{true}},
					[]string{"'{pi-5}'", "'{1}'", "'{default}'", "'{1}'", "'{true}'"}, generic)
				requireIndexedPlan(t, plan, keyIndex, "river_bpmn_exclusive_lock_pkey")

				wait := exclusive.RenderSQL(exclusive.WaitSQL(), schema, scope)
				plan = explainPlan(ctx, t, conn, wait, []string{"bigint"}, []any{int64(50_000)}, []string{"50000"}, generic)
				requireIndexedPlan(t, plan, keyIndex, "river_job_pkey")
			})
		}
	}

	// One real fetch of 100 jobs on this backlog, rolled back: most keys at
	// the head are held, and every instance has 10 jobs in a row, so the
	// fetch skips ~900 held and ~900 non-first jobs to find 100.
	tx, err := conn.Begin(ctx)
	require.NoError(t, err)
	defer func() { require.NoError(t, tx.Rollback(ctx)) }()
	start := time.Now()
	fetch := testFetchQuery(t, schema, exclusive.ProcessInstance, Acquisition{})
	_, fetchArgs, _ := fetch.explainArgs(t)
	rows, err := tx.Query(ctx, fetch.SQL, fetchArgs...)
	require.NoError(t, err)
	jobs := scanExclusiveFetchRows(t, rows)
	elapsed := time.Since(start)

	// The same fetch a second time (plan cached), and River's own query for
	// comparison, both rolled back as well.
	_, err = tx.Exec(ctx, "SAVEPOINT again")
	require.NoError(t, err)
	start = time.Now()
	rows, err = tx.Query(ctx, fetch.SQL, fetchArgs...)
	require.NoError(t, err)
	require.Len(t, scanExclusiveFetchRows(t, rows), 100)
	elapsedAgain := time.Since(start)
	_, err = tx.Exec(ctx, "ROLLBACK TO SAVEPOINT again")
	require.NoError(t, err)
	start = time.Now()
	stockQuery := testFetchQuery(t, schema, exclusive.None, Acquisition{})
	_, stockArgs, _ := stockQuery.explainArgs(t)
	rows, err = tx.Query(ctx, stockQuery.SQL, stockArgs...)
	require.NoError(t, err)
	stock, _, err := scanJobRows(rows)
	require.NoError(t, err)
	require.Len(t, stock, 100)
	t.Logf("fetch of 100 jobs from 100,000 available: exclusive %s (again: %s), River's own query %s",
		elapsed.Round(10*time.Microsecond), elapsedAgain.Round(10*time.Microsecond), time.Since(start).Round(10*time.Microsecond))
	require.Len(t, jobs, 100)
	seen := map[string]bool{}
	for _, job := range jobs {
		jc, err := JobContextOf(job)
		require.NoError(t, err)
		key, ok := exclusive.Key(exclusive.ProcessInstance, *jc.Exclusive, jc.ProcessInstanceID, jc.RootProcessInstanceID)
		require.True(t, ok)
		require.False(t, seen[key], "one job per key")
		seen[key] = true
		var n int
		_, err = fmt.Sscanf(key, "pi-%d", &n)
		require.NoError(t, err)
		require.GreaterOrEqual(t, n, 100, "held keys are skipped")
	}
}

// testFetchQuery renders the fetch query of a client with acquisition acq on
// an engine enforcing scope.
func testFetchQuery(t testing.TB, schema string, scope exclusive.Scope, acq Acquisition) *testQuery {
	t.Helper()
	engine, err := NewEngine(nil, &Config{ExclusiveScope: scope})
	require.NoError(t, err)
	driver, err := engine.NewDriver(acq)
	require.NoError(t, err)
	query, err := newPilot(driver).fetchStatement(schema)
	require.NoError(t, err)
	return &testQuery{Statement: query}
}

type testQuery struct{ *fetchplan.Statement }

// explainValues are the values of the fetch parameters of explainArgs that
// are not the plan's own: a fetch of up to 100 jobs of queue default, every
// kind, at the database's now, and the steps' parameters.
func explainValues() fetchplan.Args {
	return fetchplan.Args{
		"queue": "default", "kind": nil, "now": nil, "max_to_lock": 100, "max_attempted_by": 100,
		"exclusive_batch": 10, "lookahead": exclusive.DefaultLookahead, "client_id": "explain-client",
		"ended_tokens": []int64{}, "fair_round": int64(3), "fair_used": int64(1), "fair_tenant": "t-500",
	}
}

// explainArgs returns the parameter types, values and SQL literals of a
// fetch of explainValues, with the plan's own parameters at their current
// values.
func (q *testQuery) explainArgs(t testing.TB) (types []string, args []any, literals []string) {
	t.Helper()
	args, err := q.Bind(explainValues())
	require.NoError(t, err)
	for i, name := range q.Names {
		var typ, lit string
		switch v := args[i].(type) {
		case nil:
			typ, lit = map[string]string{"kind": "text[]", "now": "timestamptz"}[name], "NULL"
		case string:
			typ, lit = "text", "'"+v+"'"
		case int:
			typ, lit = "int", fmt.Sprint(v)
		case int64:
			typ, lit = "bigint", fmt.Sprint(v)
		case []int64:
			typ, lit = "bigint[]", "'{"+strings.Trim(strings.ReplaceAll(fmt.Sprint(v), " ", ","), "[]")+"}'"
		case []string:
			quoted := make([]string, len(v))
			for i, s := range v {
				quoted[i] = `"` + s + `"`
			}
			typ, lit = "text[]", "'{"+strings.Join(quoted, ",")+"}'"
		case []int32:
			typ, lit = "int[]", "'{"+strings.Trim(strings.ReplaceAll(fmt.Sprint(v), " ", ","), "[]")+"}'"
		default:
			require.FailNow(t, fmt.Sprintf("fetch parameter %s of unknown type %T", name, v))
		}
		require.NotEmpty(t, typ, "fetch parameter %s", name)
		types, literals = append(types, typ), append(literals, lit)
	}
	return types, args, literals
}

// scanExclusiveFetchRows reads the rows of the exclusive fetch: each job and
// the key and token it took.
func scanExclusiveFetchRows(t *testing.T, rows pgx.Rows) []*rivertype.JobRow {
	t.Helper()
	defer rows.Close()
	var jobs []*rivertype.JobRow
	for rows.Next() {
		var (
			key   *string
			token *int64
		)
		job, _, err := scanJobRow(suffixedTestRow{rows: rows, suffix: []any{&key, &token}})
		require.NoError(t, err)
		require.NotNil(t, key)
		require.NotNil(t, token)
		jobs = append(jobs, job)
	}
	require.NoError(t, rows.Err())
	return jobs
}
