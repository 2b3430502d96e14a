package workflow

// Exclusive jobs: the fetch path.
//
// With Config.ExclusiveScope enabled, every client of the engine fetches with
// the exclusive half of sql/job_get_available.sql: its own fetch plan (the
// filters and order of its Acquisition, package fetchplan) plus the exclusive
// step; the work middleware (exclusive_work.go) gives keys back. Everything is
// keyed by the job's exclusive key (ExclusiveKeyOf; sql/exclusive_key*.sql).
//
// # Invariant
//
// For every key K, at any moment at most one acquisition holds K. An
// acquisition is a run of job attempts (J1, a1), ..., (Jn, an), n >= 1, in
// run order: one job (n = 1) without batching, or, with
// Config.ExclusiveBatch, the head of K and the key's next waiting jobs that
// the same fetch took. It holds K from the commit of the fetch statement
// that moved J1..Jn to running with attempts a1..an and wrote (K, J1, a1,
// token t, and for n > 1 the run [J1..Jn], [a1..an]) into K's row of
// river_bpmn_exclusive_lock, until the earlier of:
//
//	(r1) the row is marked free (job NULL, compared by K and t) after the
//	     work functions of the run have all returned (or panicked), or
//	     ended without running (below): by a release statement the work
//	     middleware runs before the run's last job returns to River, or,
//	     when it deferred the release (every producer's last fetch was
//	     full), by the next fetch of one of the engine's clients, which
//	     gives the key back and may take it again in the same statement (a
//	     takeover of a token the engine names as ended, point 2 below); and
//	(r2) no job of the run still runs its attempt in the database: for
//	     each Ji, River's completer wrote the outcome, the worker committed
//	     river.JobCompleteTx, the rescuer moved a stuck job, the job was
//	     snoozed or interrupted, the liveness takeover gave it back. The row
//	     is then stale: a fetch may take it over, the sweeper may delete it.
//	     Staleness is judged on every job the row names
//	     (sql/lock_is_live.sql), never on J1 alone: the head of a run may
//	     complete in the database (JobCompleteTx, a cancellation) while
//	     later jobs of the run wait or work, and a takeover then would be an
//	     overlap (TestExclusiveBatchStalenessNamesTheRun).
//
// Within a run, the client works the jobs strictly one after another, in run
// order, on the client that fetched them (exclusive_run.go): Jk's work
// starts only after J1..Jk-1 have ended, so the run's work functions never
// overlap either. A job of the run whose work never reaches the middleware
// (unknown kind, undecodable row) ends when River's producer reports it
// finished (ProducerInit below), and holds nothing back.
//
// The invariant does not depend on the clients' acquisition options: a
// client's filters and order decide only which jobs it considers and in
// which order (below), never how a key is taken or given back. So it holds
// between clients with different orders, priority ranges, deployments,
// queues and kinds alike.
//
// J's work runs only while its run holds K: River runs only jobs the fetch
// returned, so the work starts after the fetch committed; (r1) happens after
// the run's last work ended; and (r2) cannot happen while a job of the run
// works, since that job still runs its attempt. So the work of two attempts
// of one key never overlap.
// The exceptions are the two ways River itself lets work outlive the running
// state: a worker that commits JobCompleteTx and then keeps working, and a
// worker that ignores cancellation past RescueStuckJobsAfter (River then runs
// the rescued job a second time as well). Both are outside River's contract
// for workers; the key is given back with the running state there.
//
// # Why it is race-free
//
//  1. key is the lock table's primary key: at most one row per key exists.
//  2. A fetch takes a key only through INSERT ... ON CONFLICT (key): a plain
//     insert succeeds only when no row exists, committed or in flight (the
//     unique index makes a concurrent inserter wait for the other's outcome,
//     then re-check); an update of the existing row (DO UPDATE) succeeds only
//     if the row's latest committed version, which PostgreSQL locks and
//     re-reads for it, is free (no job) or still carries the token that this
//     statement's snapshot judged stale, or a token the engine passes as
//     given back (its attempt's work has ended: (r1) happens in this very
//     statement). The job's move to running is in the
//     same statement and only happens for a key actually taken, so two
//     fetches (on any clients, queues or nodes) racing for one key cannot
//     both start a job of it; the loser's job stays available.
//  3. Staleness is permanent. The row version (K, J1..Jn, a1..an, t) and
//     the jobs' moves to running commit together, so a snapshot that sees it
//     sees each Ji at running attempt ai or later; if none is running its
//     attempt there, those attempts are over for good (a later run of a Ji
//     is a later fetch, which writes its own acquisition with a new token
//     over t). Snoozes and interrupted jobs give an attempt number back,
//     which is why every comparison is by token, not by (job, attempt).
//  4. Rows change only by that insert or conditional takeover, by a release
//     and by a sweep, whose conditions are on the row itself (key and
//     token): one that meets a row taken over after its snapshot re-checks
//     the new version (PostgreSQL's EvalPlanQual) and leaves it. A token
//     names one acquisition, so a release is correct however late it runs;
//     the fetch hands the token to the engine (held keys, by job attempt)
//     and the middleware gives back exactly what its job took.
//  5. One statement acquires its keys in key order and locks river_job rows
//     with SKIP LOCKED, as River does, so fetches never wait on each other in
//     a cycle. The key is read again from the locked row version, so a
//     metadata change racing with the fetch cannot slip through.
//
// # Which job of a key runs next
//
// A fetch takes, of each key that no running attempt holds, only its head
// (with Config.ExclusiveBatch, the head and the key's next waiting jobs in
// the same order under the same filters, a prefix of the key's waiting jobs
// the client may take, cut at the first job another fetch has locked):
// the first waiting job of the key in the client's order among the jobs the
// client may take (available, due, in the queue it fetches, of a kind it
// works, and passing its filters: priority range, registered deployments).
// Across keys, jobs come in the client's order. The order and filters are
// the client's fetch plan; the head probe compares a job with the earlier
// jobs of its key in that same order (fetchplan.Plan.Before) under the same
// filters. Two clients with different filters can see different heads of
// one key: each runs the first job it may take, and a job it may not take
// never holds it back (TestExclusiveDifferentHeads). The key's jobs then run
// in an order no single client's order gives, one at a time all the same.
// A job that no client may take waits, and holds nothing back.
//
// Retries, snoozes, cancellations and client stop all end the work function
// (r1); a job that never reaches the middleware (unknown kind, undecodable
// row) gives its key back when River's producer reports it finished
// (ProducerInit below), and a release that fails is covered by (r2) within
// River's completer delay; a crashed client's keys are freed when the
// rescuer moves its jobs, or within seconds with Config.Liveness, whose
// takeover moves them and frees the keys in one transaction, after the
// client has stopped its own work (fencing; the timing argument is in
// liveness/doc.go).
// Plain River jobs, non-exclusive jobs and jobs of no process instance have
// no key and are fetched exactly as River fetches them.
//
// # Throughput
//
// A key is free as soon as the work ends (r1), not when River's batch
// completer writes the outcome about 250 ms later; the releases of concurrent
// workers share one statement (exclusive.Batcher). River fetches again when
// a job of a full fetch ends, and finds the key's next job; so when every
// producer of the engine had a full last fetch the release costs no
// statement at all: it is deferred to that fetch (deferredReleases,
// exclusive_work.go; flushed on its own after 50 ms without a fetch, and at
// producer shutdown). After a fetch
// that came back short it waits for the next poll, so when a released key has
// waiting jobs and one of the engine's producers came back short, the engine
// wakes the queue's producers with River's own insert notification (Waker,
// exclusive_work.go).
//
// The fetch streams available jobs in the client's order over that order's
// index (River's fetch index, or one of migration riverbpmn/003) and keeps a
// job with a key only if no running attempt holds the key and no earlier job
// of the key that the client may take waits (index probes: one step in the
// head-of-key index in River's order, migration riverbpmn/005, or, for an
// order led by priority, in the one by priority, migration riverbpmn/010;
// with an order led by timers first or due date the probe reads the key's
// waiting jobs in the queue),
// stopping as soon as it has enough jobs and after at most
// Config.ExclusiveLookahead rows. Lock rows are
// kept when a key is given back, so taking and giving back a key are
// in-place updates of one small row.

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/rivershared/riverpilot"
	"github.com/riverqueue/river/rivertype"

	"github.com/riverbpmn/riverbpmn/exclusive"
)

