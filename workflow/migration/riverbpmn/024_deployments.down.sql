-- riverbpmn migration line "riverbpmn", version 24, down: removes
-- deployments and the job definitions read from their models.
DELETE FROM /* TEMPLATE: schema */river_bpmn_job_definition WHERE deployment_id IS NOT NULL;

ALTER TABLE /* TEMPLATE: schema */river_bpmn_job_definition
    DROP COLUMN deployment_id,
    DROP COLUMN process_definition_id,
    DROP COLUMN version,
    DROP COLUMN alias,
    DROP COLUMN type,
    DROP COLUMN configuration,
    DROP COLUMN exclusive,
    DROP COLUMN priority,
    DROP COLUMN retry_cycle,
    DROP COLUMN timer_type,
    DROP COLUMN timer_value;

DROP TABLE /* TEMPLATE: schema */river_bpmn_process_key;
DROP TABLE /* TEMPLATE: schema */river_bpmn_process_definition;
DROP TABLE /* TEMPLATE: schema */river_bpmn_deployment_resource;
DROP TABLE /* TEMPLATE: schema */river_bpmn_deployment;
