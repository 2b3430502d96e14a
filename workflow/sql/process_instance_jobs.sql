-- ProcessInstanceJobs: every job of one process instance, oldest first.
-- Found through River's GIN index on metadata (river_job_metadata_index) by
-- containment, on either form of the job context (river_bpmn_ctx_has,
-- migration riverbpmn/016).
SELECT
    /* COLUMNS: river_job */
FROM
    /* TEMPLATE: schema */river_job
WHERE
    /* TEMPLATE: schema */river_bpmn_ctx_has_instance(metadata, $1::text)
ORDER BY
    id ASC
LIMIT $2::integer;
