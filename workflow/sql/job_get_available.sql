-- JobGetAvailable: lock up to max_to_lock available jobs of a queue and
-- move them to running. This file is a Go text/template, rendered once per
-- client from its fetch plan (package fetchplan; the parts are the options of
-- its Acquisition, workflow/acquisition.go) and whether the engine enforces
-- exclusivity. Only what the client enabled is in its query:
--
--   filters   each enabled filter (priority range, deployments) is AND-ed to
--             River's conditions;
--   order     the enabled order keys (priority, timers first, due date) come
--             first, River's priority, scheduled_at, id always last;
--   exclusive the exclusive step (the second half of this file).
--
-- With nothing enabled it is, clause for clause, River's own query
-- (riverpgxv5 v0.51.1, river_job.sql), so the client fetches exactly what
-- stock River fetches (TestFetchEquivalentToStockRiver). Every order has a
-- matching partial index (River's, or migration riverbpmn/003), so the scan
-- reads the first candidates off an index and never sorts the queue
-- (TestFetchPlansUseIndexes renders and EXPLAINs every combination).
{{- define "fair"}}
-- Fairness (Acquisition.FairByTenant): the groups (tenants) that have
-- available jobs in the queue, found by a skip-scan of the tenant index
-- (migration riverbpmn/011): one index probe per tenant, however many jobs
-- each has, so a tenant with no waiting job costs nothing. Jobs of no tenant
-- have the tenant '' (the expression is never NULL), one more group.
fair_tenants AS (
    (
        SELECT {{.Group}} AS fair_group
        FROM /* TEMPLATE: schema */river_job
        WHERE river_job.state = 'available'
            AND river_job.queue = @queue::text
        ORDER BY 1
        LIMIT 1
    )
    UNION ALL
    SELECT (
        SELECT {{.Group}}
        FROM /* TEMPLATE: schema */river_job
        WHERE river_job.state = 'available'
            AND river_job.queue = @queue::text
            AND {{.Group}} > fair_tenants.fair_group
        ORDER BY 1
        LIMIT 1
    )
    FROM fair_tenants
    WHERE fair_tenants.fair_group IS NOT NULL
),
fair_groups AS (
    SELECT fair_group, greatest({{.Weight}}, 1) AS weight
    FROM fair_tenants
    WHERE fair_group IS NOT NULL
),
-- Rounds needed to fill the fetch if every group had jobs enough: a group
-- of weight w reads at most w jobs per round.
fair_share AS (
    SELECT ceil(@{{.Limit}}::numeric / nullif(sum(weight), 0))::integer AS rounds
    FROM fair_groups
),
-- Each group's first jobs in the client's order (the group's own range of
-- the tenant index), numbered; a job's round is its place in its group
-- divided by the group's weight. The picks are taken by round; within a
-- round the tenants take turns in name order, starting after @fair_after,
-- the last tenant served in the previous fetch's last round (so that a
-- fetch smaller than the number of tenants does not serve the same first
-- tenants again and again).
fair_pick AS MATERIALIZED (
    SELECT
        pick.*,
        fair_groups.fair_group,
        (pick.fair_slot - 1) / fair_groups.weight AS fair_round
    FROM
        fair_groups
        CROSS JOIN fair_share
        CROSS JOIN LATERAL (
                SELECT
                    river_job.id,
                    row_number() OVER (ORDER BY {{orderBy "river_job"}}) AS fair_slot,
                    {{orderColumns "river_job"}}
                FROM /* TEMPLATE: schema */river_job
                WHERE {{.Group}} = fair_groups.fair_group
                    AND river_job.state = 'available'
                    AND river_job.queue = @queue::text
                    AND (@kind::text[] IS NULL OR river_job.kind = ANY(@kind::text[]))
                    AND river_job.scheduled_at <= coalesce(@now::timestamptz, now())
{{- range filters "river_job"}}
                    AND {{.}}
{{- end}}
                ORDER BY
                    {{orderBy "river_job"}}
                LIMIT least(@{{.Limit}}::integer, fair_share.rounds * fair_groups.weight)
        ) AS pick
)
{{- end}}
{{- if and (not .Exclusive) .Fair}}
-- Fair (Acquisition.FairByTenant), without exclusivity: the first
-- max_to_lock picks by (round, client's order), locked as River locks.
WITH RECURSIVE
{{- template "fair" (fairArgs "max_to_lock")}},
locked_jobs AS (
    SELECT
        river_job.id
    FROM
        /* TEMPLATE: schema */river_job
    WHERE
        river_job.id = ANY(ARRAY(
            SELECT fair_pick.id
            FROM fair_pick
            ORDER BY fair_pick.fair_round, {{fairTurn "fair_pick"}}, {{orderByColumns "fair_pick"}}
            LIMIT @max_to_lock::integer
        ))
        AND river_job.state = 'available'
        AND river_job.queue = @queue::text
        AND river_job.scheduled_at <= coalesce(@now::timestamptz, now())
    FOR UPDATE
    SKIP LOCKED
)
{{- else if not .Exclusive}}
WITH locked_jobs AS (
    SELECT
        id
    FROM
        /* TEMPLATE: schema */river_job
    WHERE
        state = 'available'
        AND queue = @queue::text
        AND (@kind::text[] IS NULL OR kind = ANY(@kind::text[]))
        AND scheduled_at <= coalesce(@now::timestamptz, now())
{{- range filters "river_job"}}
        AND {{.}}
{{- end}}
    ORDER BY
        {{orderBy "river_job"}}
    LIMIT @max_to_lock::integer
    FOR UPDATE
    SKIP LOCKED
)
{{- end}}
{{- if not .Exclusive}}
UPDATE
    /* TEMPLATE: schema */river_job
SET
    state = 'running',
    attempt = river_job.attempt + 1,
    attempted_at = coalesce(@now::timestamptz, now()),
    attempted_by = array_append(
        CASE WHEN array_length(river_job.attempted_by, 1) >= @max_attempted_by::int
        -- +2 instead of +1 because Postgres array indexing starts at 1, not 0.
        THEN river_job.attempted_by[array_length(river_job.attempted_by, 1) + 2 - @max_attempted_by::int:]
        ELSE river_job.attempted_by
        END,
        @client_id::text
    )
FROM
    locked_jobs
WHERE
    river_job.id = locked_jobs.id
RETURNING
    /* COLUMNS: river_job */;
{{- else}}
-- With exclusivity (Config.ExclusiveScope), the fetch takes only the head of
-- an exclusive key: the first waiting job of the key, in the client's order,
-- among the jobs this client may take (its queue, kinds, due, and its
-- filters); and only when no running attempt holds the key. It records every
-- key it takes in river_bpmn_exclusive_lock in the same statement as the
-- move to running. Jobs without a key (plain River jobs, non-exclusive jobs,
-- jobs of no instance) are fetched as without exclusivity. The invariant, and
-- why this is race-free, are in workflow/exclusive_fetch.go.
--
-- The scan reads available jobs in the client's order over the order's index
-- (the same as without exclusivity), streamed, and stops as soon as
-- max_to_lock jobs qualify. Each job with a key costs index probes: for an
-- earlier waiting job of the key that this client may take, and for the key's
-- lock (primary key). The first probe is one index step with River's order
-- (index river_bpmn_job_exclusive_*, migration 005, a key's waiting jobs in
-- River's order) and with an order led by priority (two probes, index
-- river_bpmn_job_exclusive_*_p, migration 010, a key's waiting jobs by
-- priority); with an order led by timers first or due date it reads the
-- key's waiting jobs in the queue. At most lookahead available jobs are
-- looked at, so a queue whose head is a long run of jobs of held keys costs a
-- bounded scan.
{{- if .Fair}}
-- Fair: the exclusive step reads the first lookahead picks, by (round,
-- client's order), instead of the queue in the client's order; it still
-- takes only a key's head and locks the key in this statement.
WITH RECURSIVE
{{- template "fair" (fairArgs "lookahead")}},
candidate AS (
{{- else}}
WITH candidate AS (
{{- end}}
    SELECT
        head.id
    FROM (
{{- if .Fair}}
        SELECT
            river_job.id,
            river_job.kind,
            river_job.metadata,
            river_job.priority,
            river_job.queue,
            river_job.scheduled_at,
            /* EXCLUSIVE_KEY */ AS exclusive_key
        FROM (
            SELECT fair_pick.*
            FROM fair_pick
            ORDER BY fair_pick.fair_round, {{fairTurn "fair_pick"}}, {{orderByColumns "fair_pick"}}
            LIMIT @lookahead::integer
        ) AS fair
        JOIN /* TEMPLATE: schema */river_job ON river_job.id = fair.id
        ORDER BY fair.fair_round, {{fairTurn "fair"}}, {{orderByColumns "fair"}}
{{- else}}
        -- The columns order keys and filters may read, for the head probe.
        SELECT
            river_job.id,
            river_job.kind,
            river_job.metadata,
            river_job.priority,
            river_job.queue,
            river_job.scheduled_at,
            /* EXCLUSIVE_KEY */ AS exclusive_key
        FROM
            /* TEMPLATE: schema */river_job
        WHERE
            river_job.state = 'available'
            AND river_job.queue = @queue::text
            AND (@kind::text[] IS NULL OR river_job.kind = ANY(@kind::text[]))
            AND river_job.scheduled_at <= coalesce(@now::timestamptz, now())
{{- range filters "river_job"}}
            AND {{.}}
{{- end}}
        ORDER BY
            {{orderBy "river_job"}}
        LIMIT @lookahead::integer
{{- end}}
    ) AS head
    WHERE
        head.exclusive_key IS NULL
        OR (
            -- No job of the key that this client may take comes before this
            -- one in the client's order, so a fetch takes at most one job
            -- per key: the head. Checked first: it alone turns away the
            -- later jobs of a key, however many follow it. "Comes before"
            -- is one condition, or two when the order leads with a key the
            -- head-of-key indexes have (by priority: a higher priority, or
            -- the same and earlier in River's order), each an index probe...
{{- $byIndexedKey := gt (len (headProbes "earlier" "head")) 1}}
{{- range headProbes "earlier" "head"}}
            NOT EXISTS (
                SELECT 1
                FROM /* TEMPLATE: schema */river_job AS earlier
{{- if $byIndexedKey}}
                -- The key as jsonb: the index of migration 010, in priority order.
                WHERE /* KEY_JSONB_EXPRESSION: earlier */ = to_jsonb(head.exclusive_key)
{{- else}}
                WHERE /* KEY_EXPRESSION: earlier */ = head.exclusive_key
{{- end}}
                    AND /* KEY_GUARD: earlier */
                    AND earlier.queue = @queue::text
                    AND earlier.state = 'available'
                    AND earlier.metadata -> 'bpmn' -> 'exclusive' = 'true'::jsonb
                    AND (@kind::text[] IS NULL OR earlier.kind = ANY(@kind::text[]))
                    AND earlier.scheduled_at <= coalesce(@now::timestamptz, now())
{{- range filters "earlier"}}
                    AND {{.}}
{{- end}}
                    AND {{.}}
            )
            AND
{{- end}}
            -- ...and no running attempt holds the key (a lock row may exist,
            -- free or stale), judged in this statement's snapshot. A scalar
            -- subquery, so it is one primary-key probe per job rather than a
            -- hash of the whole lock table, which keeps recently freed rows.
            NOT coalesce((
                SELECT /* LOCK_IS_LIVE: lock */
                FROM /* TEMPLATE: schema */river_bpmn_exclusive_lock AS lock
                WHERE lock.key = head.exclusive_key
            ), false)
        )
    LIMIT @max_to_lock::integer
),
-- Lock the candidates as River does. The ids go in as an array so the rows
-- are always found by primary key, whatever the planner believes about the
-- table. The key is read again from the locked row version, so a concurrent
-- change to it cannot slip through. The client's filters are judged in the
-- statement's snapshot, not again here (a job whose priority is changed while
-- it is being fetched may go to the client that saw it before the change):
-- evaluating them again per locked row took about a quarter of a filtered
-- fetch's time.
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
        AND river_job.queue = @queue::text
        AND river_job.scheduled_at <= coalesce(@now::timestamptz, now())
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
        @client_id::text,
        @queue::text,
        coalesce(@now::timestamptz, now())
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
    attempted_at = coalesce(@now::timestamptz, now()),
    attempted_by = array_append(
        CASE WHEN array_length(river_job.attempted_by, 1) >= @max_attempted_by::int
        -- +2 instead of +1 because Postgres array indexing starts at 1, not 0.
        THEN river_job.attempted_by[array_length(river_job.attempted_by, 1) + 2 - @max_attempted_by::int:]
        ELSE river_job.attempted_by
        END,
        @client_id::text
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
{{- end}}
