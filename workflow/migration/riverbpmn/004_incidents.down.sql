DROP TRIGGER IF EXISTS river_bpmn_job_renew_unbounded ON /* TEMPLATE: schema */river_job;
DROP FUNCTION IF EXISTS /* TEMPLATE: schema */river_bpmn_job_renew_unbounded();
DROP TRIGGER IF EXISTS river_bpmn_job_incident_delete ON /* TEMPLATE: schema */river_job;
DROP TRIGGER IF EXISTS river_bpmn_job_incident ON /* TEMPLATE: schema */river_job;
DROP FUNCTION IF EXISTS /* TEMPLATE: schema */river_bpmn_job_incident();
DROP TABLE IF EXISTS /* TEMPLATE: schema */river_bpmn_incident;
