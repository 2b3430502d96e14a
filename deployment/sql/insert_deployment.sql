-- InsertDeployment: a new deployment ($1 id, $2 name, $3 tenant, $4 source,
-- $5 findings) and its resources ($6 names, $7 checksums, $8 contents).
WITH d AS (
    INSERT INTO /* TEMPLATE: schema */river_bpmn_deployment (id, name, tenant_id, source, findings)
    VALUES ($1::text, $2::text, $3::text, $4::text, $5::jsonb)
    RETURNING id, created_at
), r AS (
    INSERT INTO /* TEMPLATE: schema */river_bpmn_deployment_resource (deployment_id, name, checksum, content)
    SELECT $1::text, n, c, b FROM unnest($6::text[], $7::text[], $8::bytea[]) AS t(n, c, b)
)
SELECT created_at FROM d;
