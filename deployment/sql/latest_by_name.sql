-- LatestByName: the newest deployment of name $1 and tenant $2, with its
-- resources' names and checksums, for the duplicate filter.
SELECT d.id, coalesce(array_agg(r.name ORDER BY r.name) FILTER (WHERE r.name IS NOT NULL), '{}'),
    coalesce(array_agg(r.checksum ORDER BY r.name) FILTER (WHERE r.name IS NOT NULL), '{}')
FROM (
    SELECT id FROM /* TEMPLATE: schema */river_bpmn_deployment
    WHERE name = $1::text AND tenant_id = $2::text
    ORDER BY id DESC
    LIMIT 1
) d
LEFT JOIN /* TEMPLATE: schema */river_bpmn_deployment_resource r ON r.deployment_id = d.id
GROUP BY d.id;
