// Package search lists jobs and process instances for operators (the
// console's Jobs and Instances pages, workflow.Engine.SearchJobs and
// SearchProcessInstances): by state, kind, job definition, process
// definition, tenant, process instance id prefix and creation time, newest
// or oldest first, a page at a time with a keyset cursor (the last job's
// id), never an OFFSET.
//
// Indexes. Jobs are listed in id order, which the primary key serves; a
// filter is a predicate on the rows the walk reads, unless an index serves
// it better, as the planner judges from the statistics:
//
//   - one of the sparse states (pending, scheduled, retryable, discarded,
//     cancelled): river_bpmn_job_state_sparse (state, id), a partial index
//     that holds only jobs in those states (migration 022). A job that is
//     inserted available, runs and completes never enters it, so River's
//     hot path does not pay for it;
//   - available, running, completed: the primary key (dense states), or
//     River's river_job_prioritized_fetching_index for a few;
//   - job definition, process definition, tenant: River's GIN index on
//     metadata (containment), or the primary key when the target has many
//     jobs;
//   - kind: River's river_job_kind, or the primary key;
//   - process instance id prefix and creation time: a filter on the walk:
//     no index (an index by instance costs an entry at every state change
//     of every job; riverbpmn dropped it in migration 012). A prefix
//     matching only old instances walks far; the exact instance is found
//     through its page (containment, GIN).
//
// Process instances have no table of their own: Instances walks the
// matching jobs (a bounded window, InstanceWindow jobs per instance asked
// for) and lists each instance once per page, at its newest matching job.
package search
