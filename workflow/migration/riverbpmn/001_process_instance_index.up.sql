-- riverbpmn migration line "riverbpmn", version 1.
--
-- Jobs of one process instance are found through their job context
-- (metadata -> 'bpmn'). The index is partial: plain River jobs, which have
-- no job context, cost nothing to insert.
CREATE INDEX IF NOT EXISTS river_bpmn_job_process_instance
    ON /* TEMPLATE: schema */river_job ((metadata -> 'bpmn' ->> 'process_instance_id'), id)
    WHERE metadata ? 'bpmn';
