-- JobSetPriority: set job $1's priority to $2, whatever its state. A job
-- without a job context (or with a malformed one) gets {"bpmn": {"priority": $2}}.
UPDATE /* TEMPLATE: schema */river_job
SET metadata = CASE
    WHEN jsonb_typeof(metadata -> 'bpmn') = 'object'
        THEN jsonb_set(metadata, '{bpmn,priority}', to_jsonb($2::bigint))
    ELSE metadata || jsonb_build_object('bpmn', jsonb_build_object('priority', $2::bigint))
END
WHERE id = $1::bigint
RETURNING id;
