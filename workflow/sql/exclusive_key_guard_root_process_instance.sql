-- Whether the key fields of the river_job row named river_job can make a key
-- under scope exclusive.RootProcessInstance: the process instance id is a
-- JSON string, and the root process instance id is a JSON string, null or
-- absent. Must agree with workflow.ExclusiveKeyOf.
jsonb_typeof(river_job.metadata -> 'bpmn' -> 'process_instance_id') = 'string'
AND coalesce(jsonb_typeof(river_job.metadata -> 'bpmn' -> 'root_process_instance_id'), 'null') IN ('string', 'null')
