-- Whether the key fields of the river_job row named river_job can make a key
-- under scope exclusive.RootProcessInstance: the process instance id is a
-- JSON string, and the root process instance id is a JSON string, null or
-- absent. Must agree with workflow.ExclusiveKeyOf.
/* TEMPLATE: schema */river_bpmn_ctx_instance(river_job.metadata) IS NOT NULL
AND coalesce(jsonb_typeof(/* TEMPLATE: schema */river_bpmn_ctx_field(river_job.metadata, 10, 'root_process_instance_id')), 'null') IN ('string', 'null')
