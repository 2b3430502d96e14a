-- DeleteJobs: deletes the unfinished jobs of deployment $1 that are not
-- running (a cascading delete; running jobs refuse it before this runs).
DELETE FROM /* TEMPLATE: schema */river_job
WHERE /* TEMPLATE: schema */river_bpmn_ctx_has(metadata, 6, 'deployment_id', $1::text)
    AND state IN ('available', 'scheduled', 'retryable', 'pending');
