-- GetDeployment: deployment $1, with its resources (without content).
SELECT d.id, d.name, d.tenant_id, d.source, d.created_at, d.findings,
    coalesce(array_agg(r.name ORDER BY r.name) FILTER (WHERE r.name IS NOT NULL), '{}'),
    coalesce(array_agg(r.checksum ORDER BY r.name) FILTER (WHERE r.name IS NOT NULL), '{}'),
    coalesce(array_agg(octet_length(r.content) ORDER BY r.name) FILTER (WHERE r.name IS NOT NULL), '{}')
FROM /* TEMPLATE: schema */river_bpmn_deployment d
LEFT JOIN /* TEMPLATE: schema */river_bpmn_deployment_resource r ON r.deployment_id = d.id
WHERE d.id = $1::text
GROUP BY d.id;
