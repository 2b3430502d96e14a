// Package diagnose answers the operator's question "why is this job not
// running?" from what the database records, in one call
// (workflow.Engine.WhyWaiting; the CLI's `riverbpmn why JOB_ID`; the
// console's job page, panel "Why is it not running?").
//
// A job that has not finished and does not run gets every reason that
// applies, most decisive first, each with what an operator can do:
//
//   - expired: its expiration time passed before it started (final);
//   - suspended: by which suspended process instance, job definition or
//     process definition, and since when, or the job alone;
//   - pending: inserted pending (the PENDING state of the CNES REGARDS jobs
//     module), not queued yet;
//   - prerequisites: which prerequisites have not completed (a discarded or
//     cancelled one blocks it until retried);
//   - held: a hold reason added by the application;
//   - scheduled: due later (a timer, a retry's wait), or, for a held job,
//     when it is due once released;
//   - queue paused: River's QueuePause on its queue;
//   - key held: its exclusive key is held by another job's running attempt:
//     which job, on which client, since when, and whether that client still
//     has a live liveness session; and key jobs ahead: how many jobs of the
//     same key run before it;
//   - no live client: clients record liveness sessions and none is alive;
//   - ready: none of the above: the next fetch of a client working its
//     queue takes it.
//
// A finished or running job gets one reason saying so (running, finished,
// incident: out of retries, with the last error; expired). The diagnosis
// names the exclusive scope in force, and lists what it cannot check
// because the database does not record it: the clients' acquisition
// settings (priority range, deployments, tenants), which live in each
// client's memory; the job's priority and deployment are shown to compare
// with them.
//
// Every fact is read by primary key or by the job's id: a diagnosis costs a
// few index lookups whatever the size of river_job.
package diagnose
