-- LifecycleInstanceExists: whether any job belongs to process instance $1.
SELECT EXISTS (
    SELECT 1
    FROM /* TEMPLATE: schema */river_job
    WHERE /* TEMPLATE: schema */river_bpmn_ctx_has_instance(metadata, $1::text)
);
