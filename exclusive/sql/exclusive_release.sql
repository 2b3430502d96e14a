-- ExclusiveRelease: give back the exclusive keys of a batch of jobs whose
-- work functions just returned. Each key is given back by its token, which names
-- the one acquisition the job made: a lock that was taken over since (a new
-- token) is left alone, so a release is safe however late it runs. The row is
-- kept and only marked free, an in-place (HOT) update.
--
-- It commits asynchronously (synchronous_commit off for its own transaction
-- only): losing a release in a database crash is harmless, because a lock
-- whose job no longer runs the attempt is stale and free
-- (exclusive/doc.go, (r2)), and sparing a WAL flush keeps the work
-- path off the disk. For each key given back, when asked ($5), it names a
-- queue where an exclusive job of that key waits (due now), so its producers
-- can be woken: the job's own queue when a job waits there, else any.
--
-- One element per job in each array: $1 key, $2 token, $3 queue, $4 job id,
-- $5 whether to look for waiting jobs.
WITH async_commit AS MATERIALIZED (
    SELECT set_config('synchronous_commit', 'off', true)
),
request AS (
    SELECT
        *
    FROM
        unnest($1::text[], $2::bigint[], $3::text[], $4::bigint[], $5::boolean[])
            AS request (key, token, queue, job_id, look)
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
        AND lock.token = request.token
    RETURNING
        lock.key,
        lock.token
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
    JOIN request ON request.key = released.key AND request.token = released.token
    CROSS JOIN async_commit;
