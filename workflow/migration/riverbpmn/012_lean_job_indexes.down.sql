CREATE INDEX IF NOT EXISTS river_bpmn_job_process_instance
    ON /* TEMPLATE: schema */river_job ((metadata -> 'bpmn' ->> 'process_instance_id'), id)
    WHERE metadata ? 'bpmn';
CREATE INDEX IF NOT EXISTS river_bpmn_job_job_definition
    ON /* TEMPLATE: schema */river_job ((metadata -> 'bpmn' ->> 'job_definition_id'), id)
    WHERE metadata ? 'bpmn';
