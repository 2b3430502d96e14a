-- SuspensionInstanceExists: whether any job (in any state) belongs to
-- process instance $1 (by containment, over River's GIN index on metadata), or the instance
-- is suspended.
SELECT EXISTS (
    SELECT 1
    FROM /* TEMPLATE: schema */river_job
    WHERE /* TEMPLATE: schema */river_bpmn_ctx_has_instance(metadata, $1::text)
) OR EXISTS (
    SELECT 1
    FROM /* TEMPLATE: schema */river_bpmn_suspension
    WHERE target_type = 'process_instance' AND target_id = $1::text
);
