-- ExclusiveRelease: give back the exclusive keys held by a batch of jobs, as
-- soon as their work functions returned, and for each key given back name a
-- queue where an exclusive job of that key waits (due now), so its producers
-- can be woken: the job's own queue when a job waits there, else any.
--
-- The row is kept and only marked free, an in-place (HOT) update. The
-- condition is on the row itself (key, job and attempt): a lock that already
-- went to another job or attempt is left alone.
--
-- The statement commits asynchronously (synchronous_commit off for its own
-- transaction only): losing a release in a database crash is harmless,
-- because a lock whose job no longer runs the attempt is stale and free
-- (workflow/exclusive_fetch.go, (r2)), and sparing a WAL flush keeps the work
-- path off the disk.
--
-- One element per job in each array: $1 key, $2 job id, $3 attempt, $4 queue,
-- $5 whether to look for waiting jobs at all (the engine skips the lookup
-- when no producer would need waking).
WITH async_commit AS MATERIALIZED (
    SELECT set_config('synchronous_commit', 'off', true)
),
request AS (
    SELECT
        *
    FROM
        unnest($1::text[], $2::bigint[], $3::smallint[], $4::text[], $5::boolean[])
            AS request (key, job_id, attempt, queue, look)
),
released AS (
    UPDATE
        /* TEMPLATE: schema */river_bpmn_exclusive_lock AS lock
    SET
        job_id = NULL,
        attempt = NULL,
        released_at = now()
    FROM
        request
    WHERE
        -- Repeated as an array so the rows are found by primary key,
        -- whatever the planner believes about the two sides.
        lock.key = ANY($1::text[])
        AND lock.key = request.key
        AND lock.job_id = request.job_id
        AND lock.attempt = request.attempt
    RETURNING
        lock.key
)
SELECT
    request.job_id,
    -- Two probes that each stop at the first waiting job: in the job's own
    -- queue, else in any queue.
    CASE WHEN request.look THEN coalesce(
        (
            SELECT waiting.queue
            FROM /* TEMPLATE: schema */river_job AS waiting
            WHERE /* WAITING_FOR: request.key */
                AND waiting.queue = request.queue
            LIMIT 1
        ),
        (
            SELECT waiting.queue
            FROM /* TEMPLATE: schema */river_job AS waiting
            WHERE /* WAITING_FOR: request.key */
            LIMIT 1
        )
    ) END AS waiting_queue
FROM
    released
    JOIN request ON request.key = released.key
    CROSS JOIN async_commit;
