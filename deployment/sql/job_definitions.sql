-- JobDefinitions: the job definitions of deployment $1, with their
-- overriding priority and how many of their jobs are unfinished.
SELECT d.id, d.process_definition_id, d.activity_id, d.alias, d.type, d.configuration, d.exclusive,
    d.priority, d.retry_cycle, d.timer_type, d.timer_value, d.overriding_priority,
    (
        SELECT count(*)
        FROM /* TEMPLATE: schema */river_job j
        WHERE /* TEMPLATE: schema */river_bpmn_ctx_has_job_definition(j.metadata, d.id)
            AND j.state IN ('available', 'scheduled', 'retryable', 'pending', 'running')
    )
FROM /* TEMPLATE: schema */river_bpmn_job_definition d
WHERE d.deployment_id = $1::text
ORDER BY d.process_definition_id, d.activity_id, d.id;
