-- Jobs: one page of the jobs of process instance $1 in every state, by id
-- (oldest first), after job id $2 (keyset; 0: the first page), at most $3
-- (one more than the page shows, to know whether another follows). The
-- instance's jobs are
-- found by containment over River's GIN index on metadata
-- (river_job_metadata_index; river_bpmn_ctx_has, migration riverbpmn/016):
-- a bitmap of the
-- instance's jobs after the cursor, of which the page takes the first $3 by
-- id. A page costs in proportion to the jobs after the cursor, not to the
-- table.
SELECT
    /* COLUMNS: river_job */
FROM
    /* TEMPLATE: schema */river_job
WHERE
    /* TEMPLATE: schema */river_bpmn_ctx_has_instance(metadata, $1::text)
    AND id > $2::bigint
ORDER BY
    id ASC
LIMIT $3::integer;
