-- JobGetAvailableExclusive: River's fetch (job_get_available.sql) with strict
-- exclusivity. It locks up to $4 available jobs of queue $1 and moves them to
-- running, taking at most one job per exclusive key, never a job whose key is
-- held by a running attempt, and records every key it takes in
-- river_bpmn_exclusive_lock in the same statement. Jobs without a key (plain
-- River jobs, non-exclusive jobs, jobs of no instance) are fetched exactly as
-- River fetches them. The invariant and why this is race-free are in
-- workflow/exclusive_fetch.go.
--
-- It looks at a bounded window: the first $10 available jobs after the cursor
-- ($7, $8, $9) in River's order, read through River's own fetch index
-- (river_job_prioritized_fetching_index), so the cost does not grow with the
-- backlog. The first row of the result reports the window (rows scanned and
-- the last position) so the caller can page on when the window held too few
-- fetchable jobs.
--
-- $1 queue, $2 kinds (NULL = every kind), $3 now (NULL = database now()),
-- $4 max jobs to lock, $5 attempted_by cap, $6 client id,
-- $7 $8 $9 cursor: priority, scheduled_at, id of the last job already looked
-- at (use 0, '-infinity', 0 to start), $10 window size.
WITH window_jobs AS MATERIALIZED (
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
        AND (river_job.priority, river_job.scheduled_at, river_job.id) > ($7::smallint, $8::timestamptz, $9::bigint)
    ORDER BY
        river_job.priority ASC,
        river_job.scheduled_at ASC,
        river_job.id ASC
    LIMIT $10::integer
),
window_end AS (
    SELECT
        (SELECT count(*) FROM window_jobs) AS scanned,
        last_job.priority AS last_priority,
        last_job.scheduled_at AS last_scheduled_at,
        last_job.id AS last_id
    FROM
        (VALUES (1)) AS one
        LEFT JOIN (
            SELECT window_jobs.priority, window_jobs.scheduled_at, window_jobs.id
            FROM window_jobs
            ORDER BY window_jobs.priority DESC, window_jobs.scheduled_at DESC, window_jobs.id DESC
            LIMIT 1
        ) AS last_job ON true
),
-- Every key-less job, and the first job (in River's order) of every key that
-- no running attempt holds; then the first $4 of those in River's order.
chosen AS (
    SELECT
        ranked.id
    FROM (
        SELECT
            window_jobs.*,
            row_number() OVER (
                PARTITION BY window_jobs.exclusive_key
                ORDER BY window_jobs.priority, window_jobs.scheduled_at, window_jobs.id
            ) AS key_rank
        FROM
            window_jobs
        WHERE
            window_jobs.exclusive_key IS NULL
            -- Not held: no lock on the key, or only a stale one (its job no
            -- longer runs the attempt that took it), judged in this
            -- statement's snapshot.
            OR NOT EXISTS (
                SELECT 1
                FROM
                    /* TEMPLATE: schema */river_bpmn_exclusive_lock AS lock
                    JOIN /* TEMPLATE: schema */river_job AS holder
                        ON holder.id = lock.job_id
                        AND holder.state = 'running'
                        AND holder.attempt = lock.attempt
                WHERE
                    lock.key = window_jobs.exclusive_key
            )
    ) AS ranked
    WHERE
        ranked.exclusive_key IS NULL
        OR ranked.key_rank = 1
    ORDER BY
        ranked.priority ASC,
        ranked.scheduled_at ASC,
        ranked.id ASC
    LIMIT $4::integer
),
-- Lock the chosen rows as River does. The key is read again from the locked
-- row version, so a concurrent change to it cannot slip through. The ids go
-- in as an array so the rows are always found by primary key, whatever the
-- planner believes about the table.
locked_jobs AS (
    SELECT
        river_job.id,
        river_job.attempt,
        /* EXCLUSIVE_KEY */ AS exclusive_key
    FROM
        /* TEMPLATE: schema */river_job
    WHERE
        river_job.id = ANY(ARRAY(SELECT id FROM chosen))
        AND river_job.state = 'available'
        AND river_job.queue = $1::text
        AND river_job.scheduled_at <= coalesce($3::timestamptz, now())
    FOR UPDATE
    SKIP LOCKED
),
-- Take the keys, in key order (so two fetches never wait on each other in a
-- cycle). A key with no lock row is inserted; a key whose lock row this
-- statement's snapshot shows stale (its job no longer runs that attempt) is
-- taken over only if the row is still that same acquisition (token compare on
-- the latest row version); any other conflict leaves the key alone and the
-- job available.
acquired AS (
    INSERT INTO /* TEMPLATE: schema */river_bpmn_exclusive_lock (
        key, job_id, attempt, replaces, client_id, queue
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
                AND NOT EXISTS (
                    SELECT 1
                    FROM /* TEMPLATE: schema */river_job AS holder
                    WHERE holder.id = stale.job_id
                        AND holder.state = 'running'
                        AND holder.attempt = stale.attempt
                )
        ),
        $6::text,
        $1::text
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
        locked_at = excluded.locked_at
    WHERE
        river_bpmn_exclusive_lock.token = excluded.replaces
    RETURNING
        river_bpmn_exclusive_lock.job_id
),
updated AS (
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
        /* COLUMNS: river_job */
)
SELECT
    window_end.scanned,
    window_end.last_priority,
    window_end.last_scheduled_at,
    window_end.last_id,
    updated.*
FROM
    window_end
    LEFT JOIN updated ON true;
