-- JobGetAvailable: lock up to $4 available jobs of queue $1 and move them to
-- running. With no riverbpmn acquisition feature enabled this is, clause for
-- clause, River's own query (riverpgxv5 v0.51.1, river_job.sql), so a client on
-- riverbpmn's driver fetches exactly what stock River fetches.
--
-- $1 queue, $2 kinds (NULL = every kind), $3 now (NULL = database now()),
-- $4 max jobs to lock, $5 attempted_by cap, $6 client id.
WITH locked_jobs AS (
    SELECT
        id
    FROM
        /* TEMPLATE: schema */river_job
    WHERE
        state = 'available'
        AND queue = $1::text
        AND ($2::text[] IS NULL OR kind = ANY($2::text[]))
        AND scheduled_at <= coalesce($3::timestamptz, now())
    ORDER BY
        priority ASC,
        scheduled_at ASC,
        id ASC
    LIMIT $4::integer
    FOR UPDATE
    SKIP LOCKED
)
UPDATE
    /* TEMPLATE: schema */river_job
SET
    state = 'running',
    attempt = river_job.attempt + 1,
    attempted_at = coalesce($3::timestamptz, now()),
    attempted_by = array_append(
        CASE WHEN array_length(river_job.attempted_by, 1) >= $5::int
        -- +2 instead of +1 because Postgres array indexing starts at 1, not 0.
        THEN river_job.attempted_by[array_length(river_job.attempted_by, 1) + 2 - $5::int:]
        ELSE river_job.attempted_by
        END,
        $6::text
    )
FROM
    locked_jobs
WHERE
    river_job.id = locked_jobs.id
RETURNING
    /* COLUMNS: river_job */;
