package exclusive

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river/rivertype"

	"github.com/riverbpmn/riverbpmn/fetchplan"
)

var (
	staleLocksSQL  = mustReadSQL("exclusive_stale_locks.sql")
	deleteLocksSQL = mustReadSQL("exclusive_delete_locks.sql")
	jitOffSQL      = mustReadSQL("jit_off.sql")
	fetchStepSQL   = mustReadSQL("fetch_step.sql")
)

// FetchStepSQL is the text of the exclusive step of a client's fetch
// statement: the text/template definitions that the fetch template
// (fetchplan/sql/fetch.sql) executes when the engine enforces
// exclusivity. FetchStep plugs it in.
func FetchStepSQL() string { return fetchStepSQL }

// FetchStep is the exclusive step of the fetch statement of a client whose
// engine enforces scope (which must enforce something): batch makes it take
// runs of a key's jobs (workflow.Config.Exclusive.Batch above 1), countHeld
// makes it count the candidates it passed over because their key was held
// (FetchParams.CountHeld), headMarker is the head probe's index marker
// (fetchplan.ExclusiveStep). Keeper.Fetch runs the rendered statement.
func FetchStep(scope Scope, batch, countHeld bool, headMarker string) *fetchplan.ExclusiveStep {
	return &fetchplan.ExclusiveStep{
		Templates: fetchStepSQL, Batch: batch, CountHeld: countHeld, HeadMarker: headMarker,
		Render: func(sql, schema string, markerValues ...string) string {
			return RenderSQL(sql, schema, scope, markerValues...)
		},
	}
}

// FreeLockRetention is how long a sweep keeps a lock row whose key was given
// back, so that the key's next job takes it with an in-place update.
const FreeLockRetention = time.Minute

// Querier is the part of pgx that runs a multi-row query: a pool, a
// connection or a transaction.
type Querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// FetchParams is one exclusive fetch of a client's producer.
type FetchParams struct {
	// Querier runs the fetch statement; InTx is set when it is a
	// transaction of the caller's (ended keys are then not named: the
	// caller might roll a takeover back).
	Querier Querier
	InTx    bool
	// Schema, Queue and MaxToLock are River's fetch parameters; Producer
	// names the producer (any comparable value, the same at every fetch).
	Schema    string
	Queue     string
	MaxToLock int
	Producer  any
	// Statement is the fetch statement (the client's plan with the
	// exclusive step, FetchStep). With Batch it takes runs (its rows then
	// carry a run position and length after the key and token). With
	// CountHeld it also returns, as its last column
	// (exclusive_held_skipped), how many candidates the exclusive step
	// passed over because their key was held, and at least one row (a
	// fetch that took no job returns one row with its job columns NULL):
	// Fetch stores the count in HeldSkipped.
	Statement   *fetchplan.Statement
	HeldSkipped *int64
	// Args are the statement's arguments by name; Fetch adds
	// @ended_tokens, the tokens of the engine's ended keys, which the
	// fetch may take over.
	Args fetchplan.Args
	// ScanJob reads one fetched job from row: the job's columns, then the
	// destinations row.Scan is given after them.
	ScanJob func(row pgx.Row) (job *rivertype.JobRow, decodeErr error, err error)
}

// Fetch runs one exclusive fetch: it names the engine's ended keys (which
// it may take over), takes keys with the jobs it moves to running, records
// them as held, and wakes the queue again when a key was given back while
// it ran and it came back short. It returns the jobs and their decode
// errors.
func (k *Keeper) Fetch(ctx context.Context, p FetchParams) ([]*rivertype.JobRow, map[int64]error, error) {
	releasesBefore := k.releaseSeq.Load()
	var ended []Held
	if !p.InTx {
		ended = k.endedKeysOf(p.Schema)
	}
	tokens := make([]int64, len(ended))
	for i, held := range ended {
		tokens[i] = held.Token
	}
	p.Args["ended_tokens"] = tokens
	jobs, decodeErrors, taken, err := k.runFetch(ctx, p)
	if err != nil {
		return nil, nil, err
	}
	k.forgetTakenOver(p.Schema, ended, taken)
	target := WakeTarget(p.Schema, p.Queue)
	short := len(jobs) < p.MaxToLock
	k.recordFetch(target, p.Producer, short)
	if short && k.waker != nil && k.releaseSeq.Load() != releasesBefore {
		// A key was given back while this fetch ran, maybe too late for its
		// snapshot, and maybe without a wake-up (this producer did not look
		// hungry then): make sure the queue is fetched again.
		k.waker.Wake(target)
	}
	return jobs, decodeErrors, nil
}

