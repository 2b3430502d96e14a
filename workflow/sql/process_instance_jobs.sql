-- ProcessInstanceJobs: every job of one process instance, oldest first.
-- Served by river_bpmn_job_process_instance (migration riverbpmn/001).
SELECT
    /* COLUMNS: river_job */
FROM
    /* TEMPLATE: schema */river_job
WHERE
    metadata ? 'bpmn'
    AND metadata -> 'bpmn' ->> 'process_instance_id' = $1::text
ORDER BY
    id ASC
LIMIT $2::integer;
