-- ExclusiveWait with the running-row mechanism (exclusive.RunningRow), in
-- the columns of exclusive_wait.sql: the "lock" on the job's key is the
-- oldest running job of the key (its client the last of attempted_by, since
-- its attempted_at).
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
    NULL::boolean,
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
    LEFT JOIN LATERAL (
        SELECT
            running.id AS job_id,
            running.attempt,
            coalesce(running.attempted_by[array_length(running.attempted_by, 1)], '') AS client_id,
            running.queue,
            coalesce(running.attempted_at, running.created_at) AS locked_at,
            NULL::bigint[] AS run_job_ids
        FROM /* TEMPLATE: schema */river_job AS running
        WHERE
            /* KEY_EXPRESSION: running */ = /* EXCLUSIVE_KEY */
            AND (running.state = 'running') IS TRUE
            AND /* TEMPLATE: schema */river_bpmn_ctx_exclusive(running.metadata)
            AND /* KEY_GUARD: running */
        ORDER BY running.attempted_at
        LIMIT 1
    ) AS lock ON true
    LEFT JOIN /* TEMPLATE: schema */river_job AS holder
        ON holder.id = lock.job_id
WHERE
    river_job.id = $1::bigint;
