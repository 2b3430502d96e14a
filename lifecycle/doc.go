// Package lifecycle gives jobs the lifecycle of the CNES REGARDS jobs module: jobs
// inserted pending and queued later, jobs that wait for other jobs
// (prerequisites), and expiration dates.
//
// A job asks for any of them at insert with Opts, stored in its metadata
// under MetadataKey ("bpmn_lifecycle"); triggers of migration riverbpmn/011
// act on it in the inserting transaction, whichever River insert call wrote
// the job. A job without the key costs nothing: the triggers' WHEN clauses
// test one key, and the fetch is River's own.
//
// # Pending and queued
//
// Opts.Pending inserts the job held (package hold) for reason Pending, in
// River's 'pending' state; Queue (by ids) or QueueProcessInstance removes
// that reason. Holds compose: a pending job of a suspended process instance
// is held for both reasons, queuing it removes only Pending (StillHeld), and
// activating the instance releases it only if it was queued. River's own
// InsertOpts.Pending (without Opts.Pending) is left to River: such a job is
// pending but not held; Queue makes it available (scheduled, if due later),
// and if a suspension holds it, makes it go there when released instead of
// back to pending. A job inserted with both is riverbpmn-pending. Queuing a
// job that is not pending does nothing (NotPending); an unknown id is a
// *NotFoundError naming it, and nothing is queued.
//
// # Prerequisites
//
// Opts.DependsOn names jobs that must complete first. Each must exist when
// the job is inserted (earlier, or earlier in the same transaction): an
// unknown id fails the insert (the whole batch) with an error naming it,
// which wraps ErrJobNotFound and workflow.ErrNotFound:
//
//	insert of ship job: lifecycle.Opts.DependsOn names job 77, which does not exist: ...
//
// Since an edge can
// only point to a job that already exists, no insert can close a cycle. The
// job is held for reason Prerequisites while any prerequisite has not
// completed; its edges are rows of river_bpmn_dependency, and each
// prerequisite not completed yet gets the mark DependentsKey in its
// metadata.
//
// When a marked job completes, a trigger (in the completing transaction,
// so a crash cannot lose it) records it done for its dependents and
// releases (hold.Remove) those it was the last open prerequisite of; the
// release wakes their queues' producers, so they start without waiting
// for a poll. Releases are serialised by one transaction-level advisory
// lock taken only by completions of marked jobs, so two prerequisites of
// one job completing at once never both miss each other, and releasers
// never lock dependents in opposite orders (no deadlock).
//
// A prerequisite that ends discarded or cancelled does not release its
// dependents: they stay held (never cancelled), their progress shows the
// prerequisite as blocked, and the prerequisite's own incident (a
// discarded job with a job context opens one, migration 004) is what an
// operator acts on. Retrying it (River's JobRetry, SetJobRetries) clears
// the block; when it then completes, the chain is released as usual. To
// give up on a chain instead, cancel its dependents. A prerequisite that
// is deleted before completing (River's cleaner deletes cancelled and
// discarded jobs after their retention) leaves its dependents held: cancel
// them, or retry the prerequisite before its retention ends.
//
// Dependencies reports, for a job, how many prerequisites completed out of
// how many, which are blocked, and how many jobs wait for it.
//
// # Expiration
//
// Opts.ExpiresAt is when the job expires. It must be after the insert and
// after the job's scheduled time (InsertOpts.ScheduledAt): otherwise the
// job could never run, and the engine's middleware fails the insert with an
// error naming the field and its value ("lifecycle.Opts.ExpiresAt ... is
// already past"). A job that has not started by then never starts: River's work path checks it (ExpiresAt, one byte
// search in the job's metadata for jobs without one) before any user code,
// and a job fetched after its expiry is ended as discarded with
// ExpiryMessage, without running. Jobs still waiting (pending, scheduled,
// available, retryable) when they expire are discarded with the same error
// by Service, which River runs on its elected leader: within
// DefaultServiceInterval (1 s) of the expiry, plus a statement. A job with
// a job context gets a failedJob incident (migration 004). A running job is
// not interrupted; if its run fails, it is not retried after its expiry.
// Expiry is final: retrying an expired job ends it expired again.
package lifecycle
