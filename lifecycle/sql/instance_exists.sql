-- LifecycleInstanceExists: whether any job belongs to process instance $1.
SELECT EXISTS (
    SELECT 1
    FROM /* TEMPLATE: schema */river_job
    WHERE metadata ? 'bpmn'
        AND metadata -> 'bpmn' ->> 'process_instance_id' = $1::text
);
