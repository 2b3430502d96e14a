-- InsertProcessDefinition: one process definition of a new deployment.
INSERT INTO /* TEMPLATE: schema */river_bpmn_process_definition
    (id, key, version, name, deployment_id, resource_name, tenant_id, priority, call_activities)
VALUES ($1::text, $2::text, $3::integer, $4::text, $5::text, $6::text, $7::text, $8::text, $9::jsonb);
