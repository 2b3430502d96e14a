DROP INDEX IF EXISTS /* TEMPLATE: schema */river_bpmn_job_exclusive_root;
DROP INDEX IF EXISTS /* TEMPLATE: schema */river_bpmn_job_exclusive_instance;
DROP TABLE IF EXISTS /* TEMPLATE: schema */river_bpmn_exclusive_lock;
