package workflow

// Exclusive jobs: the fetch path.
//
// With Config.ExclusiveScope enabled, the pilot fetches with
// sql/job_get_available_exclusive.sql instead of River's query, and the work
// middleware (exclusive_work.go) gives keys back. Everything is keyed by the
// job's exclusive key (exclusive.Key; sql/exclusive_key_*.sql).
//
// # Invariant
//
// For every key K, at any moment at most one job attempt holds K. An attempt
// (job J, attempt a) holds K from the commit of the fetch statement that moved
// J to running with attempt a and wrote the lock row (K, J, a, token t) into
// river_bpmn_exclusive_lock, until the earlier of:
//
//	(r1) the work middleware deletes that row, right after J's work function
//	     returned (or panicked), before River records the outcome; and
//	(r2) J stops running attempt a in the database: River's completer wrote
//	     the outcome, the worker committed river.JobCompleteTx, the rescuer
//	     moved a stuck job, the job was snoozed or interrupted. The row is
//	     then stale: a fetch may take it over, the sweeper may delete it.
//
// J's work runs only while it holds K: River runs only jobs the fetch
// returned, so the work starts after the fetch committed, and (r1) happens
// after the work ended. So the work of two attempts of one key never overlap.
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
//     then re-check); a takeover (DO UPDATE) succeeds only if the latest
//     committed version of the row still carries the token that this
//     statement's snapshot judged stale. The job's move to running is in the
//     same statement and only happens for a key actually taken, so two
//     fetches (on any clients, queues or nodes) racing for one key cannot
//     both start a job of it; the loser's job stays available.
//  3. Staleness is permanent. The row (K, J, a, t) and J's move to running
//     attempt a commit together, so a snapshot that sees the row sees J at
//     running attempt a or later; if J is not running attempt a there, that
//     attempt is over for good (a later run of J is a later fetch, which
//     writes its own row with a new token after replacing t). Snoozes and
//     interrupted jobs give an attempt number back, which is why the
//     takeover compares the token, not (job, attempt).
//  4. Rows change only by insert, by that token-compared takeover, and by
//     deletes whose condition is on the row itself (token, or job and
//     attempt): a delete that meets a row taken over after its snapshot
//     re-checks the new version (PostgreSQL's EvalPlanQual) and leaves it.
//     The middleware deletes by (job, attempt) while the attempt is still
//     running in the database, so the row it can match is its own.
//  5. One statement acquires its keys in key order and locks river_job rows
//     with SKIP LOCKED, as River does, so fetches never wait on each other in
//     a cycle. The key is read again from the locked row version, so a
//     metadata change racing with the fetch cannot slip through.
//
// Retries, snoozes, cancellations and client stop all end the work function
// (r1); a job that never reaches the middleware (unknown kind, undecodable
// row) or a release that fails is covered by (r2) within River's completer
// delay; a crashed client's keys are freed when the rescuer moves its jobs.
// Plain River jobs, non-exclusive jobs and jobs of no process instance have
// no key and are fetched exactly as River fetches them.
//
// # Throughput
//
// A key is free as soon as the work ends (r1), not when River's batch
// completer writes the outcome about 250 ms later. A fetch that returns fewer
// jobs than asked does not fetch again before the next poll, so when a
// released key has waiting jobs, the engine wakes the queue's producers with
// River's own insert notification (Waker, exclusive_work.go).
//
// The fetch reads a bounded window of available jobs in River's order over
// River's fetch index, then ranks that window only (first job per free key),
// and pages on with a growing window when the window held too few fetchable
// jobs, up to Config.ExclusiveLookahead rows. Each page is one statement and
// correct on its own.

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"math"
	"regexp"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/rivertype"

	"github.com/riverbpmn/riverbpmn/exclusive"
)

const exclusiveKeyMarker = "/* EXCLUSIVE_KEY */"

