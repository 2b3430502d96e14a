-- The key expression of scope exclusive.ProcessInstance for the river_job row
-- named river_job, as jsonb: its process instance id as a JSON string.
-- Exactly the expression of index river_bpmn_job_exclusive_instance_p
-- (migrations riverbpmn/016, 020). For a row that passes the key guard it equals
-- to_jsonb of the text key (sql/exclusive_key_process_instance.sql).
nullif(/* TEMPLATE: schema */river_bpmn_ctx_field(river_job.metadata, 0, 'process_instance_id'), '""'::jsonb)
