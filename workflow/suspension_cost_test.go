package workflow

import (
	"context"
	"errors"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/exclusive"
)

// TestSuspensionRepeatableReadInserter: an inserter in REPEATABLE READ whose
// snapshot predates a suspension gets a serialization error rather than
// inserting an active job of the suspended definition.
func TestSuspensionRepeatableReadInserter(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	engine, schema := suspEngine(t, exclusive.None)
	client := newSuspClient(t, engine, engine.Driver(), schema, newSuspRecorder())

	tx, err := engine.dbPool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead})
	require.NoError(t, err)
	defer tx.Rollback(ctx)            //nolint:errcheck // the transaction fails
	_, err = tx.Exec(ctx, "SELECT 1") // takes the snapshot
	require.NoError(t, err)
	_, err = engine.SuspendJobDefinition(ctx, "susp_task", nil)
	require.NoError(t, err)
	_, err = client.InsertTx(ctx, tx, suspArgs{Name: "rr", JobDef: "susp_task"}, nil)
	var pgErr *pgconn.PgError
	require.True(t, errors.As(err, &pgErr), "want a serialization failure, got %v", err)
	require.Equal(t, "40001", pgErr.Code)

	// A REPEATABLE READ inserter that starts after the suspension inserts
	// the job suspended.
	err = pgx.BeginTxFunc(ctx, engine.dbPool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead}, func(tx pgx.Tx) error {
		res, err := client.InsertTx(ctx, tx, suspArgs{Name: "rr2", JobDef: "susp_task"}, nil)
		if err == nil && !IsJobSuspended(res.Job) {
			t.Errorf("job inserted active: %s", describe(res.Job))
		}
		return err
	})
	require.NoError(t, err)
}

// TestSuspensionInsertCost measures what the hold triggers of migration
// riverbpmn/007 add to inserting jobs with a job context when nothing is
// suspended: rounds of InsertMany of 500 jobs with the triggers enabled and
// disabled, alternating. Set RIVERBPMN_SUSPENSION_COST=1 to run it; the
// README quotes its figures.
func TestSuspensionInsertCost(t *testing.T) {
	if os.Getenv("RIVERBPMN_SUSPENSION_COST") == "" {
		t.Skip("set RIVERBPMN_SUSPENSION_COST=1 to measure")
	}
	ctx := context.Background()
	engine, schema := suspEngine(t, exclusive.None)
	client := newSuspClient(t, engine, engine.Driver(), schema, newSuspRecorder())
	const batch, rounds = 500, 15
	params := make([]river.InsertManyParams, batch)
	plain := make([]river.InsertManyParams, batch)
	for i := range params {
		params[i] = river.InsertManyParams{Args: suspArgs{Name: "cost", JobDef: "susp_task", Instance: "pi-" + string(rune('a'+i%26))}}
		plain[i] = river.InsertManyParams{Args: suspPlainArgs{Name: "cost"}}
	}
	setTriggers := func(enable bool) {
		verb := "DISABLE"
		if enable {
			verb = "ENABLE"
		}
		for _, trigger := range []string{"river_bpmn_job_insert_hold", "river_bpmn_job_record_hold"} {
			_, err := engine.dbPool.Exec(ctx, engine.sql(`ALTER TABLE /* TEMPLATE: schema */river_job `+verb+` TRIGGER `+trigger))
			require.NoError(t, err)
		}
	}
	measure := func(p []river.InsertManyParams) time.Duration {
		start := time.Now()
		_, err := client.InsertMany(ctx, p)
		require.NoError(t, err)
		return time.Since(start)
	}
	var with, without, plainWith, plainWithout []time.Duration
	for range rounds {
		setTriggers(true)
		with = append(with, measure(params))
		plainWith = append(plainWith, measure(plain))
		setTriggers(false)
		without = append(without, measure(params))
		plainWithout = append(plainWithout, measure(plain))
	}
	setTriggers(true)
	// With an unrelated target suspended, every job checks its own targets.
	insertSusp(ctx, t, client, suspArgs{Name: "other", Instance: "pi-elsewhere"})
	_, err := engine.SuspendProcessInstance(ctx, "pi-elsewhere")
	require.NoError(t, err)
	var withSuspension []time.Duration
	for range rounds {
		withSuspension = append(withSuspension, measure(params))
	}
	median := func(d []time.Duration) time.Duration { slices.Sort(d); return d[len(d)/2] }
	t.Logf("the same with an unrelated process instance suspended: %s (%.1f µs per job more than without the triggers)",
		median(withSuspension), float64(median(withSuspension)-median(without))/float64(time.Microsecond)/batch)
	t.Logf("InsertMany of %d jobs with a job context, median of %d rounds: %s with the hold triggers, %s without (%.1f µs per job)",
		batch, rounds, median(with), median(without), float64(median(with)-median(without))/float64(time.Microsecond)/batch)
	t.Logf("InsertMany of %d plain River jobs: %s with, %s without", batch, median(plainWith), median(plainWithout))
}
