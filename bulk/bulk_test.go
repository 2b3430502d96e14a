package bulk_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdbtest"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/bulk"
	"github.com/riverbpmn/riverbpmn/riverbpmntest"
	"github.com/riverbpmn/riverbpmn/search"
	"github.com/riverbpmn/riverbpmn/workflow"
)

type env struct {
	ctx    context.Context
	pool   *pgxpool.Pool
	schema string
	engine *workflow.Engine
}

func newEnv(t *testing.T) *env {
	t.Helper()
	ctx := context.Background()
	schema := riverdbtest.TestSchema(ctx, t, riverbpmntest.Driver(t), nil)
	b := riverbpmntest.New(ctx, t, schema, nil)
	return &env{ctx: ctx, pool: b.DBPool, schema: schema, engine: b.Engine}
}

func (e *env) sql(s string) string {
	return fmt.Sprintf(s, pgx.Identifier{e.schema}.Sanitize())
}

// incidents inserts n jobs with a job context (instance order-i, job
// definition charge, or ship for every tenth) and discards them: n open
// incidents. It returns the first job id.
func (e *env) incidents(t *testing.T, n int) int64 {
	t.Helper()
	var first int64
	err := e.pool.QueryRow(e.ctx, e.sql(`
WITH ins AS (
    INSERT INTO %[1]s.river_job (state, attempt, max_attempts, args, kind, metadata, queue, attempted_at)
    SELECT 'running', 1, 1, '{}', 'bulk_task',
        jsonb_build_object('bpmn', jsonb_build_array('order-' || i, 'order', 'act', CASE WHEN i %% 10 = 0 THEN 'ship' ELSE 'charge' END)),
        'default', now()
    FROM generate_series(1, $1) AS i
    RETURNING id
)
SELECT min(id) FROM ins`), n).Scan(&first)
	require.NoError(t, err)
	_, err = e.pool.Exec(e.ctx, e.sql(`UPDATE %[1]s.river_job SET state = 'discarded', finalized_at = now(),
        errors = ARRAY[jsonb_build_object('attempt', 1, 'at', now(), 'error', 'boom')] WHERE state = 'running'`))
	require.NoError(t, err)
	return first
}

func (e *env) count(t *testing.T, query string, args ...any) int {
	t.Helper()
	var n int
	require.NoError(t, e.pool.QueryRow(e.ctx, e.sql(query), args...).Scan(&n))
	return n
}

// TestRetryIncidentsInterruptedAndRepeated: 10,000 incidents; a bulk retry
// is interrupted after 5 batches of 500, then resumed; a second bulk retry
// repeats it. Every job is revived exactly once (one resolved incident,
// max_attempts = attempt + retries), no lock outlives a batch, and jobs
// that failed again after their revival are not the resumed retry's
// business.
func TestRetryIncidentsInterruptedAndRepeated(t *testing.T) {
	e := newEnv(t)
	const n = 10_000
	first := e.incidents(t, n)
	require.Equal(t, n, e.count(t, `SELECT count(*) FROM %[1]s.river_bpmn_incident WHERE resolved_at IS NULL`))

	ctx, cancel := context.WithCancel(e.ctx)
	var reports []bulk.Progress
	p, err := e.engine.Bulk().RetryIncidents(ctx, nil, &bulk.RetryOpts{Retries: 2, OnProgress: func(p bulk.Progress) {
		reports = append(reports, p)
		// Between batches no row lock is held: the batch's last job can be
		// locked at once.
		var id int64
		require.NoError(t, e.pool.QueryRow(e.ctx, e.sql(`SELECT job_id FROM %[1]s.river_bpmn_incident WHERE id = $1`), p.Cursor).Scan(&id))
		tx, err := e.pool.Begin(e.ctx)
		require.NoError(t, err)
		_, err = tx.Exec(e.ctx, "SET LOCAL lock_timeout = '1ms'")
		require.NoError(t, err)
		_, err = tx.Exec(e.ctx, e.sql(`SELECT 1 FROM %[1]s.river_job WHERE id = $1 FOR UPDATE`), id)
		require.NoError(t, err, "job %d is still locked after its batch", id)
		require.NoError(t, tx.Rollback(e.ctx))
		if p.Batches == 5 {
			cancel()
		}
	}})
	require.ErrorIs(t, err, context.Canceled)
	require.Len(t, reports, 5)
	for i, r := range reports {
		require.Equal(t, n, r.Total)
		require.Equal(t, (i+1)*500, r.Done)
		require.Equal(t, (i+1)*500, r.Changed)
	}
	require.Equal(t, 2500, p.Done)
	require.False(t, p.Finished)
	require.Equal(t, n-2500, e.count(t, `SELECT count(*) FROM %[1]s.river_bpmn_incident WHERE resolved_at IS NULL`))

	// 100 revived jobs fail again before the retry is resumed: new incidents,
	// opened after the retry began.
	_, err = e.pool.Exec(e.ctx, e.sql(`UPDATE %[1]s.river_job SET state = 'discarded', finalized_at = now()
        WHERE id IN (SELECT id FROM %[1]s.river_job WHERE state = 'available' ORDER BY id LIMIT 100)`))
	require.NoError(t, err)

	p, err = e.engine.Bulk().RetryIncidents(e.ctx, nil, &bulk.RetryOpts{Retries: 2, Resume: p})
	require.NoError(t, err)
	require.True(t, p.Finished)
	require.Equal(t, n, p.Done)
	require.Equal(t, n, p.Changed)
	require.Equal(t, 20, p.Batches)
	require.Equal(t, 100, e.count(t, `SELECT count(*) FROM %[1]s.river_bpmn_incident WHERE resolved_at IS NULL`),
		"the incidents opened after the retry began are left for the next one")

	// Repeating the whole retry revives only those 100, once.
	p, err = e.engine.Bulk().RetryIncidents(e.ctx, nil, &bulk.RetryOpts{Retries: 2})
	require.NoError(t, err)
	require.Equal(t, 100, p.Done)
	require.Equal(t, 100, p.Changed)
	p, err = e.engine.Bulk().RetryIncidents(e.ctx, nil, &bulk.RetryOpts{Retries: 2})
	require.NoError(t, err)
	require.Zero(t, p.Done, "nothing left to retry")

	// Exactly once: every job is available with attempt + 2 executions, and
	// has one resolved incident (two for the 100 that failed again).
	require.Equal(t, n, e.count(t, `SELECT count(*) FROM %[1]s.river_job WHERE id >= $1 AND state = 'available' AND max_attempts = attempt + 2`, first))
	require.Zero(t, e.count(t, `SELECT count(*) FROM %[1]s.river_bpmn_incident WHERE resolved_at IS NULL`))
	require.Equal(t, n-100, e.count(t, `SELECT count(*) FROM (SELECT job_id FROM %[1]s.river_bpmn_incident GROUP BY job_id HAVING count(*) = 1) AS once`))
	require.Equal(t, 100, e.count(t, `SELECT count(*) FROM (SELECT job_id FROM %[1]s.river_bpmn_incident GROUP BY job_id HAVING count(*) = 2) AS twice`))
}

