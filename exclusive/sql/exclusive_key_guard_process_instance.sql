-- Whether the key fields of the river_job row named river_job can make a key
-- under scope exclusive.ProcessInstance: the process instance id is a JSON
-- string. Must agree with workflow.ExclusiveKeyOf.
/* TEMPLATE: schema */river_bpmn_ctx_instance(river_job.metadata) IS NOT NULL
