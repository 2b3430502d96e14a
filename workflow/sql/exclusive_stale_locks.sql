-- ExclusiveStaleLocks: the tokens of every exclusive lock whose job no longer
-- runs the attempt that took it (see workflow/exclusive_fetch.go, invariant
-- point 3: staleness judged in one snapshot is permanent).
SELECT
    lock.token
FROM
    /* TEMPLATE: schema */river_bpmn_exclusive_lock AS lock
WHERE
    NOT EXISTS (
        SELECT 1
        FROM /* TEMPLATE: schema */river_job AS holder
        WHERE holder.id = lock.job_id
            AND holder.state = 'running'
            AND holder.attempt = lock.attempt
    );
