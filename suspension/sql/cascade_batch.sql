-- SuspensionCascadeBatch: hold ($4 true) or release ($4 false) for reason
-- 'suspended' up to $3 unfinished jobs of target ($5 type, $1 id) with id >
-- $2, in id order, if the target is still in that state. Returns the ids
-- scanned (to continue after the largest), whether the target is still in
-- that state (a later call changed it: the cascade stops, the later call
-- wins), and how many jobs changed.
--
-- The target filter (the marker in WHERE) selects the target's jobs over an
-- index: the job definition, process instance or process definition by
-- containment
-- (river_bpmn_ctx_has_*, migration riverbpmn/016), which River's GIN index
-- on metadata answers (river_job_metadata_index); for a process
-- definition, which holds many jobs, the planner walks the primary key.
WITH batch AS (
    SELECT id
    FROM /* TEMPLATE: schema */river_job
    WHERE /* TARGET_FILTER */
        AND id > $2::bigint
        AND state IN ('available', 'scheduled', 'retryable', 'pending', 'running')
        AND ($4::boolean OR state IN ('pending', 'running'))
    ORDER BY id
    LIMIT $3::integer
), current AS (
    SELECT EXISTS (
        SELECT 1
        FROM /* TEMPLATE: schema */river_bpmn_suspension
        WHERE target_type = $5::text AND target_id = $1::text
    ) = $4::boolean AS still
), ids AS (
    SELECT CASE WHEN (SELECT still FROM current) THEN ARRAY(SELECT id FROM batch) ELSE '{}'::bigint[] END AS ids
)
SELECT
    (SELECT count(*) FROM batch) AS scanned,
    coalesce((SELECT max(id) FROM batch), $2::bigint) AS last_id,
    (SELECT still FROM current) AS still,
    CASE
        WHEN $4::boolean THEN (SELECT count(*) FROM /* TEMPLATE: schema */river_bpmn_hold_add((SELECT ids FROM ids), 'suspended'))
        ELSE (SELECT count(*) FROM /* TEMPLATE: schema */river_bpmn_hold_remove((SELECT ids FROM ids), 'suspended'))
    END AS changed;
