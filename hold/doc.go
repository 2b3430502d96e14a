// Package hold keeps jobs from running for named reasons, in River's own
// 'pending' state.
//
// River never fetches, schedules, rescues or cleans a pending job, so a held
// job costs River's fetch nothing: a database with no held job is fetched
// exactly as before. A job can be held for several reasons at once (a job of
// a suspended process instance that also waits for another job); it is
// released only when its last reason is removed, in the transaction that
// removes it, and then goes back exactly where it was going:
//
//   - available, if it was available;
//   - scheduled at its due time, if it was scheduled (River's scheduler makes
//     it available when due);
//   - retryable with its wait, if it had failed (likewise);
//   - pending, if River's InsertOpts.Pending (or another mechanism outside
//     this package) had put it there.
//
// A scheduled or retryable job whose due time passed while it was held
// becomes available at once, as River's scheduler would make it (a held job
// is pending, which River's unique jobs count like available, so this never
// conflicts with a unique key).
//
// Neither holding nor releasing touches a job's priority, attempts,
// max_attempts or due date (scheduled_at).
//
// # Where the state lives
//
// The reasons are rows of river_bpmn_hold, keyed by job and reason (migration
// riverbpmn/007). A copy of them, with the state the job goes to when
// released, is in the job's metadata under MetadataKey, so River UI shows a
// held job as held:
//
//	"bpmn_hold": {"reasons": ["suspended"], "release_to": "scheduled", "since": "2026-..."}
//
// Rows and metadata change together, with the job's row locked (rows are
// always locked in id order), by two database functions that Add and Remove
// call, river_bpmn_hold_add and river_bpmn_hold_remove; triggers may call them
// too, so a release can happen in the very transaction that makes it due.
//
// # Jobs that River moves
//
// A job may be held while it runs: it finishes its current execution, and
// what River then records decides what happens. A trigger on river_job turns
// any move of a held job to available, scheduled or retryable (River's
// completer after a failure or a snooze, the rescuer, JobRetry, a client's
// shutdown) back to pending, keeping the asked-for state as the job's
// release_to; a move to a final state (completed, cancelled, discarded) ends
// the hold, and deleting the job deletes its reasons. So a job that fails
// while held is retried, with its wait, only once it is released. River's
// completer then emits no completion event for that run (it sees a pending
// job), as it does for any job moved to pending concurrently.
//
// Adding a reason to a job that has it, or removing one it does not have,
// does nothing. Reasons are at most 255 bytes; this package's own is
// Suspended. A feature adding a reason chooses a name no other uses.
package hold
