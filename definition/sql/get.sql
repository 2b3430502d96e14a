-- Get: the stored state of job definition $1, with when it was
-- suspended (NULL when it is active).
SELECT d.id, d.process_definition_key, d.activity_id, d.kind, d.overriding_priority, s.suspended_at
FROM /* TEMPLATE: schema */river_bpmn_job_definition d
LEFT JOIN /* TEMPLATE: schema */river_bpmn_suspension s
    ON s.target_type = 'job_definition' AND s.target_id = d.id
WHERE d.id = $1::text;
