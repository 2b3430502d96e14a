-- ResolveJobDefinition: the deployed job definition $1, named by its id
-- or by its alias (the newest version's), with its process definition.
SELECT d.id, d.process_definition_id, d.activity_id, d.alias, d.type, d.configuration, d.exclusive,
    d.priority, d.retry_cycle, d.timer_type, d.timer_value,
    p.key, p.version, p.name, p.deployment_id, p.resource_name, p.tenant_id, p.priority
FROM /* TEMPLATE: schema */river_bpmn_job_definition d
JOIN /* TEMPLATE: schema */river_bpmn_process_definition p ON p.id = d.process_definition_id
WHERE d.deployment_id IS NOT NULL AND (d.id = $1::text OR d.alias = $1::text)
ORDER BY d.version DESC
LIMIT 1;
