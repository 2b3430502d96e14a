package workflow

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/exclusive"
)

// TestExclusiveRunningRowTwoSnapshots breaks the running-row argument
// (exclusive/doc.go) at the interleaving it must survive, step by step on
// two connections: fetches A and B of one key K whose clients see different
// heads (A works queue "default", where K's head is J1; B works queue
// "second", where K's head is J2) run statement 1 each, then statement 2
// each, then commit: each statement-2 snapshot is taken before the other
// fetch commits, so neither sees the other's running job. The key's
// advisory lock alone keeps them apart: B's statement 1 cannot take it
// while A holds it, so B takes nothing of K, and exactly one job of K runs.
// The control renders statement 1 with the lock taken as granted ("true"):
// both fetches then move their head to running, two jobs of K at once, so
// the test can fail, and it is the lock, not the snapshot, that decides.
// A third step is the case where the two snapshots differ: B's statement 1
// judged K in a snapshot taken before A committed (J1 not yet running) and
// was granted K's lock after A's commit; it is played by rendering
// statement 1 without its running probe, after A committed. B's statement
// 2, whose snapshot is taken after the lock was granted, sees J1 running
// and takes nothing of K; with statement 2's probe taken out too (the
// control), B takes J2.
func TestExclusiveRunningRowTwoSnapshots(t *testing.T) {
	ctx := context.Background()

	for _, tc := range []struct {
		name       string
		lockIsTrue bool
		want       int
	}{
		{"advisory lock", false, 1},
		{"control: lock taken as granted", true, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			schema := exclSchema(t)
			node := newExclNode(t, schema, newExclRecorder(exclusive.ProcessInstance), exclNodeOpts{
				scope: exclusive.ProcessInstance, mechanism: exclusive.RunningRow, maxWorkers: 1, poolConns: 4,
			})
			require.NoError(t, node.engine.EnableExclusiveRunningIndex(ctx))
			_, err := node.client.Insert(ctx, exclArgs{Instance: "pi-k"}, nil)
			require.NoError(t, err)
			_, err = node.client.Insert(ctx, exclArgs{Instance: "pi-k"}, &river.InsertOpts{Queue: "second"})
			require.NoError(t, err)

			query, err := newPilot(node.engine.Driver()).fetchQuery(schema)
			require.NoError(t, err)
			require.True(t, query.running)
			candidatesSQL := query.candidatesSQL
			if tc.lockIsTrue {
				locking := "pg_try_advisory_xact_lock(1919054968, hashtext(heads.exclusive_key))"
				require.Contains(t, candidatesSQL, locking)
				candidatesSQL = strings.Replace(candidatesSQL, locking, "true", 1)
			}
			p := newPilot(node.engine.Driver())
			args := func(names []string, queue string) []any {
				return p.fetchArgs(query.fetchQuery, names, &riverdriver.JobGetAvailableParams{
					ClientID: "client-" + queue, MaxAttemptedBy: 3, MaxToLock: 10, Queue: queue, Schema: schema,
				})
			}
			txA, err := node.pool.Begin(ctx)
			require.NoError(t, err)
			defer func() { _ = txA.Rollback(ctx) }()
			txB, err := node.pool.Begin(ctx)
			require.NoError(t, err)
			defer func() { _ = txB.Rollback(ctx) }()

			took := func(tx pgx.Tx, queue string) int {
				rows, err := tx.Query(ctx, query.sql, args(query.args, queue)...)
				require.NoError(t, err)
				jobs, _, err := scanJobRows(rows)
				require.NoError(t, err)
				return len(jobs)
			}
			_, err = txA.Exec(ctx, candidatesSQL, args(query.candidatesArgs, "default")...)
			require.NoError(t, err)
			_, err = txB.Exec(ctx, candidatesSQL, args(query.candidatesArgs, "second")...)
			require.NoError(t, err)
			tookA := took(txA, "default")
			tookB := took(txB, "second")
			require.NoError(t, txA.Commit(ctx))
			require.NoError(t, txB.Commit(ctx))
			require.Equal(t, 1, tookA, "A takes its head J1")

			var running int
			require.NoError(t, node.pool.QueryRow(ctx, fmt.Sprintf(
				"SELECT count(*) FROM %s.river_job WHERE state = 'running'", pgx.Identifier{schema}.Sanitize())).Scan(&running))
			require.Equal(t, tc.want, running, "jobs of key pi-k running (B took %d)", tookB)
			if tc.lockIsTrue {
				return
			}

			// After A's commit: B's statement 1 as of a snapshot before it
			// (no running probe) takes K's lock, now free; statement 2
			// sees J1 running.
			staleCandidates := withoutRunningProbe(t, candidatesSQL)
			for _, guarded := range []bool{true, false} {
				takeSQL := query.sql
				if !guarded {
					takeSQL = withoutRunningProbe(t, takeSQL)
				}
				txB2, err := node.pool.Begin(ctx)
				require.NoError(t, err)
				defer func() { _ = txB2.Rollback(ctx) }()
				_, err = txB2.Exec(ctx, staleCandidates, args(query.candidatesArgs, "second")...)
				require.NoError(t, err)
				rows, err := txB2.Query(ctx, takeSQL, args(query.args, "second")...)
				require.NoError(t, err)
				jobs, _, err := scanJobRows(rows)
				require.NoError(t, err)
				require.NoError(t, txB2.Rollback(ctx))
				if guarded {
					require.Empty(t, jobs, "J1 runs: B takes nothing of K")
				} else {
					require.Len(t, jobs, 1, "control: without statement 2's probe, B takes J2")
				}
			}
		})
	}
}

