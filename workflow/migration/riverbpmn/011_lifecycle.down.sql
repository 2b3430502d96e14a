-- Jobs held for 'pending' or 'prerequisites' lose those reasons (and are
-- released when nothing else holds them): nothing would release them.
SELECT /* TEMPLATE: schema */river_bpmn_hold_remove(
    ARRAY(SELECT DISTINCT job_id FROM /* TEMPLATE: schema */river_bpmn_hold WHERE reason = 'pending'), 'pending');
SELECT /* TEMPLATE: schema */river_bpmn_hold_remove(
    ARRAY(SELECT DISTINCT job_id FROM /* TEMPLATE: schema */river_bpmn_hold WHERE reason = 'prerequisites'), 'prerequisites');
DROP FUNCTION IF EXISTS /* TEMPLATE: schema */river_bpmn_queue(bigint[]);
DROP TRIGGER IF EXISTS river_bpmn_job_delete_lifecycle ON /* TEMPLATE: schema */river_job;
DROP FUNCTION IF EXISTS /* TEMPLATE: schema */river_bpmn_job_delete_lifecycle();
DROP TRIGGER IF EXISTS river_bpmn_job_prerequisite_state ON /* TEMPLATE: schema */river_job;
DROP FUNCTION IF EXISTS /* TEMPLATE: schema */river_bpmn_job_prerequisite_state();
DROP FUNCTION IF EXISTS /* TEMPLATE: schema */river_bpmn_dependency_link(integer);
DROP TRIGGER IF EXISTS river_bpmn_job_record_lifecycle ON /* TEMPLATE: schema */river_job;
DROP FUNCTION IF EXISTS /* TEMPLATE: schema */river_bpmn_job_record_lifecycle();
DROP TRIGGER IF EXISTS river_bpmn_job_lifecycle_insert ON /* TEMPLATE: schema */river_job;
DROP FUNCTION IF EXISTS /* TEMPLATE: schema */river_bpmn_job_lifecycle_insert();
DROP TABLE IF EXISTS /* TEMPLATE: schema */river_bpmn_expiry;
DROP TABLE IF EXISTS /* TEMPLATE: schema */river_bpmn_dependent;
DROP TABLE IF EXISTS /* TEMPLATE: schema */river_bpmn_dependency;
