-- ExclusiveLocksPage with the running-row mechanism (exclusive.RunningRow):
-- one page of the held keys, the running exclusive jobs', by key then job,
-- after key $1 (keyset; '' for the first page), at most $2, in the columns
-- of exclusive_locks_running.sql.
SELECT
    held.*
FROM (
    SELECT
        /* EXCLUSIVE_KEY */ AS key,
        river_job.id,
        river_job.attempt,
        coalesce(river_job.attempted_by[array_length(river_job.attempted_by, 1)], ''),
        river_job.queue,
        coalesce(river_job.attempted_at, river_job.created_at),
        river_job.state::text,
        river_job.attempt AS holder_attempt,
        NULL::bigint[],
        NULL::boolean
    FROM
        /* TEMPLATE: schema */river_job
    WHERE
        (river_job.state = 'running') IS TRUE
        AND /* TEMPLATE: schema */river_bpmn_ctx_exclusive(river_job.metadata)
) AS held
WHERE
    held.key > $1::text
ORDER BY
    held.key,
    held.id
LIMIT $2::integer;
