-- InstanceStatus: state, stop marker and progress of every job of one process
-- instance, oldest first. Found through River's GIN index on metadata
-- (river_job_metadata_index) by containment (river_bpmn_ctx_has_instance,
-- migration riverbpmn/016).
SELECT id, kind, state::text, attempt, metadata ? 'cancel_attempted_at', metadata -> 'bpmn_progress',
    /* TEMPLATE: schema */river_bpmn_ctx_instance(metadata)
FROM /* TEMPLATE: schema */river_job
WHERE /* TEMPLATE: schema */river_bpmn_ctx_has_instance(metadata, $1::text)
ORDER BY id
LIMIT $2::integer;
