-- ExclusiveLocksPage: one page of the exclusive locks that name a job, by
-- key, after key $1 (keyset; '' for the first page), at most $2, with the
-- holding job's current state and attempt (NULL when the job is gone).
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
    AND lock.key > $1::text
ORDER BY
    lock.key
LIMIT $2::integer;
