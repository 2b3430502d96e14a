-- ExclusiveWait: why job $1 waits, as far as exclusivity goes: its state and
-- queue, its exclusive key (NULL if it has none), the lock on that key if it
-- names a job (with the holding job's current state and attempt), and how
-- many waiting jobs of the same key in its queue come before it in River's
-- order (and so run before it).
SELECT
    river_job.state::text,
    river_job.queue,
    /* EXCLUSIVE_KEY */ AS exclusive_key,
    lock.job_id,
    lock.attempt,
    lock.client_id,
    lock.queue,
    lock.locked_at,
    holder.state::text,
    holder.attempt,
    lock.run_job_ids,
    CASE WHEN lock.run_job_ids IS NOT NULL THEN /* LOCK_IS_LIVE: lock */ END,
    (
        SELECT
            count(*)
        FROM
            /* TEMPLATE: schema */river_job AS ahead
        WHERE
            /* KEY_EXPRESSION: ahead */ = /* EXCLUSIVE_KEY */
            AND /* KEY_GUARD: ahead */
            AND ahead.queue = river_job.queue
            AND ahead.state = 'available'
            AND /* TEMPLATE: schema */river_bpmn_ctx_exclusive(ahead.metadata)
            AND (ahead.priority, ahead.scheduled_at, ahead.id)
                < (river_job.priority, river_job.scheduled_at, river_job.id)
    ) AS key_jobs_ahead
FROM
    /* TEMPLATE: schema */river_job
    LEFT JOIN /* TEMPLATE: schema */river_bpmn_exclusive_lock AS lock
        ON lock.key = /* EXCLUSIVE_KEY */
        AND lock.job_id IS NOT NULL
    LEFT JOIN /* TEMPLATE: schema */river_job AS holder
        ON holder.id = lock.job_id
WHERE
    river_job.id = $1::bigint;
