-- ExclusiveRelease: give back the exclusive keys held by a batch of jobs, as
-- soon as their work functions returned, and for each key given back name a
-- queue where an exclusive job of that key waits (due now), so its producers
-- can be woken: the job's own queue when a job waits there, else any.
--
-- The delete's condition is on the lock row itself (job and attempt): a lock
-- that already went to another job or attempt is left alone.
--
-- The statement commits asynchronously (synchronous_commit off for its own
-- transaction only): losing a release in a database crash is harmless,
-- because a lock whose job no longer runs the attempt is stale and free
-- (workflow/exclusive_fetch.go, (r2)), and sparing a WAL flush keeps the work
-- path off the disk.
--
-- One element per job in each array: $1 job id, $2 attempt, $3 the job's
-- root process instance (its instance when it has no root; NULL when
-- unknown), $4 its process instance with the instance scope (NULL with the
-- root scope), $5 its queue. Waiting jobs are found through
-- river_bpmn_job_exclusive_waiting (migration riverbpmn/004).
WITH async_commit AS MATERIALIZED (
    SELECT set_config('synchronous_commit', 'off', true)
),
request AS (
    SELECT
        *
    FROM
        unnest($1::bigint[], $2::smallint[], $3::text[], $4::text[], $5::text[])
            AS request (job_id, attempt, root, instance, queue)
),
released AS (
    DELETE FROM
        /* TEMPLATE: schema */river_bpmn_exclusive_lock AS lock
    USING
        request
    WHERE
        lock.job_id = request.job_id
        AND lock.attempt = request.attempt
    RETURNING
        lock.job_id
)
SELECT
    request.job_id,
    (
        SELECT
            waiting.queue
        FROM
            /* TEMPLATE: schema */river_job AS waiting
        WHERE
            coalesce(nullif(waiting.metadata -> 'bpmn' ->> 'root_process_instance_id', ''), nullif(waiting.metadata -> 'bpmn' ->> 'process_instance_id', '')) = request.root
            AND (request.instance IS NULL OR nullif(waiting.metadata -> 'bpmn' ->> 'process_instance_id', '') = request.instance)
            AND waiting.state = 'available'
            AND waiting.metadata -> 'bpmn' -> 'exclusive' = 'true'::jsonb
            AND waiting.scheduled_at <= now()
        ORDER BY
            waiting.queue = request.queue DESC
        LIMIT 1
    ) AS waiting_queue
FROM
    released
    JOIN request ON request.job_id = released.job_id
    CROSS JOIN async_commit;
