-- JobGetAvailable: lock up to max_to_lock available jobs of a queue
-- and move them to running. This file is a Go text/template, rendered once
-- per client from its Acquisition: only the clauses the client enabled are
-- in its query. With none enabled it is, clause for clause, River's own
-- query (riverpgxv5 v0.51.1, river_job.sql), so the client fetches exactly
-- what stock River fetches (TestFetchEquivalentToStockRiver).
--
-- Each ORDER BY of an acquisition option has a matching partial index in
-- migration riverbpmn/003 (TestFetchPlansUseIndexes).
WITH locked_jobs AS (
    SELECT
        id
    FROM
        /* TEMPLATE: schema */river_job
    WHERE
        state = 'available'
        AND queue = {{arg "queue"}}::text
        AND ({{arg "kind"}}::text[] IS NULL OR kind = ANY({{arg "kind"}}::text[]))
        AND scheduled_at <= coalesce({{arg "now"}}::timestamptz, now())
{{- if .PriorityRange}}
        AND /* TEMPLATE: schema */river_bpmn_priority(metadata) BETWEEN {{arg "priority_min"}}::bigint AND {{arg "priority_max"}}::bigint
{{- end}}
{{- if .DeploymentAware}}
        -- Registered deployments, plus every job with no deployment.
        AND (/* TEMPLATE: schema */river_bpmn_deployment(metadata) IS NULL
            OR /* TEMPLATE: schema */river_bpmn_deployment(metadata) = ANY({{arg "deployments"}}::text[]))
{{- end}}
    ORDER BY
{{- if .ByPriority}}
        /* TEMPLATE: schema */river_bpmn_priority(metadata) DESC,
{{- end}}
{{- if .TimersFirst}}
        /* TEMPLATE: schema */river_bpmn_is_timer(metadata) DESC,
{{- end}}
{{- if .ByDueDate}}
        scheduled_at ASC,
{{- end}}
        priority ASC,
        scheduled_at ASC,
        id ASC
    LIMIT {{arg "max_to_lock"}}::integer
    FOR UPDATE
    SKIP LOCKED
)
UPDATE
    /* TEMPLATE: schema */river_job
SET
    state = 'running',
    attempt = river_job.attempt + 1,
    attempted_at = coalesce({{arg "now"}}::timestamptz, now()),
    attempted_by = array_append(
        CASE WHEN array_length(river_job.attempted_by, 1) >= {{arg "max_attempted_by"}}::int
        -- +2 instead of +1 because Postgres array indexing starts at 1, not 0.
        THEN river_job.attempted_by[array_length(river_job.attempted_by, 1) + 2 - {{arg "max_attempted_by"}}::int:]
        ELSE river_job.attempted_by
        END,
        {{arg "client_id"}}::text
    )
FROM
    locked_jobs
WHERE
    river_job.id = locked_jobs.id
RETURNING
    /* COLUMNS: river_job */;
