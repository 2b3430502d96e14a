-- The fetch statement: lock up to max_to_lock available jobs of a queue and
-- move them to running. This file is a Go text/template, rendered once per
-- client from its fetch plan (Plan.Render; the parts are the options of its
-- acquisition) and the steps plugged in:
--
--   filters   each enabled filter (priority range, deployments) is AND-ed to
--             River's conditions;
--   order     the enabled order keys (priority, timers first, due date) come
--             first, River's priority, scheduled_at, id always last;
--   fair      the fair step (package fairness, fairness/sql/fetch_step.sql);
--   exclusive the exclusive step (package exclusive,
--             exclusive/sql/fetch_step.sql).
--
-- Every step ends as River's fetch does ("move_to_running" below) and reads
-- the queue's available jobs with "available_jobs".
--
-- With nothing enabled it is, clause for clause, River's own query
-- (riverpgxv5 v0.51.1, river_job.sql), so the client fetches exactly what
-- stock River fetches (TestFetchEquivalentToStockRiver). Every order has a
-- matching partial index (River's, or migration riverbpmn/003), so the scan
-- reads the first candidates off an index and never sorts the queue
-- (TestFetchPlansUseIndexes renders and EXPLAINs every combination).
{{- if and (not .Exclusive) .Fair}}
{{- /* Fair across tenants: package fairness, fairness/sql/fetch_step.sql. */}}
{{- template "fair_locked_jobs" .}}
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
{{- template "move_to_running"}}
FROM
    locked_jobs
WHERE
    river_job.id = locked_jobs.id
RETURNING
    /* COLUMNS: river_job */;
{{- else}}
{{- template "exclusive_step" .}}
{{- end}}
{{- define "move_to_running"}}
{{- /* River's move of the locked jobs to running, which every fetch ends
with (its FROM, WHERE and RETURNING follow). */}}
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
{{- end}}
{{- define "available_jobs"}}
{{- /* The river_job rows the client may fetch from its queue: River's
conditions over the row river_job, then the plan's filters. */}}
river_job.state = 'available'
AND river_job.queue = @queue::text
AND (@kind::text[] IS NULL OR river_job.kind = ANY(@kind::text[]))
AND river_job.scheduled_at <= coalesce(@now::timestamptz, now())
{{- range filters "river_job"}}
AND {{.}}
{{- end}}
{{- end}}
