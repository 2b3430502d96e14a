-- JobStatus: one job's state, stop marker and progress.
SELECT id, kind, state::text, attempt, metadata ? 'cancel_attempted_at', metadata -> 'bpmn_progress',
    CASE WHEN jsonb_typeof(metadata -> 'bpmn' -> 'process_instance_id') = 'string'
        THEN metadata -> 'bpmn' ->> 'process_instance_id' END
FROM /* TEMPLATE: schema */river_job
WHERE id = $1::bigint;
