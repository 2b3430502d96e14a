-- LifecycleInstancePending: the pending jobs of process instance $1, over
-- river_bpmn_job_process_instance (migration riverbpmn/001).
SELECT id
FROM /* TEMPLATE: schema */river_job
WHERE metadata ? 'bpmn'
    AND metadata -> 'bpmn' ->> 'process_instance_id' = $1::text
    AND state = 'pending'
ORDER BY id;
