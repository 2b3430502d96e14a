-- JobIncidents: every incident of job $1, open or resolved, oldest first.
-- Served by river_bpmn_incident_job (migration riverbpmn/004).
SELECT
    id, incident_type, job_id, job_definition_id, activity_id,
    process_instance_id, message, created_at, resolved_at
FROM
    /* TEMPLATE: schema */river_bpmn_incident
WHERE
    job_id = $1::bigint
ORDER BY
    id ASC
LIMIT $2::integer;
