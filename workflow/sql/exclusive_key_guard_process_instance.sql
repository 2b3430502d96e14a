-- Whether the key fields of the river_job row named river_job can make a key
-- under scope exclusive.ProcessInstance: the process instance id is a JSON
-- string. Must agree with workflow.ExclusiveKeyOf.
jsonb_typeof(river_job.metadata -> 'bpmn' -> 'process_instance_id') = 'string'
