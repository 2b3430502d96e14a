-- CascadeBatch: give up to $3 unfinished or discarded jobs of job definition
-- $1 with id > $2 the definition's current overriding priority. Returns the
-- ids scanned (to continue after the largest) and how many were rewritten.
--
-- The priority is read from the definition row, not passed in, so a batch
-- that runs after a later override (or a clear) never writes a stale value.
-- Rows are locked in id order; running jobs are rewritten but not pre-empted.
WITH batch AS (
    SELECT id
    FROM /* TEMPLATE: schema */river_job
    WHERE /* TEMPLATE: schema */river_bpmn_ctx_has_job_definition(metadata, $1::text)
        AND id > $2::bigint
        -- Discarded jobs too (Camunda rewrites every job of the definition
        -- "regardless of state"): one revived by SetJobRetries runs with the
        -- override, not the priority it had when it failed.
        AND state IN ('available', 'scheduled', 'retryable', 'pending', 'running', 'discarded')
    ORDER BY id
    LIMIT $3::integer
    FOR UPDATE
), rewritten AS (
    UPDATE /* TEMPLATE: schema */river_job
    SET metadata = /* TEMPLATE: schema */river_bpmn_ctx_set(river_job.metadata, 4, 'priority', to_jsonb(def.overriding_priority))
    FROM batch, /* TEMPLATE: schema */river_bpmn_job_definition def
    WHERE river_job.id = batch.id
        AND def.id = $1::text
        AND def.overriding_priority IS NOT NULL
        AND jsonb_typeof(river_job.metadata -> 'bpmn') IN ('object', 'array')
    RETURNING river_job.id
)
SELECT
    (SELECT count(*) FROM batch) AS scanned,
    coalesce((SELECT max(id) FROM batch), $2::bigint) AS last_id,
    (SELECT count(*) FROM rewritten) AS rewritten;
