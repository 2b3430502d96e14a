-- ExclusiveWait: why job $1 waits, as far as exclusivity goes: its state, its
-- exclusive key (NULL if it has none), the lock on that key with the holding
-- job's current state and attempt, and how many available jobs of the same
-- key come before it in River's order (and so run before it).
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
    (
        SELECT
            count(*)
        FROM
            /* TEMPLATE: schema */river_job AS ahead
        WHERE
            coalesce(nullif(ahead.metadata -> 'bpmn' ->> 'root_process_instance_id', ''), nullif(ahead.metadata -> 'bpmn' ->> 'process_instance_id', ''))
                = coalesce(nullif(river_job.metadata -> 'bpmn' ->> 'root_process_instance_id', ''), nullif(river_job.metadata -> 'bpmn' ->> 'process_instance_id', ''))
            AND ahead.state = 'available'
            AND ahead.metadata -> 'bpmn' -> 'exclusive' = 'true'::jsonb
            AND ahead.id <> river_job.id
            AND (ahead.priority, ahead.scheduled_at, ahead.id) < (river_job.priority, river_job.scheduled_at, river_job.id)
            AND /* EXCLUSIVE_KEY: ahead */ = /* EXCLUSIVE_KEY */
    ) AS key_jobs_ahead
FROM
    /* TEMPLATE: schema */river_job
    LEFT JOIN /* TEMPLATE: schema */river_bpmn_exclusive_lock AS lock
        ON lock.key = /* EXCLUSIVE_KEY */
    LEFT JOIN /* TEMPLATE: schema */river_job AS holder
        ON holder.id = lock.job_id
WHERE
    river_job.id = $1::bigint;
