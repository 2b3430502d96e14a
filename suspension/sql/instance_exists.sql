-- SuspensionInstanceExists: whether any job (in any state) belongs to
-- process instance $1, over river_bpmn_job_process_instance, or the instance
-- is suspended.
SELECT EXISTS (
    SELECT 1
    FROM /* TEMPLATE: schema */river_job
    WHERE metadata ? 'bpmn'
        AND metadata -> 'bpmn' ->> 'process_instance_id' = $1::text
) OR EXISTS (
    SELECT 1
    FROM /* TEMPLATE: schema */river_bpmn_suspension
    WHERE target_type = 'process_instance' AND target_id = $1::text
);
