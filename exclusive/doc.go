// Package exclusive is riverbpmn's exclusive jobs: which key a job is
// exclusive on (Scope, Key) and which scope is in force in a schema
// (ScopeInForce), the fetch step and the key keeper that enforce it, the
// management listings of held keys, how far a
// fetch looks ahead for fetchable jobs (DefaultLookahead), how concurrent key
// releases share one statement (Batcher), how a released key wakes the
// producers of a queue without flooding the database with notifications
// (Waker), and a checker for recorded job timelines (Timeline) that tests and
// benchmarks use to prove that no two jobs of one key ever overlapped.
//
// The rule, as in Camunda 7's job executor: jobs are exclusive by default, a
// job definition may opt out. While an exclusive job with key K runs, no other
// exclusive job with key K starts, across every client and node working one
// database. The key is the job's process instance, or with
// RootProcessInstance its root process instance, so that a called
// sub-process shares its root's key. Jobs without a process instance never
// block each other; non-exclusive jobs are never blocked; plain River jobs
// are untouched.
//
// The mechanism lives here too, and package workflow composes it: the
// engine's clients fetch with the exclusive step (FetchStepSQL, Keeper.Fetch),
// which takes a key in the same statement that moves the job to running;
// the engine's work middleware gives it back when the job's work function
// returns (Keeper.Work); the key keeper (Keeper) holds what the clients of
// one engine share; the management listings (Locks, ReadWait) and the
// scope in force (ScopeInForce, RecordScope) read the database. This
// package does not import workflow: it is given a database (DB) and the
// engine's row scanner.
//
// Exclusivity composes with every acquisition option of a client (ordering
// by priority, timers first, due date; priority ranges; deployments): across
// keys a client fetches in its own order, and of each free key it takes the
// head, the first waiting job of the key in its order among the jobs it may
// take (workflow.Acquisition says more, including what two clients with
// different filters do).
//
// The settings are Config (workflow.Config.Exclusive); the management calls
// are the handle Exclusive (workflow.Engine.Exclusive: Locks, Wait, Scope,
// SetScope, Mechanism, ...).
//
// With the workflow engine's configuration, the scope is
// workflow.Config.Exclusive.Scope: the zero value is ProcessInstance, as in
// Camunda, and None opts out explicitly.
//
// The fetch step (sql/fetch_step.sql, rendered into the client's fetch
// query by the engine; the key is sql/exclusive_key*.sql) and the key
// keeper (keeper.go, run.go) rest on the following.
//
// # Invariant
//
// For every key K, at any moment at most one acquisition holds K. An
// acquisition is a run of job attempts (J1, a1), ..., (Jn, an), n >= 1, in
// run order: one job (n = 1) without batching, or, with
// workflow.Config.Exclusive.Batch, the head of K and the key's next waiting jobs that
// the same fetch took. It holds K from the commit of the fetch statement
// that moved J1..Jn to running with attempts a1..an and wrote (K, J1, a1,
// token t, and for n > 1 the run [J1..Jn], [a1..an]) into K's row of
// river_bpmn_exclusive_lock, until the earlier of:
//
//	(r1) the work functions of the run have all returned (or panicked),
//	     or ended without running (below), and then either a release
//	     statement marks the row free (job NULL, compared by K and t),
//	     which the work middleware runs before the run's last job returns
//	     to River, or, when it needs none (every producer's last fetch was
//	     full), the engine records t as ended (ended.go) and a fetch of one
//	     of its clients names t: that fetch may take K over in the
//	     statement that takes K's next job (a takeover of a token the
//	     engine names as ended, point 2 below); and
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
// order, on the client that fetched them (run.go): Jk's work
// starts only after J1..Jk-1 have ended, so the run's work functions never
// overlap either. A job of the run whose work never reaches the middleware
// (unknown kind, undecodable row) ends when River's producer reports it
// finished (Keeper.JobFinished), and holds nothing back.
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
// (with workflow.Config.Exclusive.Batch, the head and the key's next waiting jobs in
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
// (Keeper.JobFinished), and a release that fails is covered by (r2) within
// River's completer delay; a crashed client's keys are freed when the
// rescuer moves its jobs, or within seconds with workflow.Config.Liveness (on by default), whose
// takeover moves them and frees the keys in one transaction, after the
// client has stopped its own work (fencing; the timing argument is in
// liveness/doc.go).
// Plain River jobs, non-exclusive jobs and jobs of no process instance have
// no key and are fetched exactly as River fetches them.
//
// # Throughput
//
// A key is free as soon as the work ends (r1), not when River's batch
// completer writes the outcome (every 50 ms, in batches); the releases of
// concurrent workers share one statement (exclusive.Batcher). River fetches
// again when a job of a full fetch ends, and finds the key's next job; so
// when every producer of the engine had a full last fetch the release costs
// no statement and no write at all: the engine records the acquisition as
// ended and its fetches name it, the fetch that takes the key's next job
// takes the key over in one update, and once River writes the outcome the
// row is stale for every client (ended.go; an ended key that neither
// happens to within EndedKeyFlush, or whose producer stops, is written
// free by a statement). A key then costs one lock-row write per
// acquisition. After a fetch
// that came back short it waits for the next poll, so when a released key has
// waiting jobs and one of the engine's producers came back short, the engine
// wakes the queue's producers with River's own insert notification (Waker,
// keeper.go).
//
// The fetch statement runs a generic plan (Keeper.Fetch sets
// plan_cache_mode before it, transaction-locally, and restores it in a
// caller's transaction): planned once per connection instead of at many
// calls.
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
// workflow.Config.Exclusive.Lookahead rows. Lock rows are
// kept when a key is given back, so taking and giving back a key are
// in-place updates of one small row.
//
// # Designs measured and not kept
//
// A key held by River's own row: a key is held exactly while a job of the
// key is running in river_job, with no lock row. A fetch was two
// statements in one transaction: the first picked candidate heads and took
// pg_try_advisory_xact_lock on each one's key, the second, with a snapshot
// taken after those locks were granted, took each locked key's head only
// if no job of the key was running (a partial index on the key where
// state = 'running'). A fetcher granted a key's lock after another fetch
// committed sees that commit, since PostgreSQL releases a transaction's
// locks only once its commit is visible. The argument held, and tests that
// played the two-snapshot race step by step failed as soon as the advisory
// lock or the running probe was taken out. Measured against the lock table
// in the same runs (docs/benchmarks.md) it wrote about 5% less WAL per job
// but was no faster in River's order at 100 workers, slower in Camunda's
// order (statement 2 re-read each locked key's head, and River's row
// update there was dearer than a lock row) and slower at 2,000 workers;
// it also needed an advisory lock per candidate (PostgreSQL's shared lock
// table), gave a key back to other engines only when River's completer
// wrote the outcome, and did not compose with batching or fair fetching.
// The lock table stayed; the running row was retired (migration
// riverbpmn/029 forgets a schema's record of it, and a client refuses to
// start on a schema that still records it: CheckMechanism).
package exclusive
