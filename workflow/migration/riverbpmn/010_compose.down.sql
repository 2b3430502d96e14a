DROP INDEX IF EXISTS /* TEMPLATE: schema */river_bpmn_job_exclusive_root_p;
DROP INDEX IF EXISTS /* TEMPLATE: schema */river_bpmn_job_exclusive_instance_p;
