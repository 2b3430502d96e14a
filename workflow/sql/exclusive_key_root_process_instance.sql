-- The key expression of scope exclusive.RootProcessInstance for the river_job
-- row named river_job: the root of its process instance's call hierarchy (the
-- instance itself when no root is recorded). Exactly the expression of index
-- river_bpmn_job_exclusive_root (migration riverbpmn/005), so that conditions
-- on it use the index. Must agree with exclusive.Key.
coalesce(
    nullif(river_job.metadata -> 'bpmn' ->> 'root_process_instance_id', ''),
    nullif(river_job.metadata -> 'bpmn' ->> 'process_instance_id', '')
)
