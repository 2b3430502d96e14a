-- SetPriority: set job $1's priority to $2, whatever its state, in the
-- form its job context is stored in (river_bpmn_ctx_set, migration
-- riverbpmn/016). A job without a job context (or with one that is neither
-- an array nor an object) gets one holding only the priority. Metadata that
-- is not a JSON object (a raw row) has no room for it: such a job is left
-- alone, and updated is false. No row when there is no such job.
WITH updated AS (
    UPDATE /* TEMPLATE: schema */river_job
    SET metadata = /* TEMPLATE: schema */river_bpmn_ctx_set(metadata, 4, 'priority', to_jsonb($2::bigint))
    WHERE id = $1::bigint
        AND jsonb_typeof(metadata) = 'object'
    RETURNING id
)
SELECT
    EXISTS (SELECT 1 FROM updated) AS updated,
    jsonb_typeof(river_job.metadata) AS metadata_type
FROM
    /* TEMPLATE: schema */river_job
WHERE
    river_job.id = $1::bigint;
