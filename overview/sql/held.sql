-- Held: the held jobs per process definition, job definition and reason
-- (river_bpmn_hold, migration 007).
SELECT
    coalesce(/* TEMPLATE: schema */river_bpmn_ctx_definition(j.metadata), '') AS process_definition,
    coalesce(/* TEMPLATE: schema */river_bpmn_ctx_job_definition(j.metadata), '') AS job_definition,
    h.reason,
    count(*)
FROM /* TEMPLATE: schema */river_bpmn_hold h
JOIN /* TEMPLATE: schema */river_job j ON j.id = h.job_id
GROUP BY 1, 2, 3;
