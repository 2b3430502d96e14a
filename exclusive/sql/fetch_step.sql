{{- /*
The exclusive step of a client's fetch query (package exclusive): the
definitions the fetch template (fetchplan/sql/fetch.sql) executes when the
engine enforces exclusivity. "batch" and "batch_runs" are
the runs of Config.ExclusiveBatch; "exclusive_step" is the statement. It is
rendered with exclusive.RenderSQL, which fills the key markers. The
invariant, and why this is race-free, are in exclusive/doc.go.
*/ -}}
{{- define "ended_tokens"}}
{{- /* The tokens of the acquisitions the engine names as ended, as a
subquery, so that "token IN" / "NOT IN" it is one hashed set per statement
(exclusive/ended.go). */ -}}
(SELECT ended.token FROM unnest(@ended_tokens::bigint[]) AS ended (token))
{{- end}}
{{- define "head_columns"}}
{{- /* The columns of a job that order keys and filters may read, for the
head probe. */}}
                river_job.id,
                river_job.kind,
                river_job.metadata,
                river_job.priority,
                river_job.queue,
                river_job.scheduled_at,
{{- end}}
{{- define "waiting_of_key"}}
{{- /* Whether the river_job row named by the pipeline (an alias) is a
waiting job of the key of the row head that this client may take: the
key's job, available, exclusive, of a kind it works, due, passing its
filters; stated as the head-of-key index of the client's order has it (its
key expression, partial predicate and marker), so that the index serves
the probe of a head and the lookup of a run alike. */}}
{{- if headIndexed}}
                    -- The key as jsonb: the head-of-key index of the order.
                    /* KEY_JSONB_EXPRESSION: {{.}} */ = to_jsonb(head.exclusive_key)
{{- else}}
                    /* KEY_EXPRESSION: {{.}} */ = head.exclusive_key
{{- end}}
                    AND /* KEY_GUARD: {{.}} */
                    AND {{.}}.queue = @queue::text
                    AND {{.}}.state = 'available'
                    AND /* TEMPLATE: schema */river_bpmn_ctx_exclusive({{.}}.metadata)
                    AND (@kind::text[] IS NULL OR {{.}}.kind = ANY(@kind::text[]))
                    AND {{.}}.scheduled_at <= coalesce(@now::timestamptz, now())
{{- range filters .}}
                    AND {{.}}
{{- end}}
{{- with headMarker .}}
                    AND {{.}}
{{- end}}
{{- end}}
{{- define "batch"}}
-- Batching (Config.ExclusiveBatch): with each head of a key, its run: the
-- key's next waiting jobs (up to @exclusive_batch in all, head included),
-- in the client's order under the same conditions as the head (queue,
-- kinds, due, filters), read off the head-of-key index of the order (one
-- range of migration 005's index in River's order, of migration 010's by
-- priority; with an order led by timers first or due date the key's waiting
-- jobs in the queue, sorted). A job without a key is a run of its own. The
-- jobs of a run are taken and moved to running with the key, in this
-- statement; the client runs them one after another in run order
-- (exclusive/keeper.go), and the lock names them all (runs below).
{{- if .Fair}}
head_list AS (
    SELECT
        *
    FROM
        unnest(
            ARRAY(SELECT id FROM candidate),
            ARRAY(SELECT exclusive_key FROM candidate),
            ARRAY(SELECT replaces FROM candidate),
            ARRAY(SELECT fair_group FROM candidate),
            ARRAY(SELECT fair_start FROM candidate)
        ) WITH ORDINALITY AS head_list (id, exclusive_key, replaces, fair_group, fair_start, ord)
),
{{- end}}
run_pick AS (
    SELECT
        run.id,
        head.id AS head_id,
        head.exclusive_key AS head_key,
        head.replaces AS head_replaces,
        run.run_pos{{if .Fair}},
        head.ord,
        head.fair_group,
        head.fair_start{{end}}
    FROM
        {{if .Fair}}head_list{{else}}candidate{{end}} AS head
        CROSS JOIN LATERAL unnest(
            CASE WHEN head.exclusive_key IS NULL THEN ARRAY[head.id]
            ELSE ARRAY[head.id] || ARRAY(
                SELECT
                    later.id
                FROM
                    /* TEMPLATE: schema */river_job AS later
                WHERE
{{- template "waiting_of_key" "later"}}
                    AND later.id <> head.id
                -- The order as the head-of-key index holds it (a priority
                -- as its complement, ascending), so the index serves it.
                ORDER BY
                    {{headOrderBy "later"}}
                LIMIT @exclusive_batch::integer - 1
            ) END
        ) WITH ORDINALITY AS run (id, run_pos)
{{- if not .Fair}}
    -- Runs in the client's order of their heads, until the fetch is full:
    -- a run takes the slots of later heads (fewer keys per fetch).
    LIMIT @max_to_lock::integer
{{- end}}
),
{{- if .Fair}}
-- Fair: a run's jobs count against its tenant's turn. A job's slot is its
-- tenant's start slot plus its place among the tenant's picked jobs (heads
-- in fair order, each followed by its run), its round the slot divided by
-- the tenant's weight; the fetch takes the first max_to_lock by (round,
-- turn, head, place in the run).
picked AS (
    SELECT
        counted.id,
        counted.head_id,
        counted.head_key,
        counted.head_replaces,
        counted.run_pos
    FROM (
        SELECT
            run_pick.*,
            greatest({{(fairArgs "").Weight}}, 1) AS weight,
            count(*) OVER (PARTITION BY run_pick.fair_group ORDER BY run_pick.ord, run_pick.run_pos) AS tenant_place
        FROM
            run_pick
    ) AS counted
    ORDER BY
        (counted.fair_start + counted.tenant_place - 1) / counted.weight,
        counted.fair_group COLLATE "C",
        counted.ord,
        counted.run_pos
    LIMIT @max_to_lock::integer
),
{{- else}}
picked AS (
    SELECT id, head_id, head_key, head_replaces, run_pos FROM run_pick
),
{{- end}}
{{- end}}
{{- define "batch_runs"}}
-- The runs actually taken: of each head's run, the jobs locked above, in run
-- order, up to the first one missing (locked by another fetch, or no longer
-- of the head's key when read again): a run is always a prefix of the key's
-- waiting jobs in the client's order, its head first, so no job of the key
-- that the client may take is passed over.
run_jobs AS (
    SELECT
        keyed.id,
        keyed.attempt,
        keyed.exclusive_key,
        keyed.head_id,
        keyed.head_key,
        keyed.head_replaces,
        keyed.run_pos
    FROM (
        SELECT
            ordered.*,
            count(*) FILTER (WHERE ordered.exclusive_key IS NOT DISTINCT FROM ordered.run_key)
                OVER (PARTITION BY ordered.head_id ORDER BY ordered.run_pos) AS in_order
        FROM (
            SELECT
                locked_jobs.id,
                locked_jobs.attempt,
                locked_jobs.exclusive_key,
                picked.head_id,
                picked.head_key,
                picked.head_replaces,
                picked.run_pos,
                first_value(locked_jobs.exclusive_key)
                    OVER (PARTITION BY picked.head_id ORDER BY picked.run_pos) AS run_key
            FROM
                picked
                JOIN locked_jobs ON locked_jobs.id = picked.id
        ) AS ordered
    ) AS keyed
    WHERE
        keyed.in_order = keyed.run_pos
),
-- One run per key: its jobs and their attempts once moved to running, in
-- run order, and the token of the key's lock its head's candidate step
-- judged replaceable (only if the key read again is the one it judged).
runs AS (
    SELECT
        run_jobs.head_id,
        run_jobs.exclusive_key,
        CASE WHEN run_jobs.head_key = run_jobs.exclusive_key THEN run_jobs.head_replaces END AS replaces,
        array_agg(run_jobs.id ORDER BY run_jobs.run_pos) AS ids,
        array_agg(run_jobs.attempt + 1 ORDER BY run_jobs.run_pos)::smallint[] AS attempts
    FROM
        run_jobs
    WHERE
        run_jobs.exclusive_key IS NOT NULL
    GROUP BY
        run_jobs.head_id,
        run_jobs.exclusive_key,
        run_jobs.head_key,
        run_jobs.head_replaces
),
{{- end}}
{{- define "probed_rows"}}
        SELECT
            head.id,
            head.exclusive_key,
{{- if and .Batch .Fair}}
            head.fair_group,
            head.fair_start,
{{- end}}
            -- The key's lock, probed only for the jobs the head probe kept (a
            -- projection is evaluated after the scan's conditions), once per
            -- job, judged in this statement's snapshot: NULL when no row
            -- exists or the key is free, -1 when a running attempt holds it,
            -- else the row's token (identity, from 1), which this fetch may
            -- take over: the lock is stale, or its acquisition is one the
            -- engine names as ended (@ended_tokens: its work has ended). A
            -- scalar subquery, so it is one primary-key probe per job rather
            -- than a hash of the whole lock table, which keeps recently freed
            -- rows; the ended tokens are one hashed set for the statement, not
            -- an array walked per job, looked up first: an ended lock needs no
            -- probe of its job.
            CASE WHEN head.exclusive_key IS NOT NULL THEN (
                SELECT
                    CASE
                        WHEN lock.job_id IS NULL THEN NULL
                        WHEN lock.token IN {{template "ended_tokens"}} OR NOT /* LOCK_IS_LIVE: lock */ THEN lock.token
                        ELSE -1
                    END
                FROM /* TEMPLATE: schema */river_bpmn_exclusive_lock AS lock
                WHERE lock.key = head.exclusive_key
            ) END AS lock_state
        FROM (
{{- if .Fair}}
            SELECT
{{- template "head_columns"}}
{{- if .Batch}}
                fair.fair_group,
                fair.fair_start,
{{- end}}
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
            SELECT
{{- template "head_columns"}}
                /* EXCLUSIVE_KEY */ AS exclusive_key
            FROM
                /* TEMPLATE: schema */river_job
            WHERE
{{- template "available_jobs"}}
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
                -- is one index probe: a row comparison over a head-of-key index
                -- (by priority: ~priority, then River's order), which ends at
                -- the key's first entry when this job is the head...
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
                true
            )
        -- Kept as its own step (OFFSET 0), so the key's lock is probed
        -- after the head probe, only for the jobs it kept.
        OFFSET 0{{- end}}
{{- define "held_probed"}}
{{- /* With the count of candidates passed over because their key was held:
the probed candidates numbered in the order they are looked at (ord),
followed by one row that marks their end (looked_all, no job), which the
candidate step reaches only when it read them all, as a fetch that comes
back short does. row_number() reads no row ahead of the one it numbers
(a running count(*) would read one more candidate), so the step reads, and
is estimated to cost, what the step without the count does. */}}(
        SELECT
            looked.*,
            row_number() OVER () AS ord
        FROM (
            SELECT
                probed.*,
                false AS looked_all
            FROM ({{template "probed_rows" .}}
            ) AS probed
            UNION ALL
            SELECT
                NULL,
                NULL,
{{- if and .Batch .Fair}}
                NULL,
                NULL,
{{- end}}
                NULL,
                true
        ) AS looked
    ) AS probed
{{- end}}
{{- define "held_end"}}
{{- if .CountHeld}}
),
-- The candidates passed over because a running attempt held their key:
-- those looked at up to the last one taken, or all of them when the fetch
-- came back short (it read them all then, up to the end marker); never a
-- row further: the count the last counted row carries (it grows row by row).
held AS (
    SELECT
        coalesce(max(counted.held), 0) AS n
    FROM
        counted
)
-- One row at least: a fetch that took nothing still reports its count (its
-- job columns NULL).
SELECT
    taken_jobs.*,
    held.n AS exclusive_held_skipped
FROM
    held
    LEFT JOIN taken_jobs ON true
{{- end}}
{{- end}}
{{- define "exclusive_step"}}
-- With exclusivity (Config.ExclusiveScope), the fetch takes only the head of
-- an exclusive key: the first waiting job of the key, in the client's order,
-- among the jobs this client may take (its queue, kinds, due, and its
-- filters); and only when no running attempt holds the key. It records every
-- key it takes in river_bpmn_exclusive_lock in the same statement as the
-- move to running. Jobs without a key (plain River jobs, non-exclusive jobs,
-- jobs of no instance) are fetched as without exclusivity. The invariant, and
-- why this is race-free, are in exclusive/doc.go.
--
-- The scan reads available jobs in the client's order over the order's index
-- (the same as without exclusivity), streamed, and stops as soon as
-- max_to_lock jobs qualify. Each job with a key costs index probes: for an
-- earlier waiting job of the key that this client may take, and for the key's
-- lock (primary key). The first probe is one index step with River's order
-- (index river_bpmn_job_exclusive_*, migration 005, a key's waiting jobs in
-- River's order) and with an order led by priority (index
-- river_bpmn_job_exclusive_*_p, migration 020, a key's waiting jobs by
-- priority, held as ~priority ascending so that "earlier" is one row
-- comparison over the index); with an order led by timers first or due
-- date it reads the key's waiting jobs in the queue. At most lookahead available jobs are
-- looked at, so a queue whose head is a long run of jobs of held keys costs a
-- bounded scan.
{{- if .Fair}}
-- Fair: the exclusive step reads the first lookahead picks, by (round,
-- client's order), instead of the queue in the client's order; it still
-- takes only a key's head and locks the key in this statement.
WITH RECURSIVE
{{- template "fair" (fairArgs "lookahead")}},
{{- else if .CountHeld}}
WITH
{{- end}}
{{- if .CountHeld}}
-- With the count of candidates passed over because their key was held (the
-- statement's last column, exclusive_held_skipped; rendered only when the
-- engine records it, telemetry.NameKeysHeldSkipped), the candidate step is
-- "counted": each candidate also carries the count of the held ones looked
-- at before it, and the step ends with the end marker when it read them
-- all. It streams and stops as the step without the count does, and is
-- estimated to cost as much (the limit bounds it; a CTE that read the
-- candidates unbounded would be costed for all of them).
counted AS (
{{- else if .Fair}}
candidate AS (
{{- else}}
WITH candidate AS (
{{- end}}
    SELECT
        probed.id,
        probed.exclusive_key,
        -- The token of the key's lock when this fetch may take it over
        -- (stale, or ended): the take (acquired) uses it without probing
        -- the lock again.
        probed.lock_state AS replaces
{{- if and .Batch .Fair}},
        probed.fair_group,
        probed.fair_start
{{- end}}
{{- if .CountHeld}},
        -- The held candidates looked at before this one: those looked at
        -- up to it less those kept up to it.
        probed.ord - row_number() OVER () AS held,
        probed.looked_all
    FROM {{template "held_probed" .}}
{{- else}}
    FROM ({{template "probed_rows" .}}
    ) AS probed
{{- end}}
    -- ...and no running attempt holds the key.
    WHERE
        probed.lock_state IS DISTINCT FROM -1
    LIMIT @max_to_lock::integer
),
{{- if .CountHeld}}
-- The candidates, without the end marker.
candidate AS (
    SELECT
        counted.id,
        counted.exclusive_key,
        counted.replaces
{{- if and .Batch .Fair}},
        counted.fair_group,
        counted.fair_start
{{- end}}
    FROM
        counted
    WHERE
        NOT counted.looked_all
),
{{- end}}
{{- if .Batch}}
{{- template "batch" .}}
{{- end}}
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
        river_job.id = ANY(ARRAY(SELECT id FROM {{if .Batch}}picked{{else}}candidate{{end}}))
        AND river_job.state = 'available'
        AND river_job.queue = @queue::text
        AND river_job.scheduled_at <= coalesce(@now::timestamptz, now())
    FOR UPDATE
    SKIP LOCKED
),
{{- if .Batch}}
{{- template "batch_runs" .}}
{{- end}}
-- Take the keys, in key order (so two fetches never wait on each other in a
-- cycle). A key without a row is inserted. A key with a row is taken only if
-- the row's latest committed version is free (job_id NULL) or still carries
-- the token that this statement's snapshot showed replaceable ("replaces"):
-- stale, or an acquisition the engine names as ended (@ended_tokens: its
-- work has ended, River may not have written its outcome yet). Taking the
-- key over gives that acquisition back in the same update: a key whose work
-- has ended is never written as free on the way (exclusive/keeper.go, ended
-- keys). Any other conflict leaves the key alone and its job available.
-- "replaces" is the token the candidate step judged replaceable, carried
-- from its lock probe rather than probed again (the same snapshot gives the
-- same verdict); only for the key it judged: a job whose key changed before
-- it was locked takes only an absent or free row.
acquired AS (
    INSERT INTO /* TEMPLATE: schema */river_bpmn_exclusive_lock AS lock (
        key, job_id, attempt, replaces, client_id, queue, locked_at{{if .Batch}}, run_job_ids, run_attempts{{end}}
    )
{{- if .Batch}}
    -- A run of one job is a lock of one job (no run arrays), as without
    -- batching.
    SELECT DISTINCT ON (runs.exclusive_key)
        runs.exclusive_key,
        runs.ids[1],
        runs.attempts[1],
        runs.replaces,
        @client_id::text,
        @queue::text,
        coalesce(@now::timestamptz, now()),
        CASE WHEN cardinality(runs.ids) > 1 THEN runs.ids END,
        CASE WHEN cardinality(runs.ids) > 1 THEN runs.attempts END
    FROM
        runs
    ORDER BY
        runs.exclusive_key,
        runs.ids[1]
{{- else}}
    SELECT DISTINCT ON (locked_jobs.exclusive_key)
        locked_jobs.exclusive_key,
        locked_jobs.id,
        locked_jobs.attempt + 1,
        CASE WHEN candidate.exclusive_key = locked_jobs.exclusive_key THEN candidate.replaces END,
        @client_id::text,
        @queue::text,
        coalesce(@now::timestamptz, now())
    FROM
        locked_jobs
        LEFT JOIN candidate ON candidate.id = locked_jobs.id
    WHERE
        locked_jobs.exclusive_key IS NOT NULL
    ORDER BY
        locked_jobs.exclusive_key,
        locked_jobs.id
{{- end}}
    ON CONFLICT (key) DO UPDATE SET
        job_id = excluded.job_id,
        attempt = excluded.attempt,
        token = excluded.token,
        replaces = excluded.replaces,
        client_id = excluded.client_id,
        queue = excluded.queue,
        locked_at = excluded.locked_at,
        released_at = NULL,
        run_job_ids = excluded.run_job_ids,
        run_attempts = excluded.run_attempts
    WHERE
        lock.job_id IS NULL
        OR lock.token = excluded.replaces
    RETURNING
        lock.key,
        lock.job_id,
        lock.token{{if .Batch}},
        lock.run_job_ids{{end}}
)
{{- if .CountHeld}},
taken_jobs AS (
{{- end}}
{{- template "move_to_running"}}
{{- if .Batch}}
FROM (
    SELECT id, NULL::text AS key, NULL::bigint AS token, NULL::bigint AS run_pos, NULL::integer AS run_len
    FROM run_jobs WHERE exclusive_key IS NULL
    UNION ALL
    SELECT run.id, acquired.key, acquired.token, run.run_pos, cardinality(coalesce(acquired.run_job_ids, ARRAY[acquired.job_id]))
    FROM acquired
        CROSS JOIN LATERAL unnest(coalesce(acquired.run_job_ids, ARRAY[acquired.job_id])) WITH ORDINALITY AS run (id, run_pos)
) AS taken
WHERE
    river_job.id = ANY(ARRAY(
        SELECT id FROM run_jobs WHERE exclusive_key IS NULL
        UNION ALL
        SELECT unnest(coalesce(acquired.run_job_ids, ARRAY[acquired.job_id])) FROM acquired
    ))
    AND river_job.id = taken.id
RETURNING
    /* COLUMNS: river_job */,
    -- The key the job took, the token of that acquisition, and the job's
    -- place in the key's run and the run's length (NULL for a job without a
    -- key): the engine runs a key's run in order, and gives the key back by
    -- key and token after the last one.
    taken.key AS exclusive_key,
    taken.token AS exclusive_token,
    taken.run_pos AS exclusive_run_pos,
    taken.run_len AS exclusive_run_len{{template "held_end" .}};
{{- else}}
FROM (
    SELECT id, NULL::text AS key, NULL::bigint AS token FROM locked_jobs WHERE exclusive_key IS NULL
    UNION ALL
    SELECT job_id, key, token FROM acquired
) AS taken
WHERE
    -- The ids as an array as well, so the rows are found by primary key;
    -- the join carries each job's key and token (a hash, not a scan of
    -- acquired per job).
    river_job.id = ANY(ARRAY(
        SELECT id FROM locked_jobs WHERE exclusive_key IS NULL
        UNION ALL
        SELECT job_id FROM acquired
    ))
    AND river_job.id = taken.id
RETURNING
    /* COLUMNS: river_job */,
    -- The key the job took and the token of that acquisition (NULL for a job
    -- without a key): the engine gives the key back by both.
    taken.key AS exclusive_key,
    taken.token AS exclusive_token{{template "held_end" .}};
{{- end}}
{{- end}}
