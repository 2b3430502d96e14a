DROP TRIGGER IF EXISTS river_bpmn_job_event ON /* TEMPLATE: schema */river_job;
DROP FUNCTION /* TEMPLATE: schema */river_bpmn_job_event();
DROP TABLE /* TEMPLATE: schema */river_bpmn_event_subscription;
DROP TABLE /* TEMPLATE: schema */river_bpmn_event;
