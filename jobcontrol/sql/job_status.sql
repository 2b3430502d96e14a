-- JobStatus: one job's state, stop marker and progress.
SELECT id, kind, state::text, attempt, metadata ? 'cancel_attempted_at', metadata -> 'bpmn_progress',
    /* TEMPLATE: schema */river_bpmn_ctx_instance(metadata)
FROM /* TEMPLATE: schema */river_job
WHERE id = $1::bigint;
