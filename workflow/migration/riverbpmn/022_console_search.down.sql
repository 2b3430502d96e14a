DROP INDEX IF EXISTS /* TEMPLATE: schema */river_bpmn_job_state_sparse;
