{{- /*
The fair step of a client's fetch query (package fairness): the definitions
the fetch template (fetchplan/sql/fetch.sql) executes for
a client that fetches fairly across tenants (Acquisition.FairByTenant).
"fair" is the rounds' common table expressions, ending in fair_pick, the
ranked picks; the exclusive step reads fair_pick too. "fair_locked_jobs" is
the locked_jobs of a fair client without exclusivity. Why the rounds are
what they are is in fairness/doc.go.
*/ -}}
{{- define "fair"}}
-- Fairness (Acquisition.FairByTenant): the groups (tenants) that have
-- available jobs in the queue, found by a skip-scan of the client's tenant
-- index (the one of its order, index.TenantFairness, created when a fair
-- client starts): one index probe per tenant, however many jobs
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
-- Each group's weight, and the slot its turns start at in this fetch. A
-- group of weight w has w slots per round, numbered across rounds (slot s is
-- in round s / w). The client carries where it is in its rounds from fetch
-- to fetch (fairness.Turns): the round in progress, @fair_round; the
-- last tenant served in it, @fair_tenant (NULL before the first fetch); and
-- how many of that round's slots it took, @fair_used. Tenants take their
-- turns in byte order of their names (COLLATE "C", whatever the database's
-- collation, as the client compares them), so in round @fair_round the
-- tenants before @fair_tenant have had theirs, and start at the next round.
fair_groups AS (
    SELECT
        fair_tenants.fair_group,
        weights.weight,
        @fair_round::bigint * weights.weight + CASE
            WHEN fair_tenants.fair_group COLLATE "C" < @fair_tenant::text THEN weights.weight
            WHEN fair_tenants.fair_group = @fair_tenant::text THEN @fair_used::bigint
            ELSE 0
        END AS fair_start
    FROM
        fair_tenants
        CROSS JOIN LATERAL (
            SELECT greatest({{.Weight}}, 1)::bigint AS weight
        ) AS weights
    WHERE
        fair_tenants.fair_group IS NOT NULL
),
-- Rounds to read to fill the fetch if every group had jobs enough: a group
-- of weight w reads its slots up to the end of round @fair_round + rounds
-- - 1. One round more than the fetch needs, as the round in progress may be
-- partly taken; and not fewer, as the slots left in it may all be of groups
-- with no job this client may take (not due, filtered out): a group that
-- has had its turn in it then still reads its next round, so a fetch never
-- comes back empty while a job it may take waits.
fair_share AS (
    SELECT ceil(@{{.Limit}}::numeric / nullif(sum(weight), 0))::integer + 1 AS rounds
    FROM fair_groups
),
-- Each group's first jobs in the client's order (the group's own range of
-- the tenant index), numbered from its start slot; a job's round is its
-- slot divided by the group's weight. The picks are taken by round, then
-- turn (fair_turn: the group as a value of collation "C"), then the
-- client's order.
fair_pick AS MATERIALIZED (
    SELECT
        pick.*,
        fair_groups.fair_group,
        fair_groups.fair_start,
        (fair_groups.fair_start + pick.fair_slot - 1) / fair_groups.weight AS fair_round,
        -- A column, not an expression of the ORDER BYs, so that a query
        -- reading the ranked picks (the exclusive step joins them to
        -- river_job) keeps their order instead of sorting them again.
        fair_groups.fair_group COLLATE "C" AS fair_turn
    FROM
        fair_groups
        CROSS JOIN fair_share
        CROSS JOIN LATERAL (
                SELECT
                    river_job.id,
                    row_number() OVER (ORDER BY {{orderBy "river_job"}}) AS fair_slot,
                    {{orderColumns "river_job"}}
                FROM /* TEMPLATE: schema */river_job
                WHERE {{.Group}} = fair_groups.fair_group AND
{{- template "available_jobs"}}
                ORDER BY
                    {{orderBy "river_job"}}
                LIMIT least(@{{.Limit}}::integer, greatest(
                    (@fair_round::bigint + fair_share.rounds) * fair_groups.weight - fair_groups.fair_start, 0))
        ) AS pick
)
{{- end}}
{{- define "fair_locked_jobs"}}
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
{{- end}}