var (
	jobGetAvailableExclusiveSQL = mustReadSQL("job_get_available_exclusive.sql")
	exclusiveKeySQL             = map[exclusive.Scope]string{
		exclusive.ProcessInstance:     mustReadSQL("exclusive_key_process_instance.sql"),
		exclusive.RootProcessInstance: mustReadSQL("exclusive_key_root_process_instance.sql"),
	}
	exclusiveStaleLocksSQL  = mustReadSQL("exclusive_stale_locks.sql")
	exclusiveDeleteLocksSQL = mustReadSQL("exclusive_delete_locks.sql")

	// exclusiveFetchStart is the cursor of a fetch's first page: its priority
	// sorts before any River priority, so the page starts at the head
	// of the queue whatever the other two fields are.
	exclusiveFetchStart = exclusiveCursor{priority: math.MinInt16, scheduledAt: time.Unix(0, 0).UTC(), id: 0}
)

// exclusiveKeyAliasMarker is "/* EXCLUSIVE_KEY: alias */": the key of the
// river_job row named alias.
var exclusiveKeyAliasMarker = regexp.MustCompile(`/\* EXCLUSIVE_KEY: ([a-z_]+) \*/`)

// renderExclusiveSQL renders an exclusive .sql template for schema and scope:
// renderSQL's markers, and the key expression of the scope for
// "/* EXCLUSIVE_KEY */" (the row named river_job) and
// "/* EXCLUSIVE_KEY: alias */".
func renderExclusiveSQL(tmpl, schema string, scope exclusive.Scope) string {
	key := "(" + stripSQLComments(exclusiveKeySQL[scope]) + ")"
	if !scope.Enabled() {
		key = "(NULL::text)"
	}
	rendered := exclusiveKeyAliasMarker.ReplaceAllStringFunc(renderSQL(tmpl, schema), func(marker string) string {
		alias := exclusiveKeyAliasMarker.FindStringSubmatch(marker)[1]
		return strings.ReplaceAll(key, "river_job.", alias+".")
	})
	return strings.ReplaceAll(rendered, exclusiveKeyMarker, key)
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

// exclusiveFetchQuery returns the exclusive fetch query rendered for schema.
func (p *pilot) exclusiveFetchQuery(schema string) string {
	return p.driver.engine.exclusive.sql(jobGetAvailableExclusiveSQL, schema)
}

type exclusiveCursor struct {
	priority    int16
	scheduledAt time.Time
	id          int64
}

// exclusivePage is what one statement of the exclusive fetch returns.
type exclusivePage struct {
	jobs         []*rivertype.JobRow
	decodeErrors map[int64]error
	scanned      int
	last         exclusiveCursor
}

// jobGetAvailableExclusive is JobGetAvailable with strict exclusivity: pages
// through the queue in River's order until it has params.MaxToLock jobs, the
// queue has no more available jobs, or the lookahead is used up.
func (p *pilot) jobGetAvailableExclusive(
	ctx context.Context,
	exec riverdriver.Executor,
	params *riverdriver.JobGetAvailableParams,
) (*riverdriver.JobGetAvailableResult, error) {
	q, err := p.driver.querier(exec)
	if err != nil {
		return nil, err
	}
	_, inTx := exec.(riverdriver.ExecutorTx)

	ctx, cancel := context.WithTimeout(ctx, fetchTimeout)
	defer cancel()

	lookahead := cmp.Or(p.driver.engine.config.ExclusiveLookahead, exclusive.DefaultLookahead)
	res := &riverdriver.JobGetAvailableResult{Jobs: []*rivertype.JobRow{}}
	cursor := exclusiveFetchStart
	for page, scanned := 0, 0; ; page++ {
		window := exclusive.Window(params.MaxToLock-len(res.Jobs), page, lookahead-scanned)
		if window == 0 {
			break
		}
		pageStart := time.Now()
		got, err := p.exclusiveFetchPage(ctx, q, params, cursor, window)
		if debugPageHook != nil && got != nil {
			debugPageHook(page, window, got.scanned, len(got.jobs), time.Since(pageStart))
		}
		if err != nil {
			// Jobs of earlier pages are committed as running: hand them to
			// River rather than strand them, unless River's transaction
			// will roll them back anyway.
			if inTx || len(res.Jobs) == 0 {
				return nil, interpretError(err)
			}
			slog.Default().WarnContext(ctx, "riverbpmn: exclusive fetch stopped after an error; returning the jobs already locked",
				slog.String("queue", params.Queue), slog.Int("jobs", len(res.Jobs)), slog.String("err", err.Error()))
			break
		}
		res.Jobs = append(res.Jobs, got.jobs...)
		for id, decodeErr := range got.decodeErrors {
			if res.DecodeErrors == nil {
				res.DecodeErrors = make(map[int64]error)
			}
			res.DecodeErrors[id] = decodeErr
		}
		scanned += got.scanned
		if got.scanned < window { // the window reached the end of the queue
			break
		}
		cursor = got.last
	}
	return res, nil
}

// exclusiveFetchPage runs one statement of the exclusive fetch.
func (p *pilot) exclusiveFetchPage(
	ctx context.Context,
	q querier,
	params *riverdriver.JobGetAvailableParams,
	cursor exclusiveCursor,
	window int,
) (*exclusivePage, error) {
	rows, err := q.Query(ctx, p.exclusiveFetchQuery(params.Schema),
		params.Queue,
		params.Kind,
		params.Now,
		int32(min(params.MaxToLock, math.MaxInt32)),      //nolint:gosec // bounded above
		int32(min(params.MaxAttemptedBy, math.MaxInt32)), //nolint:gosec // bounded above
		params.ClientID,
		cursor.priority,
		cursor.scheduledAt,
		cursor.id,
		int32(window), //nolint:gosec // at most exclusive.MaxWindow
	)
	if err != nil {
		return nil, err
	}
	defer rows.Close()

	page := &exclusivePage{jobs: []*rivertype.JobRow{}}
	const windowColumns = 4
	for rows.Next() {
		var (
			scanned       int64
			lastPriority  *int16
			lastScheduled *time.Time
			lastID        *int64
		)
		head := []any{&scanned, &lastPriority, &lastScheduled, &lastID}
		if rows.RawValues()[windowColumns] == nil {
			// The window row alone: this page locked no job.
			dest := append(head, make([]any, len(jobRowColumns))...)
			if err := rows.Scan(dest...); err != nil {
				return nil, err
			}
		} else {
			job, decodeErr, err := scanJobRow(prefixedRow{rows: rows, prefix: head})
			if err != nil {
				return nil, err
			}
			page.jobs = append(page.jobs, job)
			if decodeErr != nil {
				if page.decodeErrors == nil {
					page.decodeErrors = make(map[int64]error)
				}
				page.decodeErrors[job.ID] = decodeErr
			}
		}
		page.scanned = int(scanned)
		if lastID != nil {
			page.last = exclusiveCursor{priority: *lastPriority, scheduledAt: *lastScheduled, id: *lastID}
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return page, nil
}

// prefixedRow scans the current row of rows into prefix followed by the
// destinations given to Scan, so that scanJobRow can read a row that starts
// with other columns.
type prefixedRow struct {
	rows   pgx.Rows
	prefix []any
}

func (r prefixedRow) Scan(dest ...any) error {
	return r.rows.Scan(append(r.prefix[:len(r.prefix):len(r.prefix)], dest...)...)
}

// ProducerKeepAlive is called by each of the client's producers every
// ProducerReportInterval (30 s by default). With exclusivity enabled it also
// deletes stale locks, so keys whose jobs ended without giving them back
// (a crashed client, after River's rescuer) do not linger in the table; a
// fetch would take them over anyway.
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
	if _, err := deleteStaleExclusiveLocks(ctx, q, params.Schema); err != nil {
		return fmt.Errorf("workflow: deleting stale exclusive locks: %w", err)
	}
	return nil
}

// deleteStaleExclusiveLocks deletes every lock whose job no longer runs the
// attempt that took it, and returns how many it deleted. Two statements on
// purpose: the first judges staleness in one snapshot; the second deletes by
// token, a condition on the row itself, so a lock taken over in between is
// left alone (invariant point 4).
func deleteStaleExclusiveLocks(ctx context.Context, q querier, schema string) (int, error) {
	rows, err := q.Query(ctx, renderSQL(exclusiveStaleLocksSQL, schema))
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

var debugPageHook func(page, window, scanned, jobs int, d time.Duration)
