-- The key expression of scope exclusive.RootProcessInstance for the
-- river_job row named river_job, as jsonb. Exactly the expression of index
-- river_bpmn_job_exclusive_root_p (migrations riverbpmn/016, 020). For a row that
-- passes the key guard it equals to_jsonb of the text key
-- (sql/exclusive_key_root_process_instance.sql).
coalesce(
    nullif(nullif(/* TEMPLATE: schema */river_bpmn_ctx_field(river_job.metadata, 10, 'root_process_instance_id'), 'null'::jsonb), '""'::jsonb),
    nullif(/* TEMPLATE: schema */river_bpmn_ctx_field(river_job.metadata, 0, 'process_instance_id'), '""'::jsonb)
)