// withoutRunningProbe returns a running-row fetch statement whose probe for
// a running job of the key (sql/fetch_running.sql, "running_of_key") never
// finds one.
func withoutRunningProbe(t *testing.T, sql string) string {
	t.Helper()
	probe := "AND (running.state = 'running') IS TRUE"
	require.Equal(t, 1, strings.Count(sql, probe), "the statement probes once for a running job")
	return strings.Replace(sql, probe, "AND false", 1)
}

// TestExclusiveFetchPlanCacheMode checks what an exclusive fetch does to
// plan_cache_mode, with either mechanism: the fetch statement (statement 2
// of a running-row fetch) runs a generic plan, set transaction-locally
// before it, and a fetch in a caller's transaction gives the caller's value
// back, so that the caller's later statements are planned as before.
func TestExclusiveFetchPlanCacheMode(t *testing.T) {
	ctx := context.Background()
	for _, mechanism := range []exclusive.Mechanism{exclusive.LockTable, exclusive.RunningRow} {
		t.Run(mechanism.String(), func(t *testing.T) {
			schema := exclSchema(t)
			node := newExclNode(t, schema, newExclRecorder(exclusive.ProcessInstance), exclNodeOpts{
				scope: exclusive.ProcessInstance, mechanism: mechanism, maxWorkers: 1, poolConns: 2,
			})
			if mechanism == exclusive.RunningRow {
				require.NoError(t, node.engine.EnableExclusiveRunningIndex(ctx))
			}
			_, err := node.client.Insert(ctx, exclArgs{Instance: "pi-k"}, nil)
			require.NoError(t, err)

			tx, err := node.pool.Begin(ctx)
			require.NoError(t, err)
			defer func() { _ = tx.Rollback(ctx) }()
			_, err = tx.Exec(ctx, "SET LOCAL plan_cache_mode = force_custom_plan")
			require.NoError(t, err)
			res, err := newPilot(node.engine.Driver()).JobGetAvailable(ctx, node.engine.Driver().UnwrapExecutor(tx), nil,
				&riverdriver.JobGetAvailableParams{ClientID: "c", MaxAttemptedBy: 3, MaxToLock: 10, Queue: river.QueueDefault, Schema: schema})
			require.NoError(t, err)
			require.Len(t, res.Jobs, 1)
			var mode string
			require.NoError(t, tx.QueryRow(ctx, "SHOW plan_cache_mode").Scan(&mode))
			require.Equal(t, "force_custom_plan", mode, "the caller's plan_cache_mode is given back")
		})
	}
}
