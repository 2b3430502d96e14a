-- Tree: the process instances whose jobs name $1 as their
-- root process instance (the root itself among them), each with its parent
-- (the caller its jobs name, NULL for the root and for jobs that name none),
-- its unfinished and failed jobs and its open incidents, by id, at most $2.
-- The jobs are found by containment over River's GIN index on metadata
-- (river_bpmn_ctx_has, migrations riverbpmn/016 and 026; the root is the
-- context's field 10, the instance field 0), the incidents through river_bpmn_incident_open (004).
WITH members AS (
    SELECT
        /* TEMPLATE: schema */river_bpmn_ctx_instance(metadata) AS instance,
        min(/* TEMPLATE: schema */river_bpmn_ctx_parent(metadata)) AS parent,
        count(*) FILTER (WHERE state NOT IN ('completed', 'cancelled', 'discarded')) AS unfinished,
        count(*) FILTER (WHERE state = 'discarded') AS failed
    FROM /* TEMPLATE: schema */river_job
    WHERE /* TEMPLATE: schema */river_bpmn_ctx_has(metadata, 10, 'root_process_instance_id', $1::text)
        -- The root's own jobs: a context leaves its root out when the
        -- instance is its own root.
        OR /* TEMPLATE: schema */river_bpmn_ctx_has(metadata, 0, 'process_instance_id', $1::text)
    GROUP BY 1
)
SELECT
    m.instance,
    coalesce(m.parent, ''),
    m.unfinished,
    m.failed,
    (SELECT count(*) FROM /* TEMPLATE: schema */river_bpmn_incident i
     WHERE i.resolved_at IS NULL AND i.process_instance_id = m.instance)
FROM members m
WHERE m.instance IS NOT NULL
ORDER BY m.instance
LIMIT $2::integer;