// genericPlanSQL makes the statements after it in its transaction run
// generic plans, keeping plan_cache_mode's value in
// riverbpmn.plan_cache_mode for restorePlanCacheModeSQL.
const genericPlanSQL = "SELECT set_config('riverbpmn.plan_cache_mode', current_setting('plan_cache_mode'), true), set_config('plan_cache_mode', 'force_generic_plan', true)"

// restorePlanCacheModeSQL gives plan_cache_mode back the value
// genericPlanSQL kept, when the fetch runs in the caller's transaction.
const restorePlanCacheModeSQL = "SELECT set_config('plan_cache_mode', current_setting('riverbpmn.plan_cache_mode'), true)"

// BatchSender sends a pgx batch: a pool, a connection or a transaction.
type BatchSender interface {
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
}

// runFetch runs the fetch statement and scans it. Sent through a
// BatchSender (a pool, a transaction), it runs a generic plan: a statement
// before it in the same pipeline (one implicit transaction, or the
// caller's, restored after it) sets plan_cache_mode. Left to itself, PostgreSQL
// planned the fetch in River's order anew at 30-52% of its calls (about
// 30 us per job of planning under load) with no better execution
// (docs/benchmarks.md).
func (k *Keeper) runFetch(ctx context.Context, p FetchParams) (jobs []*rivertype.JobRow, decodeErrors map[int64]error, taken map[string]bool, err error) {
	stmt := p.Statement
	args, err := stmt.Bind(p.Args)
	if err != nil {
		return nil, nil, nil, err
	}
	sender, ok := p.Querier.(BatchSender)
	if !ok {
		rows, err := p.Querier.Query(ctx, stmt.SQL, args...)
		if err != nil {
			return nil, nil, nil, err
		}
		return k.scanFetch(p.Schema, rows, stmt.Batch, stmt.CountHeld, p.HeldSkipped, p.ScanJob)
	}
	batch := &pgx.Batch{}
	batch.Queue(genericPlanSQL)
	batch.Queue(stmt.SQL, args...)
	if p.InTx {
		batch.Queue(restorePlanCacheModeSQL)
	}
	results := sender.SendBatch(ctx, batch)
	defer func() {
		if closeErr := results.Close(); err == nil {
			err = closeErr
		}
	}()
	if _, err := results.Exec(); err != nil {
		return nil, nil, nil, err
	}
	rows, err := results.Query()
	if err != nil {
		return nil, nil, nil, err
	}
	if jobs, decodeErrors, taken, err = k.scanFetch(p.Schema, rows, stmt.Batch, stmt.CountHeld, p.HeldSkipped, p.ScanJob); err != nil {
		return nil, nil, nil, err
	}
	if p.InTx {
		if _, err := results.Exec(); err != nil {
			return nil, nil, nil, err
		}
	}
	return jobs, decodeErrors, taken, nil
}

