-- JobGetAvailableExclusive: River's fetch (job_get_available.sql) with strict
-- exclusivity. It locks up to $4 available jobs of queue $1 and moves them to
-- running, taking only the first waiting job (in River's order) of an
-- exclusive key, and only when no running attempt holds the key; it records
-- every key it takes in river_bpmn_exclusive_lock in the same statement. Jobs
-- without a key (plain River jobs, non-exclusive jobs, jobs of no instance)
-- are fetched as River fetches them. The invariant, and why this is
-- race-free, are in workflow/exclusive_fetch.go.
--
-- The scan is River's: available jobs of the queue in River's order over
-- River's fetch index (river_job_prioritized_fetching_index), streamed, and
-- stopped as soon as $4 jobs qualify. Each job with a key costs at most two
-- index probes: an earlier waiting job of the key (river_bpmn_job_exclusive_*)
-- and the key's lock (primary key). At most $7 available jobs are looked at, so a
-- queue whose head is a long run of jobs of held keys costs a bounded scan.
--
-- $1 queue, $2 kinds (NULL = every kind), $3 now (NULL = database now()),
-- $4 max jobs to lock, $5 attempted_by cap, $6 client id, $7 lookahead.
WITH candidate AS (
    SELECT
        head.id
    FROM (
        SELECT
            river_job.id,
            river_job.priority,
            river_job.scheduled_at,
            /* EXCLUSIVE_KEY */ AS exclusive_key
        FROM
            /* TEMPLATE: schema */river_job
        WHERE
            river_job.state = 'available'
            AND river_job.queue = $1::text
            AND ($2::text[] IS NULL OR river_job.kind = ANY($2::text[]))
            AND river_job.scheduled_at <= coalesce($3::timestamptz, now())
        ORDER BY
            river_job.priority ASC,
            river_job.scheduled_at ASC,
            river_job.id ASC
        LIMIT $7::integer
    ) AS head
    WHERE
        head.exclusive_key IS NULL
        OR (
            -- No job of the key comes before this one, so a fetch takes at
            -- most one job per key: the first. Checked first: it alone turns
            -- away the later jobs of a key, however many follow it...
            NOT EXISTS (
                SELECT 1
                FROM /* TEMPLATE: schema */river_job AS earlier
                WHERE /* KEY_EXPRESSION: earlier */ = head.exclusive_key
                    AND earlier.queue = $1::text
                    AND earlier.state = 'available'
                    AND earlier.metadata -> 'bpmn' -> 'exclusive' = 'true'::jsonb
                    AND ($2::text[] IS NULL OR earlier.kind = ANY($2::text[]))
                    AND earlier.scheduled_at <= coalesce($3::timestamptz, now())
                    AND (earlier.priority, earlier.scheduled_at, earlier.id)
                        < (head.priority, head.scheduled_at, head.id)
            )
            -- ...and no running attempt holds the key (a lock row may exist,
            -- free or stale), judged in this statement's snapshot. A scalar
            -- subquery, so it is one primary-key probe per job rather than a
            -- hash of the whole lock table, which keeps recently freed rows.
            AND NOT coalesce((
                SELECT /* LOCK_IS_LIVE: lock */
                FROM /* TEMPLATE: schema */river_bpmn_exclusive_lock AS lock
                WHERE lock.key = head.exclusive_key
            ), false)
        )
    LIMIT $4::integer
),
-- Lock the candidates as River does. The ids go in as an array so the rows
-- are always found by primary key, whatever the planner believes about the
-- table. The key is read again from the locked row version, so a concurrent
-- change to it cannot slip through.
locked_jobs AS (
    SELECT
        river_job.id,
        river_job.attempt,
        /* EXCLUSIVE_KEY */ AS exclusive_key
    FROM
        /* TEMPLATE: schema */river_job
    WHERE
        river_job.id = ANY(ARRAY(SELECT id FROM candidate))
        AND river_job.state = 'available'
        AND river_job.queue = $1::text
        AND river_job.scheduled_at <= coalesce($3::timestamptz, now())
    FOR UPDATE
    SKIP LOCKED
),
-- Take the keys, in key order (so two fetches never wait on each other in a
-- cycle). A key without a row is inserted. A key with a row is taken only if
-- the row's latest committed version is free (job_id NULL), or still carries
-- the token that this statement's snapshot showed stale. Any other conflict
-- leaves the key alone and its job available.
acquired AS (
    INSERT INTO /* TEMPLATE: schema */river_bpmn_exclusive_lock AS lock (
        key, job_id, attempt, replaces, client_id, queue, locked_at
    )
    SELECT DISTINCT ON (locked_jobs.exclusive_key)
        locked_jobs.exclusive_key,
        locked_jobs.id,
        locked_jobs.attempt + 1,
        (
            SELECT
                stale.token
            FROM
                /* TEMPLATE: schema */river_bpmn_exclusive_lock AS stale
            WHERE
                stale.key = locked_jobs.exclusive_key
                AND stale.job_id IS NOT NULL
                AND NOT /* LOCK_IS_LIVE: stale */
        ),
        $6::text,
        $1::text,
        coalesce($3::timestamptz, now())
    FROM
        locked_jobs
    WHERE
        locked_jobs.exclusive_key IS NOT NULL
    ORDER BY
        locked_jobs.exclusive_key,
        locked_jobs.id
    ON CONFLICT (key) DO UPDATE SET
        job_id = excluded.job_id,
        attempt = excluded.attempt,
        token = excluded.token,
        replaces = excluded.replaces,
        client_id = excluded.client_id,
        queue = excluded.queue,
        locked_at = excluded.locked_at,
        released_at = NULL
    WHERE
        lock.job_id IS NULL
        OR lock.token = excluded.replaces
    RETURNING
        lock.key,
        lock.job_id,
        lock.token
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
WHERE
    river_job.id = ANY(ARRAY(
        SELECT id FROM locked_jobs WHERE exclusive_key IS NULL
        UNION ALL
        SELECT job_id FROM acquired
    ))
RETURNING
    /* COLUMNS: river_job */,
    -- The key the job took and the token of that acquisition (NULL for a job
    -- without a key): the engine gives the key back by both.
    (SELECT acquired.key FROM acquired WHERE acquired.job_id = river_job.id) AS exclusive_key,
    (SELECT acquired.token FROM acquired WHERE acquired.job_id = river_job.id) AS exclusive_token;
