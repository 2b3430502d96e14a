-- AllIncidents: every incident, open or resolved, newest first, at most $1.
SELECT
    id, incident_type, job_id, job_definition_id, activity_id,
    process_instance_id, message, created_at, resolved_at
FROM
    /* TEMPLATE: schema */river_bpmn_incident
ORDER BY
    id DESC
LIMIT $1::integer;
