-- OpenIncidentsPage: one page of the open incidents, oldest first, after
-- incident id $1 (keyset), at most $2. Served by river_bpmn_incident_open
-- (migration riverbpmn/004). OpenIncidents is its first page (0).
SELECT
    id, incident_type, job_id, job_definition_id, activity_id,
    process_instance_id, message, created_at, resolved_at
FROM
    /* TEMPLATE: schema */river_bpmn_incident
WHERE
    resolved_at IS NULL
    AND id > $1::bigint
ORDER BY
    id ASC
LIMIT $2::integer;
