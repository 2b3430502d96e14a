-- InstanceStatus: state, stop marker and progress of every job of one process
-- instance, oldest first. Served by river_bpmn_job_process_instance
-- (migration riverbpmn/001).
SELECT id, kind, state::text, attempt, metadata ? 'cancel_attempted_at', metadata -> 'bpmn_progress',
    metadata -> 'bpmn' ->> 'process_instance_id'
FROM /* TEMPLATE: schema */river_job
WHERE metadata ? 'bpmn'
    AND metadata -> 'bpmn' ->> 'process_instance_id' = $1::text
ORDER BY id
LIMIT $2::integer;
