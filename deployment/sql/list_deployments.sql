-- ListDeployments: one page of deployments, newest first, after id $1
-- (keyset; '' for the first page), at most $2.
SELECT d.id, d.name, d.tenant_id, d.source, d.created_at, d.findings,
    coalesce(array_agg(r.name ORDER BY r.name) FILTER (WHERE r.name IS NOT NULL), '{}'),
    coalesce(array_agg(r.checksum ORDER BY r.name) FILTER (WHERE r.name IS NOT NULL), '{}'),
    coalesce(array_agg(octet_length(r.content) ORDER BY r.name) FILTER (WHERE r.name IS NOT NULL), '{}')
FROM (
    SELECT * FROM /* TEMPLATE: schema */river_bpmn_deployment
    WHERE $1::text = '' OR id < $1::text
    ORDER BY id DESC
    LIMIT $2::integer
) d
LEFT JOIN /* TEMPLATE: schema */river_bpmn_deployment_resource r ON r.deployment_id = d.id
GROUP BY d.id, d.name, d.tenant_id, d.source, d.created_at, d.findings
ORDER BY d.id DESC;
