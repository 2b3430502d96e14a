// Package suspension suspends and activates job definitions, process
// definitions, process instances and single jobs, with Camunda's semantics
// (Camunda 7 user guide, "Process Engine API": suspension), on top of package hold.
//
// A suspended job is held for reason hold.Suspended: it sits in River's
// 'pending' state, which River never fetches, so no client runs it whatever
// its acquisition options, and it neither holds nor blocks an exclusive key
// (exclusive fetching looks only at available jobs). Activation puts it back
// exactly where it was going (available, scheduled at its due time, or
// retryable with its wait); neither changes its retries, priority or due
// date. A job that runs when it is suspended finishes its current execution;
// if that execution fails or snoozes, the job is not run again until it is
// activated.
//
// Targets:
//
//   - a job definition: its new jobs are inserted suspended; with IncludeJobs
//     its existing unfinished jobs are suspended too;
//   - a process definition: each of its job definitions is suspended (so
//     their new jobs start suspended), and so are new jobs of the process
//     definition that have no job definition, and its timer start event
//     jobs (timer jobs of no process instance, which belong to the process
//     definition, as in Camunda), whether or not IncludeJobs is set; with
//     IncludeJobs its existing jobs too;
//   - a process instance: all its jobs, present and future;
//   - one job.
//
// "Inserted suspended" holds for every insert call (the six of River's
// client, and COPY) because it is done by a trigger in the inserting
// transaction (migration riverbpmn/007), including inserts under way when a
// suspension commits: the trigger takes shared advisory locks before reading
// the suspension rows, and Set takes them exclusively, so Set waits for
// those inserts to commit and every later insert sees the suspension. When
// nothing is suspended, an inserting transaction learns so once (one lock,
// one look at an empty table) and each of its jobs then costs a
// transaction-local setting lookup; suspending the first target waits for
// every such transaction. Otherwise each job takes the lock of its targets'
// buckets (LockBuckets per table), and a suspension waits only for inserts
// of its bucket. Set waits at most InsertWaitTimeout.
//
// Suspension state is one flag per job, as in Camunda: activating a job (or,
// with IncludeJobs, a job definition or process definition, or a process
// instance) activates its jobs whatever suspended them. Other reasons a job
// is held (package hold) are never touched.
//
// A suspension or activation of a job definition or process definition can
// be scheduled for a later time: it is then a row of
// river_bpmn_suspension_schedule, applied when due by Service, which runs on
// River's elected leader, so it survives restarts and is applied once.
// ApplyScheduled applies one now, before it is due (what executing the
// delayed suspension's job by hand does in Camunda).
//
// Existing jobs are changed in batches of BatchSize jobs, one transaction
// each, so inserts of a suspended target wait for at most one short
// transaction. A batch runs only while the target is still in the state the
// cascade is for: a later suspension or activation of the same target wins.
package suspension
