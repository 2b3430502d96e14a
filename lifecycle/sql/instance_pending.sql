-- LifecycleInstancePending: the pending jobs of process instance $1, over
-- River's GIN index on metadata by containment (river_bpmn_ctx_has_instance,
-- migration riverbpmn/016).
SELECT id
FROM /* TEMPLATE: schema */river_job
WHERE /* TEMPLATE: schema */river_bpmn_ctx_has_instance(metadata, $1::text)
    AND state = 'pending'
ORDER BY id;
