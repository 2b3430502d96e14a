{{- /*
The running-row fetch (exclusive.RunningRow): two statements that one fetch
runs in one transaction, in this order. "running_candidates" picks the
candidates in the client's order and locks their keys; "running_take", with
its own snapshot taken after those locks were granted, moves to running each
locked key's head if no job of the key runs. The argument is in
exclusive/doc.go ("The key held by River's own row"). Rendered with
exclusive.RunningSQL over the engine's fetch template (plan functions).
*/ -}}
{{- define "running_of_key"}}
{{- /* Whether a job of the key (the expression given as the pipeline) is
running: one probe of the running-key index of the scope
(workflow/sql/exclusive_running_index_create.sql), whose key expression and
predicate these are; a job the engine names as ended does not count. A
scalar subquery, not NOT EXISTS, so that the planner
cannot turn it into a join that evaluates the key of every running job for
every candidate: it stays one index probe per key. The state is compared as
"(state = 'running') IS TRUE", as the index's predicate has it, so that
River's fetch index (led by state) cannot serve the probe: with statistics
taken while no job ran, the planner read every running job over it. */ -}}
(
                SELECT running.id
                FROM /* TEMPLATE: schema */river_job AS running
                WHERE
                    /* KEY_EXPRESSION: running */ = {{.}}
                    AND (running.state = 'running') IS TRUE
                    AND /* TEMPLATE: schema */river_bpmn_ctx_exclusive(running.metadata)
                    AND /* KEY_GUARD: running */
                    -- A job whose work has ended on this engine, outcome
                    -- not yet written, holds its key no more for this
                    -- engine's fetches (exclusive.Keeper.EndedRunning).
                    -- (One run of it: exclusive.runName.)
                    AND NOT (running.id::text || ':' || running.attempt::text || ':'
                        || (extract(epoch FROM running.attempted_at) * 1000000)::bigint::text) = ANY(@ended_running::text[])
                LIMIT 1
            ) IS NULL
{{- end}}
{{- define "running_candidates"}}
-- Statement 1 of a running-row fetch: available jobs in the client's order
-- (at most lookahead looked at, streamed), of each key only its head (the
-- first waiting job of the key the client may take), keys that a running
-- job holds in this snapshot left out, up to max_to_lock of them; then a transaction advisory
-- lock on each one's key, tried, never waited for (a key another fetch
-- holds is skipped). The locked keys and the jobs without a key go to
-- statement 2 through transaction-local settings.
WITH heads AS MATERIALIZED (
    SELECT
        head.id,
        head.exclusive_key
    FROM (
        SELECT
{{- template "head_columns"}}
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
    ) AS head
    WHERE
        head.exclusive_key IS NULL
        OR (
            -- The key's head: no job of the key that this client may take
            -- comes before it in the client's order (the head probe of the
            -- lock-table fetch, sql/fetch_step.sql)...
{{- range headProbes "earlier" "head"}}
            NOT EXISTS (
                SELECT 1
                FROM /* TEMPLATE: schema */river_job AS earlier
                WHERE
{{- template "waiting_of_key" "earlier"}}
                    AND {{.}}
            )
            AND
{{- end}}
            -- ...and no job of the key runs in this snapshot.
            {{template "running_of_key" "head.exclusive_key"}}
        )
    LIMIT @max_to_lock::integer
),
locked AS MATERIALIZED (
    SELECT
        heads.id,
        heads.exclusive_key
    FROM
        heads
    WHERE
        heads.exclusive_key IS NULL
        OR pg_try_advisory_xact_lock(1919054968, hashtext(heads.exclusive_key))
)
-- The picked jobs: their ids, and aligned with them (one aggregation) their
-- keys, NULL for a job without a key. And statement 2 runs a generic plan
-- (planned once per connection, not at every fetch: its custom plans cost
-- as much planning as its execution, and are no better, since its rows are
-- found by id): plan_cache_mode is set for the rest of the transaction,
-- the value it had kept in riverbpmn.plan_cache_mode, so that a fetch in a
-- caller's transaction can restore it (exclusive.Keeper.FetchRunning).
SELECT
    set_config('riverbpmn.fetch_ids', coalesce(picks.ids, '{}'::bigint[])::text, true),
    set_config('riverbpmn.fetch_keys', coalesce(picks.keys, '{}'::text[])::text, true),
    set_config('riverbpmn.plan_cache_mode', current_setting('plan_cache_mode'), true),
    set_config('plan_cache_mode', 'force_generic_plan', true)
FROM (
    SELECT
        array_agg(locked.id) AS ids,
        array_agg(locked.exclusive_key) AS keys
    FROM
        locked
) AS picks;
{{- end}}
{{- define "running_take"}}
-- Statement 2 of a running-row fetch, with a snapshot taken after statement
-- 1's key locks were granted: the jobs statement 1 picked (of each locked
-- key its head in statement 1's snapshot, and the jobs without a key), a
-- job with a key only if no job of the key runs in this snapshot; locked
-- as River locks, still available, the key read again from the locked row
-- version and required to be the one picked; moved to running. The head is
-- not looked up again: statement 1 found it in its snapshot, as the lock
-- table's single statement finds it in its own (exclusive/doc.go).
WITH picked AS (
    SELECT
        pick.id,
        pick.exclusive_key
    FROM
        unnest(
            current_setting('riverbpmn.fetch_ids')::bigint[],
            current_setting('riverbpmn.fetch_keys')::text[]
        ) AS pick (id, exclusive_key)
    WHERE
        pick.exclusive_key IS NULL
        OR {{template "running_of_key" "pick.exclusive_key"}}
),
locked_jobs AS (
    SELECT
        river_job.id,
        /* EXCLUSIVE_KEY */ AS exclusive_key
    FROM
        /* TEMPLATE: schema */river_job
    WHERE
        river_job.id = ANY(ARRAY(SELECT id FROM picked))
        AND river_job.state = 'available'
        AND river_job.queue = @queue::text
        AND river_job.scheduled_at <= coalesce(@now::timestamptz, now())
    FOR UPDATE
    SKIP LOCKED
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
FROM
    locked_jobs
    JOIN picked ON picked.id = locked_jobs.id
WHERE
    river_job.id = locked_jobs.id
    AND locked_jobs.exclusive_key IS NOT DISTINCT FROM picked.exclusive_key
RETURNING
    /* COLUMNS: river_job */;
{{- end}}
