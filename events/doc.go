// Package events records job status changes in an outbox table and lets any
// process connected to the database follow them.
//
// What is recorded. While events are enabled (Enable), a statement trigger on
// river_job records every status change in river_bpmn_event, in the same
// transaction as the change, so no event describes something that did not
// commit:
//
//   - RUNNING: a fetch moved the job to running;
//   - SUCCEEDED: the job completed;
//   - FAILED: an attempt failed (RetriesLeft says whether the job will run
//     again), the job was discarded, or it cancelled itself (river.JobCancel
//     from its work);
//   - ABORTED: the job was cancelled after a stop request (River's
//     cancel_attempted_at marker in its metadata: riverbpmn's Jobs().Stop, River's
//     JobCancel, River UI's cancel button);
//   - INCIDENT: a job with a job context was discarded, which opens a
//     failedJob incident (riverbpmn/004).
//
// Each event carries the job id, kind, queue, attempt, job context and the
// time of the change. The events of one UPDATE statement are stored in one
// outbox row, as parallel arrays (at most 1,024 events a row; migration
// riverbpmn/017), and Read unpacks them: an event's id is its row's id plus
// its position in the row, so event ids stay unique and increasing within a
// transaction.
//
// How it is read. Subscribe reads the outbox by cursor, (transaction id, row
// id), taking only rows below the oldest transaction that was still running
// in this database when it looked; a subscriber that resumes after its last
// cursor therefore misses nothing, whatever order transactions committed in.
// A long-running transaction in the database delays delivery until it ends
// (transactions known to run in other databases of the server do not). A named subscription keeps its
// cursor in river_bpmn_event_subscription, so a process that restarts resumes
// where it stopped; delivery is at least once (events after the last saved
// cursor are delivered again; Event.ID tells them apart). LISTEN/NOTIFY only
// wakes subscribers early; they also poll, so a lost notification delays an
// event by at most the poll interval. Subscriptions and GetSubscription read
// a named subscription's saved cursor, when it was saved, and how many
// committed events the outbox holds after it: how far behind its consumer
// is (`riverbpmn subscriptions`, the console's Events page).
//
// ReadBackward reads the other way, newest first, a page at a time, for
// people (the console's Events page): what is committed now, without the
// horizon a subscriber needs.
//
// Cost. Off, nothing exists on river_job: no trigger, no statement, no index
// write. On, one INSERT ... SELECT per UPDATE statement on river_job (River's
// fetch and completer update in batches, so one per batch), joining the
// statement's transition tables by a merge or hash join and aggregating
// them into one compressed row (one heap tuple, one index entry, one
// sequence value per statement, not per event; migration riverbpmn/017),
// and at most one notification per schema every 50 ms (migration
// riverbpmn/013): NOTIFY
// makes committing transactions wait for each other, so a notification per
// statement would serialize River's commits. A subscriber reads again 60 ms
// after every batch it got, so the events of a statement that did not
// notify arrive about as fast as those of one that did.
//
// Retention. Prune deletes events older than a retention, in cursor order
// (a statement's events together, as they share their row);
// the engine runs it on River's elected leader (Config.Events). A subscriber
// away for longer than the retention misses what was pruned.
package events
