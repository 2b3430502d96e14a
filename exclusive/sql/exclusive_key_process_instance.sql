-- The key expression of scope exclusive.ProcessInstance for the river_job row
-- named river_job: its process instance. Exactly the expression of index
-- river_bpmn_job_exclusive_instance (migration riverbpmn/016), so that
-- conditions on it use the index. Must agree with exclusive.Key.
nullif(/* TEMPLATE: schema */river_bpmn_ctx_instance(river_job.metadata), '')
