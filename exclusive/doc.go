// Package exclusive holds the pieces of riverbpmn's exclusive jobs that do not
// need the engine: which key a job is exclusive on (Scope, Key), how far a
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
// The enforcement lives in package workflow, which composes this package: the
// fetch takes a key in the same statement that moves the job to running, and
// the work middleware gives it back when the job's work function returns.
// Exclusivity composes with every acquisition option of a client (ordering
// by priority, timers first, due date; priority ranges; deployments): across
// keys a client fetches in its own order, and of each free key it takes the
// head, the first waiting job of the key in its order among the jobs it may
// take (workflow.Acquisition says more, including what two clients with
// different filters do).
// The invariant and the race analysis are written down in
// workflow/exclusive_fetch.go.
package exclusive