var (
	exclusiveKeyExpressionSQL = map[exclusive.Scope]string{
		exclusive.ProcessInstance:     mustReadSQL("exclusive_key_process_instance.sql"),
		exclusive.RootProcessInstance: mustReadSQL("exclusive_key_root_process_instance.sql"),
	}
	exclusiveKeyJSONBExpressionSQL = map[exclusive.Scope]string{
		exclusive.ProcessInstance:     mustReadSQL("exclusive_key_jsonb_process_instance.sql"),
		exclusive.RootProcessInstance: mustReadSQL("exclusive_key_jsonb_root_process_instance.sql"),
	}
	exclusiveKeyGuardSQL = map[exclusive.Scope]string{
		exclusive.ProcessInstance:     mustReadSQL("exclusive_key_guard_process_instance.sql"),
		exclusive.RootProcessInstance: mustReadSQL("exclusive_key_guard_root_process_instance.sql"),
	}
	exclusiveKeySQL         = mustReadSQL("exclusive_key.sql")
	exclusiveStaleLocksSQL  = mustReadSQL("exclusive_stale_locks.sql")
	exclusiveDeleteLocksSQL = mustReadSQL("exclusive_delete_locks.sql")
	lockIsLiveSQL           = mustReadSQL("lock_is_live.sql")
	jitOffSQL               = mustReadSQL("jit_off.sql")
	exclusiveWaitingSQL     = mustReadSQL("exclusive_waiting.sql")
)

