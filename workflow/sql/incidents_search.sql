-- IncidentsSearch: one page of the incidents the filter keeps (bulk's
-- sql/incidents_filter.sql, from $4), the open ones only unless $3,
-- newest first or oldest first (DIRECTION), after incident id $1 (keyset;
-- 0: the first page), at most $2. The open ones are served by
-- river_bpmn_incident_open (migration 004), the others by the primary key.
SELECT
    id, incident_type, job_id, job_definition_id, activity_id,
    process_instance_id, message, created_at, resolved_at
FROM
    /* TEMPLATE: schema */river_bpmn_incident
WHERE
    ($3::boolean OR resolved_at IS NULL)
    AND ($1::bigint = 0 OR id /* CURSOR */ $1::bigint)
    AND /* FILTER */
ORDER BY
    id /* DIRECTION */
LIMIT $2::integer;
