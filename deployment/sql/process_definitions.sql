-- ProcessDefinitions: the process definitions of deployments $1.
SELECT id, key, version, name, deployment_id, resource_name, tenant_id, priority, call_activities
FROM /* TEMPLATE: schema */river_bpmn_process_definition
WHERE deployment_id = ANY($1::text[])
ORDER BY deployment_id, key;