// scanFetch reads the fetched jobs, each followed by the key it took and
// that acquisition's token (with batch, also its place in the key's run and
// the run's length), records the keys as held, and returns them (taken).
func (k *Keeper) scanFetch(schema string, rows pgx.Rows, batch, countHeld bool, heldSkipped *int64, scanJob func(pgx.Row) (*rivertype.JobRow, error, error)) (jobs []*rivertype.JobRow, decodeErrors map[int64]error, taken map[string]bool, err error) {
	defer rows.Close()
	jobs = []*rivertype.JobRow{}
	var held int64 // the count of candidates passed over, with countHeld
	for rows.Next() {
		var (
			key    *string
			token  *int64
			runPos *int64
			runLen *int32
			suffix = []any{&key, &token}
		)
		if batch {
			suffix = append(suffix, &runPos, &runLen)
		}
		if countHeld {
			if rows.RawValues()[0] == nil { // no job taken: the count alone
				values, err := rows.Values()
				if err != nil {
					return nil, nil, nil, err
				}
				held, _ = values[len(values)-1].(int64)
				continue
			}
			suffix = append(suffix, &held)
		}
		job, decodeErr, err := scanJob(suffixedRow{rows: rows, suffix: suffix})
		if err != nil {
			return nil, nil, nil, err
		}
		jobs = append(jobs, job)
		if decodeErr != nil {
			if decodeErrors == nil {
				decodeErrors = make(map[int64]error)
			}
			decodeErrors[job.ID] = decodeErr
		}
		if key == nil || token == nil {
			continue
		}
		if taken == nil {
			taken = make(map[string]bool)
		}
		taken[*key] = true
		if runLen != nil && *runLen > 1 && runPos != nil {
			k.holdRun(schema, job, *key, *token, int(*runPos)-1, int(*runLen))
		} else {
			k.holdKey(schema, job, *key, *token)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, nil, nil, err
	}
	if countHeld && heldSkipped != nil {
		*heldSkipped = held
	}
	return jobs, decodeErrors, taken, nil
}

// suffixedRow scans the current row of rows into the destinations given to
// Scan followed by suffix, so that a job scanner can read a row that has
// more columns after the job's.
type suffixedRow struct {
	rows   pgx.Rows
	suffix []any
}

// Scan scans the row into dest, then into the suffix.
func (r suffixedRow) Scan(dest ...any) error {
	return r.rows.Scan(append(dest[:len(dest):len(dest)], r.suffix...)...)
}

// SweepLocks deletes every stale lock taken, and every free lock row given
// back, more than retention ago, and returns how many rows it deleted. Two
// statements on purpose: the first judges staleness in one snapshot; the
// second deletes by token, a condition on the row itself, so a lock taken in
// between (a new token) is left alone (invariant point 4, doc.go).
//
// Given a pool, it runs both in a transaction with JIT compilation off:
// the first statement probes river_job once per lock row, so on a lock table
// with many rows, or with stale statistics after many updates, its estimated
// cost passes jit_above_cost, and compiling it took about 1.9 s of the 2.2 s
// it ran on a table of 1,000 keys that had been updated 600,000 times
// (autovacuum off). That is CPU taken from the fetches every
// ProducerReportInterval, per producer, and a snapshot held as long, during
// which PostgreSQL cannot mark the index entries of the jobs fetched since
// as dead, so every fetch in the meantime visits all of them again (a fetch
// by priority one heap page each). Given a transaction (the caller's), it
// runs the statements in it as they are.
func SweepLocks(ctx context.Context, q Querier, schema string, retention time.Duration) (int, error) {
	if pool, ok := q.(*pgxpool.Pool); ok {
		var deleted int
		err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, jitOffSQL); err != nil {
				return err
			}
			n, err := SweepLocks(ctx, tx, schema, retention)
			deleted = n
			return err
		})
		return deleted, err
	}
	rows, err := q.Query(ctx, RenderSQL(staleLocksSQL, schema, None), retention)
	if err != nil {
		return 0, err
	}
	tokens, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return 0, err
	}
	if len(tokens) == 0 {
		return 0, nil
	}
	rows, err = q.Query(ctx, RenderSQL(deleteLocksSQL, schema, None), tokens)
	if err != nil {
		return 0, err
	}
	deleted, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return 0, err
	}
	return len(deleted), nil
}
