-- UnfinishedJobs: how many jobs of deployment $1 are unfinished, by state
-- (found by containment over River's GIN index on metadata,
-- river_bpmn_ctx_has of migration riverbpmn/016, deployment at position 6).
SELECT state::text, count(*)
FROM /* TEMPLATE: schema */river_job
WHERE /* TEMPLATE: schema */river_bpmn_ctx_has(metadata, 6, 'deployment_id', $1::text)
    AND state IN ('available', 'scheduled', 'retryable', 'pending', 'running')
GROUP BY state
ORDER BY state;
