-- ExclusiveLocks with the running-row mechanism (exclusive.RunningRow): the
-- held keys are the running exclusive jobs' (at most $1), oldest first, in
-- the columns of exclusive_locks.sql: the job, its attempt, the client that
-- runs it (the last of attempted_by), its queue, since when (attempted_at).
-- A key whose job's work has ended may show two jobs until River writes the
-- ended one's outcome.
SELECT
    /* EXCLUSIVE_KEY */ AS key,
    river_job.id,
    river_job.attempt,
    coalesce(river_job.attempted_by[array_length(river_job.attempted_by, 1)], ''),
    river_job.queue,
    coalesce(river_job.attempted_at, river_job.created_at),
    river_job.state::text,
    river_job.attempt,
    NULL::bigint[],
    NULL::boolean
FROM
    /* TEMPLATE: schema */river_job
WHERE
    (river_job.state = 'running') IS TRUE
    AND /* TEMPLATE: schema */river_bpmn_ctx_exclusive(river_job.metadata)
    AND /* EXCLUSIVE_KEY */ IS NOT NULL
ORDER BY
    6,
    1
LIMIT $1::integer;