// freeLockRetention is how long a sweep keeps a lock row whose key was given
// back, so that the key's next job takes it with an in-place update.
const freeLockRetention = time.Minute

// The markers of exclusive .sql templates, besides renderSQL's.
var (
	// "/* EXCLUSIVE_KEY */" and "/* EXCLUSIVE_KEY: alias */": the exclusive
	// key of the river_job row named river_job, or alias (NULL if none).
	exclusiveKeyMarker = regexp.MustCompile(`/\* EXCLUSIVE_KEY(?:: ([a-z_]+))? \*/`)
	// "/* KEY_EXPRESSION: alias */": the scope's key expression of the row
	// alias, as its index has it (for index conditions).
	keyExpressionMarker = regexp.MustCompile(`/\* KEY_EXPRESSION: ([a-z_]+) \*/`)
	// "/* KEY_JSONB_EXPRESSION: alias */": the scope's key expression of the
	// row alias as jsonb, as the priority-order index of migration 010 has
	// it.
	keyJSONBExpressionMarker = regexp.MustCompile(`/\* KEY_JSONB_EXPRESSION: ([a-z_]+) \*/`)
	// "/* KEY_GUARD: alias */": whether the key fields of the row alias are
	// of the types a key needs (strings), as the exclusive key requires.
	keyGuardMarker = regexp.MustCompile(`/\* KEY_GUARD: ([a-z_]+) \*/`)
	// "/* LOCK_IS_LIVE: alias */": whether the lock row alias holds its key.
	lockIsLiveMarker = regexp.MustCompile(`/\* LOCK_IS_LIVE: ([a-z_]+) \*/`)
	// "/* WAITING_FOR: expression */": whether the river_job row waiting is an
	// available, due, exclusive job of the key given by expression.
	waitingForMarker = regexp.MustCompile(`/\* WAITING_FOR: ([a-z_.]+) \*/`)
)

