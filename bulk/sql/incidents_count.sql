-- IncidentsCount: how many open incidents a bulk retry will walk: those up
-- to incident id $1, of the jobs $2 (NULL: every job), of job definition $3
-- and process instance id prefix $4 (NULL: any). Served by
-- river_bpmn_incident_open (migration 004).
SELECT
    count(*)
FROM
    /* TEMPLATE: schema */river_bpmn_incident
WHERE
    resolved_at IS NULL
    AND id <= $1::bigint
    AND ($2::bigint[] IS NULL OR job_id = ANY($2::bigint[]))
    AND ($3::text IS NULL OR job_definition_id = $3::text)
    AND ($4::text IS NULL OR process_instance_id LIKE $4::text);
