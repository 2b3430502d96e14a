-- Definitions: the unfinished jobs (and the discarded ones River still
-- keeps) per process definition, job definition and state. Reads the jobs
-- in those states only: the sparse states through
-- river_bpmn_job_state_sparse (migration 022), available and running
-- through River's river_job_prioritized_fetching_index and primary key;
-- completed jobs, the bulk of a busy table, are not read.
SELECT
    coalesce(/* TEMPLATE: schema */river_bpmn_ctx_definition(metadata), '') AS process_definition,
    coalesce(/* TEMPLATE: schema */river_bpmn_ctx_job_definition(metadata), '') AS job_definition,
    state::text,
    count(*)
FROM /* TEMPLATE: schema */river_job
WHERE state IN ('available', 'scheduled', 'retryable', 'pending', 'running', 'discarded')
GROUP BY 1, 2, 3;
