-- The key expression of scope exclusive.ProcessInstance for the river_job row
-- named river_job: its process instance. Exactly the expression of index
-- river_bpmn_job_exclusive_instance (migration riverbpmn/005), so that
-- conditions on it use the index. Must agree with exclusive.Key.
nullif(river_job.metadata -> 'bpmn' ->> 'process_instance_id', '')
