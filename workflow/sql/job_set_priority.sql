-- JobSetPriority: set job $1's priority to $2, whatever its state. A job
-- without a job context (or with a malformed one) gets {"bpmn": {"priority": $2}}
-- added to its metadata. Metadata that is not a JSON object (a raw row) has
-- no room for it: such a job is left alone, and updated is false. No row
-- when there is no such job.
WITH updated AS (
    UPDATE /* TEMPLATE: schema */river_job
    SET metadata = CASE
        WHEN jsonb_typeof(metadata -> 'bpmn') = 'object'
            THEN jsonb_set(metadata, '{bpmn,priority}', to_jsonb($2::bigint))
        ELSE metadata || jsonb_build_object('bpmn', jsonb_build_object('priority', $2::bigint))
    END
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
