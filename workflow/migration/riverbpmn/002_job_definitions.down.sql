DROP TRIGGER IF EXISTS river_bpmn_job_apply_overriding_priority ON /* TEMPLATE: schema */river_job;
DROP FUNCTION IF EXISTS /* TEMPLATE: schema */river_bpmn_job_apply_overriding_priority();
DROP INDEX IF EXISTS /* TEMPLATE: schema */river_bpmn_job_job_definition;
DROP TABLE IF EXISTS /* TEMPLATE: schema */river_bpmn_job_definition;