// renderExclusiveSQL renders an exclusive .sql template for schema and scope:
// the markers above, then renderSQL's. With scope None every key is NULL.
func renderExclusiveSQL(tmpl, schema string, scope exclusive.Scope) string {
	keyExpression, keyJSONBExpression, keyGuard := "NULL::text", "NULL::jsonb", "true"
	if scope.Enabled() {
		keyExpression = stripSQLComments(exclusiveKeyExpressionSQL[scope])
		keyJSONBExpression = stripSQLComments(exclusiveKeyJSONBExpressionSQL[scope])
		keyGuard = stripSQLComments(exclusiveKeyGuardSQL[scope])
	}
	forAlias := func(sql, alias string) string { return strings.ReplaceAll(sql, "river_job.", alias+".") }
	key := "(" + strings.NewReplacer("KEY_EXPRESSION", keyExpression, "KEY_GUARD", "("+keyGuard+")").
		Replace(stripSQLComments(exclusiveKeySQL)) + ")"

	rendered := replaceMarker(tmpl, exclusiveKeyMarker, func(alias string) string {
		if alias == "" {
			return key
		}
		return forAlias(key, alias)
	})
	rendered = replaceMarker(rendered, waitingForMarker, func(keyValue string) string {
		return "(" + strings.ReplaceAll(stripSQLComments(exclusiveWaitingSQL), "KEY_VALUE", keyValue) + ")"
	})
	rendered = replaceMarker(rendered, keyExpressionMarker, func(alias string) string {
		return "(" + forAlias(keyExpression, alias) + ")"
	})
	rendered = replaceMarker(rendered, keyJSONBExpressionMarker, func(alias string) string {
		return "(" + forAlias(keyJSONBExpression, alias) + ")"
	})
	rendered = replaceMarker(rendered, keyGuardMarker, func(alias string) string {
		return "(" + forAlias(keyGuard, alias) + ")"
	})
	rendered = replaceMarker(rendered, lockIsLiveMarker, func(alias string) string {
		return strings.ReplaceAll(stripSQLComments(lockIsLiveSQL), "LOCK_ALIAS", alias)
	})
	return renderSQL(rendered, schema)
}

// replaceMarker replaces every match of marker in sql with replace(its first
// group).
func replaceMarker(sql string, marker *regexp.Regexp, replace func(arg string) string) string {
	return marker.ReplaceAllStringFunc(sql, func(match string) string {
		return replace(marker.FindStringSubmatch(match)[1])
	})
}

// stripSQLComments drops whole-line "--" comments, so a fragment can be
// inlined anywhere.
func stripSQLComments(sql string) string {
	var lines []string
	for line := range strings.SplitSeq(sql, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "--") {
			lines = append(lines, line)
		}
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}

// exclusiveEnabled reports whether this pilot's engine enforces exclusivity.
func (p *pilot) exclusiveEnabled() bool {
	return p.driver.engine != nil && p.driver.engine.config.ExclusiveScope.Enabled()
}

// jobGetAvailableExclusive is JobGetAvailable with strict exclusivity, in one
// statement (the exclusive half of sql/job_get_available.sql).
func (p *pilot) jobGetAvailableExclusive(
	ctx context.Context,
	exec riverdriver.Executor,
	query *fetchQuery,
	params *riverdriver.JobGetAvailableParams,
) (*riverdriver.JobGetAvailableResult, error) {
	q, err := p.driver.querier(exec)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, fetchTimeout)
	defer cancel()

	engine := p.driver.engine
	releasesBefore := engine.exclusive.releaseSeq.Load()
	// The keys the engine deferred to this fetch (exclusive_work.go): the
	// statement gives them back first. Not in a transaction of the caller's,
	// which might roll them back.
	var deferred []heldKey
	if _, inTx := exec.(riverdriver.ExecutorTx); !inTx {
		deferred = engine.exclusive.takeDeferred(params.Schema)
	}
	rows, err := q.Query(ctx, query.sql, p.fetchArgs(query, params, deferred)...)
	if err != nil {
		// Not given back: give them back on their own.
		go engine.releaseNow(params.Schema, deferred)
		return nil, interpretError(err)
	}
	res, err := p.scanExclusiveFetch(params.Schema, rows, query.batch)
	if len(deferred) > 0 {
		engine.exclusive.releaseSeq.Add(uint64(len(deferred)))
		engine.exclusive.carried.Add(uint64(len(deferred)))
		if engine.exclusive.filtered.Load() {
			// A client with filters may not take the next job of a key it
			// gave back: wake the keys' queues for whichever client may
			// (at most once per FilteredWakeCooldown), as a release of
			// its own does when a job of the key waits.
			for _, held := range deferred {
				engine.exclusive.filteredWaker.Wake(wakeTarget(held.schema, held.queue))
			}
		}
	}
	if err != nil {
		return nil, interpretError(err)
	}
	if query.fair {
		p.driver.fairTurns.advance(params.Schema, params.Queue, res.Jobs, p.driver.acquisition.TenantWeights)
	}
	target := wakeTarget(params.Schema, params.Queue)
	short := len(res.Jobs) < params.MaxToLock
	engine.exclusive.recordFetch(target, p, short)
	if short && engine.exclusive.waker != nil && engine.exclusive.releaseSeq.Load() != releasesBefore {
		// A key was given back while this fetch ran, maybe too late for its
		// snapshot, and maybe without a wake-up (this producer did not look
		// hungry then): make sure the queue is fetched again.
		engine.exclusive.waker.Wake(target)
	}
	return res, nil
}

