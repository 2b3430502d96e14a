-- ExclusiveLocks: every exclusive lock that names a job (at most $1), oldest
-- first, with the holding job's current state and attempt (NULL when the job
-- is gone). Free rows kept for reuse are left out.
SELECT
    lock.key,
    lock.job_id,
    lock.attempt,
    lock.client_id,
    lock.queue,
    lock.locked_at,
    holder.state::text,
    holder.attempt,
    -- For the lock of a run (Config.ExclusiveBatch): its jobs, and whether
    -- any of them still runs its attempt (NULL for a lock of one job).
    lock.run_job_ids,
    CASE WHEN lock.run_job_ids IS NOT NULL THEN /* LOCK_IS_LIVE: lock */ END
FROM
    /* TEMPLATE: schema */river_bpmn_exclusive_lock AS lock
    LEFT JOIN /* TEMPLATE: schema */river_job AS holder
        ON holder.id = lock.job_id
WHERE
    lock.job_id IS NOT NULL
ORDER BY
    lock.locked_at,
    lock.key
LIMIT $1::integer;
