// Package liveness lets the database see which riverbpmn clients are alive,
// and gives the running jobs of a dead client back to the queue without using
// up one of their executions. It is on by default for every engine with a
// database pool (workflow.Config.Liveness.Disabled opts out). Its cost: one
// database connection per client that works jobs, outside the client's
// pool, holding one advisory lock; one statement per client every
// PingInterval (two a second with the defaults); one statement of the
// leader every CheckInterval (one a second). TestLivenessCost measures it.
//
// # Liveness
//
// A client proves it is alive with a session: a row of
// river_bpmn_client_session (migration riverbpmn/008) naming a database
// backend that holds a session-level advisory lock, taken on a connection of
// the client's own (Keeper) before the row commits. PostgreSQL drops the lock
// the moment that connection or the client's process dies (SIGKILL, OOM, a
// crash, pg_terminate_backend, a closed socket), so a crash is visible at
// once, without waiting for a heartbeat to go stale, and nothing has to be
// written while the client lives. A heartbeat row was the alternative: it
// costs a write per client per beat, and its staleness bound is the beat,
// where the lock's is the database noticing the closed connection.
//
// A session is dead once its row exists and its backend no longer holds the
// lock (pg_locks). Any client's ping records when it first saw that
// (dead_since); the takeover service on River's elected leader (Reaper)
// waits Config.TakeoverAfter from there, then, in one transaction, moves every
// job the session fetched that is still running back to available (attempt
// given back, its place in the queue kept, an error entry naming the dead
// client, no retry wait), frees their exclusive keys, wakes the queues' producers and deletes
// the session. River's rescuer stays the backstop for clients that are alive
// but stuck.
//
// # Fencing: why a takeover never runs a key twice
//
// The danger is a client that is alive but cut off: its session is dead for
// the database (its connection was terminated, or the network dropped it)
// while its workers still run. The client stops its own work first:
//
//   - Every PingInterval the Keeper runs a statement on the session's
//     connection. A reply proves the backend, and so the lock, was alive
//     when it answered, which is after the ping was sent at S (the
//     statement also checks that it ran on the session's backend, which a
//     transaction-mode pooler would not guarantee). Let L be the moment the
//     lock is lost: every successful ping was sent before L.
//   - The Keeper's deadline is S + FenceAfter for the last successful ping's
//     S. A ping whose connection is gone (terminated, broken), or the
//     deadline passing without a success, fences the session (a ping that
//     fails otherwise, say a statement error, proves nothing: the deadline
//     decides): the client stops fetching with it, cancels the context of every
//     job it fetched (Config.OnLost), and drops the outcomes of those runs, so
//     neither River's completer nor JobCompleteTx writes them later. It then
//     waits for its fetches in flight and opens a new session. Fetches and
//     completions carry the deadline as their context deadline, so none of
//     them is still waiting for its reply after S + FenceAfter.
//   - Every fenced job had its context cancelled by S + FenceAfter < L +
//     FenceAfter. River's contract for workers is to return when their context
//     is cancelled; CancelGrace is how long they get.
//   - The takeover of the session happens at or after dead_since +
//     TakeoverAfter, with dead_since >= L (nobody can see the lock gone before
//     it is) and TakeoverAfter >= FenceAfter + CancelGrace (Validate checks
//     it). Both intervals are durations measured on one clock each (the
//     client's monotonic clock, the database's clock), so no clock
//     synchronisation is assumed, only that clocks run at the same rate.
//
// So by the time any other client can fetch a job of a taken-over session,
// or the key it held, the cut-off client has cancelled that job and had
// CancelGrace to return. Exclusive keys then keep their invariant
// (exclusive/doc.go): the takeover moves the holding job out of
// running and frees the lock row in one transaction, so the key's next job
// starts only after the dead run stopped.
//
// # Stalls
//
// A client whose process did not run for a while (a GC pause, CPU
// starvation, a paused VM, SIGSTOP) finds its deadline passed when it runs
// again, though nothing proves its session lost: the watchdog, waking more
// than PingInterval late, gives it FenceAfter from then to prove its
// session alive with a ping on the same connection (fetches and completions
// wait), and fences it only if that fails. A reply on the same connection
// proves the lock was held all along, so nobody took its jobs over. The
// others bound how long a session may go without a ping: one whose backend
// holds its lock but has been idle for StallAfter is recorded dead, and its
// backend ended (pg_stat_activity; for backends of another role it reads
// nothing, and the lock alone decides). The grace never reaches past the
// last proof + StallAfter, so a client stalled that long fences itself
// before a takeover can start; a client frozen longer finds its connection
// ended when it runs again.
//
// # Leaving
//
// A client that stops closes its session (row first, then the lock) only
// once the outcome of its last run is written. A stop that gives up with
// jobs running leaves the session open; the process exiting ends it, and
// its jobs are taken over as for a crash. River's rescuer (the pilot's
// JobGetStuck) skips jobs of dead sessions (JobsOfDeadSessions), so a short
// RescueStuckJobsAfter never uses an attempt of a job the takeover gives
// back.
//
// What it rests on, besides the clocks: workers return within CancelGrace of
// their context being cancelled (a worker that ignores cancellation breaks
// River's rescue in the same way); and a statement whose client stopped
// waiting for it at its deadline does not commit more than CancelGrace later
// (pgx sends PostgreSQL a cancel request at the deadline). A fetch that still
// committed later than that leaves a running job no live client works: it is
// never run twice, River's rescuer moves it, as for any stuck job.
//
// # Identity of a session's jobs
//
// A job belongs to the session of River client c that fetched it:
// attempted_by ends with c, and started_at <= attempted_at < superseded_at
// (the start of c's next session). A client opens its next session only
// after every fetch of the previous one returned, so the two ranges never
// mix. River client ids must therefore be unique among running clients, as
// River's leader election already requires.
//
// # Leadership
//
// The takeover runs on River's elected leader. When the leader itself dies,
// River would wait out its leadership (15 s by default) before electing
// another: the ping of every live client also deletes the leader row of a
// leader whose sessions are all dead and sends River's own "resigned"
// notification, exactly what River's leader does when it steps down, so a
// new leader is elected at once.
package liveness
