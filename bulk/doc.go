// Package bulk runs management actions on many jobs at once, safely: a
// retry of incidents (Camunda Cockpit's batch "set retries"), suspend,
// activate, stop and priority set, on a selection of job ids or on every
// job matching a filter (package search). workflow.Engine's Bulk* methods
// and the console's bulk forms call it.
//
// Safety:
//
//   - Batches. A bulk retry takes DefaultBatchSize (500) incidents per
//     transaction (sql/incidents_retry_batch.sql: one statement locks,
//     revives and, through the incident trigger, resolves them), so no row
//     lock outlives its batch and River's fetches and completions wait for
//     at most one batch. The other actions change one job per transaction
//     (the engine's own method), batch after batch.
//   - Progress. OnProgress is called after each batch with a Progress:
//     total (when known), done, changed, failed, and the cursor.
//   - Idempotence. Every action leaves alone a job it has already changed
//     (a retry touches only jobs still discarded; suspending a suspended
//     job changes nothing), so repeating a bulk action, or resuming an
//     interrupted one from its Progress (RetryOpts.Resume, JobOpts.Resume),
//     changes each job once. A retry walks the incidents open when it began
//     (up to Progress.UpTo): a job it revived that fails again opens a new
//     incident, left for the next retry.
//   - Selection by filter is walked with a keyset cursor in id order, so a
//     job the action moves out of the filter is neither skipped nor taken
//     twice.
package bulk
