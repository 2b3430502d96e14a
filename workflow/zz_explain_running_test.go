package workflow

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river/riverdriver"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/exclusive"
	"github.com/riverbpmn/riverbpmn/priority"
)

func TestZZExplainRunning(t *testing.T) {
	ctx := context.Background()
	schema := exclSchema(t)
	pool := exclNodePool(t, 4)
	backlog := explainBacklogSQL[:strings.Index(explainBacklogSQL, "INSERT INTO %[1]s.river_bpmn_exclusive_lock")]
	_, err := pool.Exec(ctx, fmt.Sprintf(backlog, schema))
	require.NoError(t, err)
	mech := exclusive.RunningRow
	if os.Getenv("ZZ_LOCK") != "" {
		mech = exclusive.LockTable
	}
	engine, err := NewEngine(pool, &Config{Schema: schema, ExclusiveScope: exclusive.ProcessInstance, ExclusiveMechanism: mech})
	require.NoError(t, err)
	require.NoError(t, engine.EnableExclusiveRunningIndex(ctx))
	_, err = pool.Exec(ctx, "ANALYZE "+schema+".river_job")
	require.NoError(t, err)
	acq := Acquisition{}
	if os.Getenv("ZZ_PRIO") != "" {
		acq = Acquisition{ByPriority: true, PriorityRange: &priority.Range{Min: -100, Max: 100}}
		require.NoError(t, engine.EnableFetchOrderIndexes(ctx, acq))
		_, err = pool.Exec(ctx, "ANALYZE "+schema+".river_job")
		require.NoError(t, err)
	}
	driver, err := engine.NewDriver(acq)
	require.NoError(t, err)
	p := newPilot(driver)
	q, err := p.fetchQuery(schema)
	require.NoError(t, err)
	params := &riverdriver.JobGetAvailableParams{ClientID: "c", MaxAttemptedBy: 100, MaxToLock: 100, Queue: "default", Schema: schema}
	for i := 0; i < 3; i++ {
		tx, err := pool.Begin(ctx)
		require.NoError(t, err)
		if os.Getenv("ZZ_GENERIC") != "" {
			_, err = tx.Exec(ctx, "SET LOCAL plan_cache_mode = force_generic_plan")
			require.NoError(t, err)
		}
		stmts := []struct {
			sql  string
			args []any
		}{}
		if q.running {
			stmts = append(stmts, struct {
				sql  string
				args []any
			}{q.candidatesSQL, p.fetchArgs(q.fetchQuery, q.candidatesArgs, params)})
		}
		args := p.fetchArgs(q.fetchQuery, q.args, params)
		if !q.running {
			args[q.endedTokensArg] = []int64{}
		}
		stmts = append(stmts, struct {
			sql  string
			args []any
		}{q.sql, args})
		for _, st := range stmts {
			rows, err := tx.Query(ctx, "EXPLAIN (ANALYZE, BUFFERS, TIMING OFF) "+st.sql, st.args...)
			require.NoError(t, err)
			lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
			require.NoError(t, err)
			if i == 2 {
				t.Log("\n" + strings.Join(lines, "\n"))
			} else {
				t.Log(lines[len(lines)-2], lines[len(lines)-1])
			}
		}
		require.NoError(t, tx.Commit(ctx))
	}
}
