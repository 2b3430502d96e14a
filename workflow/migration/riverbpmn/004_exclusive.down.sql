DROP INDEX IF EXISTS /* TEMPLATE: schema */river_bpmn_job_exclusive_waiting;
DROP TABLE IF EXISTS /* TEMPLATE: schema */river_bpmn_exclusive_lock;