func TestRetryIncidentsSelection(t *testing.T) {
	e := newEnv(t)
	first := e.incidents(t, 100)
	p, err := e.engine.Bulk().RetryIncidents(e.ctx, &bulk.Incidents{JobDefinitionID: "ship"}, &bulk.RetryOpts{Retries: 1, BatchSize: 3})
	require.NoError(t, err)
	require.Equal(t, 10, p.Total)
	require.Equal(t, 10, p.Changed)
	require.Equal(t, 4, p.Batches)
	p, err = e.engine.Bulk().RetryIncidents(e.ctx, &bulk.Incidents{JobIDs: []int64{first, first + 1, first + 9}}, &bulk.RetryOpts{Retries: 1})
	require.NoError(t, err)
	require.Equal(t, 2, p.Changed, "job first+9 (order-10, ship) was revived already")
	p, err = e.engine.Bulk().RetryIncidents(e.ctx, &bulk.Incidents{InstancePrefix: "order-5"}, &bulk.RetryOpts{Retries: 1})
	require.NoError(t, err)
	require.Equal(t, 10, p.Changed) // order-5, order-51..59; order-50 was revived (ship)
	_, err = e.engine.Bulk().RetryIncidents(e.ctx, nil, &bulk.RetryOpts{Retries: 0})
	require.ErrorContains(t, err, "retries 0 is out of range")
}

type bulkArgs struct{}

func (bulkArgs) Kind() string { return "bulk_job" }

func TestForEachJobSuspendActivateStopPriority(t *testing.T) {
	e := newEnv(t)
	client, err := workflow.NewClient(e.engine, &river.Config{Schema: e.schema, TestOnly: true})
	require.NoError(t, err)
	var ids []int64
	for i := range 12 {
		jc := workflow.JobContext{ProcessInstanceID: fmt.Sprintf("inv-%d", i), ProcessDefinitionKey: "invoice"}
		res, err := client.Insert(e.ctx, bulkArgs{}, jc.InsertOpts())
		require.NoError(t, err)
		ids = append(ids, res.Job.ID)
	}
	byFilter := &bulk.Jobs{Filter: search.Filter{ProcessDefinitionKey: "invoice", States: []rivertype.JobState{rivertype.JobStateAvailable}}}
	var batches int
	p, err := e.engine.Bulk().SuspendJobs(e.ctx, byFilter, &bulk.JobOpts{BatchSize: 5, OnProgress: func(bulk.Progress) { batches++ }})
	require.NoError(t, err)
	require.Equal(t, 12, p.Done)
	require.Equal(t, 12, p.Changed)
	require.Equal(t, 4, batches) // 5, 5, 2, and the empty one that ends it
	require.Equal(t, 12, e.count(t, `SELECT count(*) FROM %[1]s.river_job WHERE state = 'pending'`))
	p, err = e.engine.Bulk().SuspendJobs(e.ctx, &bulk.Jobs{JobIDs: ids}, nil)
	require.NoError(t, err)
	require.Zero(t, p.Changed, "suspending again changes nothing")

	p, err = e.engine.Bulk().ActivateJobs(e.ctx, &bulk.Jobs{JobIDs: ids[:6]}, nil)
	require.NoError(t, err)
	require.Equal(t, 6, p.Changed)
	require.Equal(t, 6, e.count(t, `SELECT count(*) FROM %[1]s.river_job WHERE state = 'available'`))

	p, err = e.engine.Bulk().SetJobPriority(e.ctx, &bulk.Jobs{JobIDs: ids[:3]}, 42, nil)
	require.NoError(t, err)
	require.Equal(t, 3, p.Changed)
	require.Equal(t, 3, e.count(t, `SELECT count(*) FROM %[1]s.river_job WHERE %[1]s.river_bpmn_ctx_priority(metadata) = 42`))

	p, err = e.engine.Bulk().StopJobs(e.ctx, &bulk.Jobs{JobIDs: ids}, nil)
	require.NoError(t, err)
	require.Equal(t, 12, p.Changed)
	require.Equal(t, 12, e.count(t, `SELECT count(*) FROM %[1]s.river_job WHERE state = 'cancelled'`))
	p, err = e.engine.Bulk().StopJobs(e.ctx, &bulk.Jobs{JobIDs: ids}, nil)
	require.NoError(t, err)
	require.Zero(t, p.Changed, "stopped jobs are finished")
}
