package workflow

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/exclusive"
	"github.com/riverbpmn/riverbpmn/priority"
)

// TestExclusiveRunningExplainCamunda prints EXPLAIN (ANALYZE, BUFFERS) of the
// running-row fetch's two statements in Camunda's order (by priority, within
// a range, deployment aware) over 50,000 jobs of 1,000 instances with 100 of
// them running. Diagnostic: RIVERBPMN_EXPLAIN=1.
func TestExclusiveRunningExplainCamunda(t *testing.T) {
	if os.Getenv("RIVERBPMN_EXPLAIN") == "" {
		t.Skip("diagnostic: RIVERBPMN_EXPLAIN=1")
	}
	ctx := context.Background()
	schema := exclSchema(t)
	pool := testPool(t)
	meta := func(i string) string {
		return fmt.Sprintf(`jsonb_build_object('bpmn', jsonb_build_array('bench-pi-' || (%[1]s %% 1000), 'p', 'a', NULL::text,
			(%[1]s * 7919) %% 201 - 100, true, 'bench-dep-' || (%[1]s %% 4), CASE WHEN %[1]s %% 10 = 0 THEN 'timer' ELSE 'async-continuation' END))`, i)
	}
	_, err := pool.Exec(ctx, fmt.Sprintf(`INSERT INTO %[1]s.river_job (args, kind, max_attempts, metadata, priority, queue, state, scheduled_at)
		SELECT '{}', 'bench', 25, %[2]s, 1, 'default', 'available', now() - interval '1 hour' + i * interval '1 ms' FROM generate_series(1, 50000) AS i`, schema, meta("i")))
	require.NoError(t, err)
	acq := Acquisition{ByPriority: true, PriorityRange: &priority.Range{Min: -100, Max: 100}, DeploymentAware: true, Deployments: []string{"bench-dep-0", "bench-dep-1", "bench-dep-2", "bench-dep-3"}}
	switch os.Getenv("RIVERBPMN_EXPLAIN_ORDER") {
	case "river":
		acq = Acquisition{}
	case "prio":
		acq = Acquisition{ByPriority: true}
	case "prio-range":
		acq = Acquisition{ByPriority: true, PriorityRange: acq.PriorityRange}
	case "prio-dep":
		acq = Acquisition{ByPriority: true, DeploymentAware: true, Deployments: acq.Deployments}
	}
	engine, err := NewEngine(pool, &Config{Schema: schema, ExclusiveScope: exclusive.ProcessInstance, ExclusiveMechanism: exclusive.RunningRow})
	require.NoError(t, err)
	require.NoError(t, engine.EnableExclusiveRunningIndex(ctx))
	require.NoError(t, engine.EnableFetchOrderIndexes(ctx, acq))
	// 100 running jobs: the first 100 of the order, as 100 busy workers.
	if os.Getenv("RIVERBPMN_EXPLAIN_RUNNING") != "0" {
		_, err = pool.Exec(ctx, fmt.Sprintf(`UPDATE %[1]s.river_job SET state = 'running', attempt = 1, attempted_at = now() WHERE id IN (
			SELECT id FROM %[1]s.river_job ORDER BY %[1]s.river_bpmn_ctx_priority(metadata) DESC, id LIMIT 100)`, schema))
		require.NoError(t, err)
	}
	_, err = pool.Exec(ctx, fmt.Sprintf("VACUUM ANALYZE %s.river_job", schema))
	require.NoError(t, err)
	var indexes []string
	rows, err := pool.Query(ctx, "SELECT indexrelid::regclass::text || ' ' || pg_relation_size(indexrelid) FROM pg_index WHERE indrelid = $1::regclass", schema+".river_job")
	require.NoError(t, err)
	for rows.Next() {
		var s string
		require.NoError(t, rows.Scan(&s))
		indexes = append(indexes, s)
	}
	t.Logf("indexes:\n%s", strings.Join(indexes, "\n"))
	driver, err := engine.NewDriver(acq)
	require.NoError(t, err)
	p := newPilot(driver)
	query, err := p.fetchQuery(schema)
	require.NoError(t, err)
	require.True(t, query.running)
	q := &testQuery{fetchQuery: query.fetchQuery}
	argsOf := func(names []string) []any {
		q2 := &testQuery{fetchQuery: &fetchQuery{args: names, params: q.params}}
		_, args, _ := q2.explainArgs(t)
		for i, n := range names {
			if n == "ended_running" {
				args[i] = []string{}
			}
		}
		return args
	}
	if os.Getenv("RIVERBPMN_EXPLAIN_FILTERS") != "" {
		prio := schema + ".river_bpmn_ctx_priority(metadata)"
		dep := schema + ".river_bpmn_ctx_deployment(metadata)"
		key := schema + ".river_bpmn_ctx_instance(metadata)"
		variants := map[string]string{
			"none":         "true",
			"key":          key + " IS NOT NULL",
			"prio between": prio + " BETWEEN -100 AND 100",
			"prio once":    "(" + prio + " + 0) IS NOT NULL",
			"dep or":       "(" + dep + " IS NULL OR " + dep + " = ANY('{bench-dep-0,bench-dep-1,bench-dep-2,bench-dep-3}'::text[]))",
			"dep once":     "(" + dep + " = ANY('{bench-dep-0,bench-dep-1,bench-dep-2,bench-dep-3}'::text[])) IS NOT FALSE",
		}
		for round := range 3 {
			for _, name := range []string{"none", "key", "prio between", "prio once", "dep or", "dep once"} {
				var plan []byte
				require.NoError(t, pool.QueryRow(ctx, "EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) SELECT count(*) FROM "+schema+".river_job WHERE "+variants[name]).Scan(&plan))
				var parsed []struct {
					Exec float64 `json:"Execution Time"`
				}
				require.NoError(t, json.Unmarshal(plan, &parsed))
				t.Logf("round %d %-13s %.1f ms for 50,000 rows: %.2f us/row", round, name, parsed[0].Exec, parsed[0].Exec*1000/50000)
			}
		}
		return
	}
	if os.Getenv("RIVERBPMN_EXPLAIN_STAT") != "" {
		_, err = pool.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS pg_stat_statements SCHEMA public")
		require.NoError(t, err)
		_, err = pool.Exec(ctx, "SELECT public.pg_stat_statements_reset()")
		require.NoError(t, err)
		lockEngine, err := NewEngine(pool, &Config{Schema: schema, ExclusiveScope: exclusive.ProcessInstance, ExclusiveMechanism: exclusive.LockTable})
		require.NoError(t, err)
		lockDriver, err := lockEngine.NewDriver(acq)
		require.NoError(t, err)
		lockQuery, err := newPilot(lockDriver).fetchQuery(schema)
		require.NoError(t, err)
		require.False(t, lockQuery.running)
		_, lockArgs, _ := (&testQuery{fetchQuery: lockQuery.fetchQuery}).explainArgs(t)
		conn, err := pool.Acquire(ctx)
		require.NoError(t, err)
		if os.Getenv("RIVERBPMN_EXPLAIN_LOCK") != "" {
			for round := range 3 {
				tx, err := conn.Begin(ctx)
				require.NoError(t, err)
				rows, err := tx.Query(ctx, "EXPLAIN (ANALYZE, BUFFERS) "+lockQuery.sql, lockArgs...)
				require.NoError(t, err)
				var lines []string
				for rows.Next() {
					var line string
					require.NoError(t, rows.Scan(&line))
					lines = append(lines, line)
				}
				require.NoError(t, rows.Err())
				require.NoError(t, tx.Rollback(ctx))
				t.Logf("lock table round %d:\n%s", round, strings.Join(lines, "\n"))
			}
			return
		}
		for range 30 {
			tx, err := conn.Begin(ctx)
			require.NoError(t, err)
			rows, err := tx.Query(ctx, lockQuery.sql, lockArgs...)
			require.NoError(t, err)
			n := 0
			for rows.Next() {
				n++
			}
			require.NoError(t, rows.Err())
			require.Equal(t, 100, n)
			require.NoError(t, tx.Rollback(ctx))

			tx, err = conn.Begin(ctx)
			require.NoError(t, err)
			_, err = tx.Exec(ctx, query.candidatesSQL, argsOf(query.candidatesArgs)...)
			require.NoError(t, err)
			rows, err = tx.Query(ctx, query.sql, argsOf(query.args)...)
			require.NoError(t, err)
			n = 0
			for rows.Next() {
				n++
			}
			require.NoError(t, rows.Err())
			require.Equal(t, 100, n)
			require.NoError(t, tx.Rollback(ctx))
		}
		prepared, err := conn.Query(ctx, `SELECT generic_plans, custom_plans, left(regexp_replace(statement, '\s+', ' ', 'g'), 60) FROM pg_prepared_statements WHERE statement LIKE '%river_job%' ORDER BY 3`)
		require.NoError(t, err)
		for prepared.Next() {
			var generic, custom int64
			var stmt string
			require.NoError(t, prepared.Scan(&generic, &custom, &stmt))
			t.Logf("generic %d custom %d: %s", generic, custom, stmt)
		}
		require.NoError(t, prepared.Err())
		conn.Release()
		rows, err := pool.Query(ctx, `SELECT calls, round(total_plan_time::numeric, 2), round(total_exec_time::numeric, 2), rows, left(regexp_replace(query, '\s+', ' ', 'g'), 90)
			FROM public.pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) AND query LIKE '%running%' AND query NOT LIKE '%pg_stat%' ORDER BY total_exec_time DESC LIMIT 4`)
		require.NoError(t, err)
		for rows.Next() {
			var calls, nrows int64
			var plan, exec float64
			var q string
			require.NoError(t, rows.Scan(&calls, &plan, &exec, &nrows, &q))
			t.Logf("calls %d plan %.2f ms exec %.2f ms rows %d: plan/job %.1f us exec/job %.1f us  %s", calls, plan, exec, nrows, plan*1000/float64(calls*100), exec*1000/float64(calls*100), q)
		}
		return
	}
	for _, mode := range []string{"auto", "force_generic_plan"} {
		for round := range 2 {
			tx, err := pool.Begin(ctx)
			require.NoError(t, err)
			_, err = tx.Exec(ctx, "SET LOCAL plan_cache_mode = "+mode)
			require.NoError(t, err)
			for i, stmt := range []struct {
				sql   string
				names []string
			}{{query.candidatesSQL, query.candidatesArgs}, {query.sql, query.args}} {
				rows, err := tx.Query(ctx, "EXPLAIN (ANALYZE, BUFFERS) "+stmt.sql, argsOf(stmt.names)...)
				require.NoError(t, err)
				var lines []string
				for rows.Next() {
					var line string
					require.NoError(t, rows.Scan(&line))
					lines = append(lines, line)
				}
				require.NoError(t, rows.Err())
				if round == 1 || mode == "auto" {
					t.Logf("%s round %d statement %d:\n%s", mode, round, i+1, strings.Join(lines, "\n"))
				}
			}
			require.NoError(t, tx.Rollback(ctx))
		}
	}
}
