-- LifecycleExpireDue: discard up to $1 jobs whose expiration date has
-- passed while they still wait (pending, scheduled, available, retryable),
-- with an error naming the date, and forget the expiry of jobs that are
-- finished or gone. A running job keeps its row (checked again later; it
-- is never interrupted). Returns the discarded jobs.
WITH due AS (
    SELECT e.job_id, e.expires_at
    FROM /* TEMPLATE: schema */river_bpmn_expiry AS e
    WHERE e.expires_at <= now()
    ORDER BY e.expires_at, e.job_id
    LIMIT $1::int
), locked AS (
    SELECT j.id, j.state, j.attempt, due.expires_at
    FROM /* TEMPLATE: schema */river_job AS j
    JOIN due ON due.job_id = j.id
    ORDER BY j.id
    FOR UPDATE OF j SKIP LOCKED
), discarded AS (
    UPDATE /* TEMPLATE: schema */river_job AS j
    SET
        state = 'discarded',
        finalized_at = now(),
        errors = array_append(j.errors, jsonb_build_object(
            'at', now(),
            'attempt', j.attempt,
            'error', 'riverbpmn: job expired at ' || to_char(locked.expires_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') || ' before it started',
            'trace', ''
        ))
    FROM locked
    WHERE j.id = locked.id
        AND locked.state IN ('pending', 'scheduled', 'available', 'retryable')
    RETURNING j.id
), forgotten AS (
    DELETE FROM /* TEMPLATE: schema */river_bpmn_expiry AS e
    USING due
    WHERE e.job_id = due.job_id
        AND (e.job_id IN (SELECT id FROM discarded)
            OR NOT EXISTS (SELECT 1 FROM /* TEMPLATE: schema */river_job AS j
                           WHERE j.id = due.job_id
                               AND j.state NOT IN ('completed', 'cancelled', 'discarded')))
)
SELECT id FROM discarded ORDER BY id;
