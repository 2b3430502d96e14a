-- List: one page of the incidents the filter keeps (bulk's
-- sql/incidents_filter.sql, from $5), of job $4 (JOB: "job_id = $4" when a
-- job is named, else "$4::bigint = 0"), the open ones only unless $3,
-- newest first or oldest first (DIRECTION), after incident id $1 (keyset;
-- 0: the first page), at most $2 (the caller asks one more than it shows,
-- to know whether a next page exists). The open ones are served by
-- river_bpmn_incident_open (migration 004), a job's by
-- river_bpmn_incident_job, the others by the primary key.
SELECT
    id, incident_type, job_id, job_definition_id, activity_id,
    process_instance_id, message, created_at, resolved_at
FROM
    /* TEMPLATE: schema */river_bpmn_incident
WHERE
    ($3::boolean OR resolved_at IS NULL)
    AND ($1::bigint = 0 OR id /* CURSOR */ $1::bigint)
    AND /* JOB */
    AND /* FILTER */
ORDER BY
    id /* DIRECTION */
LIMIT $2::integer;