// scanExclusiveFetch reads the fetched jobs, each followed by the key it
// took and that acquisition's token (with batch, also its place in the key's
// run and the run's length), and records the keys as held.
func (p *pilot) scanExclusiveFetch(schema string, rows pgx.Rows, batch bool) (*riverdriver.JobGetAvailableResult, error) {
	defer rows.Close()
	res := &riverdriver.JobGetAvailableResult{Jobs: []*rivertype.JobRow{}}
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
		job, decodeErr, err := scanJobRow(suffixedRow{rows: rows, suffix: suffix})
		if err != nil {
			return nil, err
		}
		res.Jobs = append(res.Jobs, job)
		if decodeErr != nil {
			if res.DecodeErrors == nil {
				res.DecodeErrors = make(map[int64]error)
			}
			res.DecodeErrors[job.ID] = decodeErr
		}
		switch {
		case key == nil || token == nil:
		case runLen != nil && *runLen > 1 && runPos != nil:
			p.driver.engine.exclusive.holdRun(schema, job, *key, *token, int(*runPos)-1, int(*runLen))
		default:
			p.driver.engine.exclusive.holdKey(schema, job, *key, *token)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return res, nil
}

// suffixedRow scans the current row of rows into the destinations given to
// Scan followed by suffix, so that scanJobRow can read a row that has more
// columns after the job's.
type suffixedRow struct {
	rows   pgx.Rows
	suffix []any
}

// Scan scans the row into dest, then into the suffix.
func (r suffixedRow) Scan(dest ...any) error {
	return r.rows.Scan(append(dest[:len(dest):len(dest)], r.suffix...)...)
}

// ProducerInit wraps the producer state River keeps for the client's
// producer, so that a job that finishes without its work having run (an
// unknown kind, an undecodable row: River skips the middleware then) still
// gives back the key it took.
func (p *pilot) ProducerInit(ctx context.Context, exec riverdriver.Executor, params *riverpilot.ProducerInitParams) (int64, riverpilot.ProducerState, error) {
	if err := p.checkSchemaWiring(params.Schema); err != nil {
		return 0, nil, err // the client refuses to start (client.go)
	}
	if engine := p.driver.engine; engine != nil {
		if err := engine.recordExclusiveScope(ctx, params.Schema, params.ClientID); err != nil {
			return 0, nil, err // the client refuses to start
		}
	}
	id, state, err := p.StandardPilot.ProducerInit(ctx, exec, params)
	if err != nil || !p.exclusiveEnabled() {
		return id, state, err
	}
	return id, &exclusiveProducerState{ProducerState: state, engine: p.driver.engine}, nil
}

// exclusiveProducerState gives back the key of every finished job whose work
// middleware did not (River calls JobFinish for every job it ran).
type exclusiveProducerState struct {
	riverpilot.ProducerState

	engine *Engine
}

// JobFinish is called by River for every job its producer ran.
func (s *exclusiveProducerState) JobFinish(job *rivertype.JobRow) {
	s.ProducerState.JobFinish(job)
	if s.engine.config.ExclusiveBatch > 1 {
		if m, ok := s.engine.exclusive.runMemberOf(job); ok {
			// A job of a run that never reached the middleware (or whose
			// middleware ended it already: no effect) ends here, so that
			// the rest of its run does not wait for it.
			if held, ok := s.engine.exclusive.endRunJob(job, m); ok {
				go s.engine.releaseExclusive(context.Background(), held)
			}
			return
		}
	}
	if held, ok := s.engine.exclusive.takeHeld(job); ok {
		// River calls this on its producer's loop: release elsewhere.
		go s.engine.releaseExclusive(context.Background(), held)
	}
}

// ProducerShutdown forgets the stopping producer's fetch state.
func (p *pilot) ProducerShutdown(ctx context.Context, exec riverdriver.Executor, params *riverpilot.ProducerShutdownParams) error {
	if p.exclusiveEnabled() {
		p.driver.engine.exclusive.forgetProducer(wakeTarget(params.Schema, params.Queue), p)
		// Its jobs have ended: give back what waits for a fetch now.
		p.driver.engine.flushDeferred(params.Schema)
	}
	return p.StandardPilot.ProducerShutdown(ctx, exec, params)
}

// ProducerKeepAlive is called by each of the client's producers every
// ProducerReportInterval (30 s by default). With exclusivity enabled it also
// sweeps the lock table: it deletes stale locks, so keys whose jobs ended
// without giving them back (a crashed client, after River's rescuer) do not
// linger (a fetch would take them over anyway), and rows of keys given back
// more than a minute ago.
func (p *pilot) ProducerKeepAlive(ctx context.Context, exec riverdriver.Executor, params *riverdriver.ProducerKeepAliveParams) error {
	if err := p.StandardPilot.ProducerKeepAlive(ctx, exec, params); err != nil {
		return err
	}
	if !p.exclusiveEnabled() {
		return nil
	}
	q, err := p.driver.querier(exec)
	if err != nil {
		return err
	}
	if _, err := sweepExclusiveLocks(ctx, q, params.Schema, freeLockRetention); err != nil {
		return fmt.Errorf("workflow: sweeping exclusive locks: %w", err)
	}
	return nil
}

// sweepExclusiveLocks deletes every stale lock and every free lock row given
// back more than retention ago, and returns how many rows it deleted. Two
// statements on purpose: the first judges staleness in one snapshot; the
// second deletes by token, a condition on the row itself, so a lock taken in
// between (a new token) is left alone (invariant point 4).
//
// Given the pool, it runs both in a transaction with JIT compilation off:
// the first statement probes river_job once per lock row, so on a lock table
// with many rows, or with stale statistics after many updates, its estimated
// cost passes jit_above_cost, and compiling it took about 1.9 s of the 2.2 s
// it ran on a table of 1,000 keys that had been updated 600,000 times
// (autovacuum off). That is CPU taken from the fetches every
// ProducerReportInterval, per producer, and a snapshot held as long, during
// which PostgreSQL cannot mark the index entries of the jobs fetched since
// as dead, so every fetch in the meantime visits all of them again (a fetch
// by priority one heap page each; README, "Exclusive jobs"). Given a
// transaction (the caller's), it runs the statements in it as they are.
func sweepExclusiveLocks(ctx context.Context, q querier, schema string, retention time.Duration) (int, error) {
	if pool, ok := q.(*pgxpool.Pool); ok {
		var deleted int
		err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, jitOffSQL); err != nil {
				return err
			}
			n, err := sweepExclusiveLocks(ctx, tx, schema, retention)
			deleted = n
			return err
		})
		return deleted, err
	}
	rows, err := q.Query(ctx, renderExclusiveSQL(exclusiveStaleLocksSQL, schema, exclusive.None), retention)
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
	rows, err = q.Query(ctx, renderSQL(exclusiveDeleteLocksSQL, schema), tokens)
	if err != nil {
		return 0, err
	}
	deleted, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return 0, err
	}
	return len(deleted), nil
}
