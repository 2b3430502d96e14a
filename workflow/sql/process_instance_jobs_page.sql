-- ProcessInstanceJobsPage: one page of the jobs of a process instance, by id,
-- after job id $2 (keyset), at most $3. Served by
-- river_bpmn_job_process_instance (migration riverbpmn/001), an index on
-- (process instance id, id): the page is an index range scan however many
-- jobs the instance has.
SELECT
    /* COLUMNS: river_job */
FROM
    /* TEMPLATE: schema */river_job
WHERE
    metadata ? 'bpmn'
    AND metadata -> 'bpmn' ->> 'process_instance_id' = $1::text
    AND id > $2::bigint
ORDER BY
    id ASC
LIMIT $3::integer;
