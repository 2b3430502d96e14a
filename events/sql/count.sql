-- Count: how many events the outbox holds, of process instance $1 (NULL:
-- every instance), summing the event counts of at most $2 outbox rows (the
-- caller says "at least" when that many were read). An instance's rows are
-- found through its index (migration riverbpmn/027) and only its events in
-- them are counted.
SELECT
    coalesce(sum(CASE WHEN $1::text IS NULL THEN r.event_count ELSE (
        SELECT count(*)
        FROM unnest(r.job_context) AS c (ctx)
        WHERE /* TEMPLATE: schema */river_bpmn_event_instance(c.ctx) = $1::text
    ) END), 0),
    count(*)
FROM (
    SELECT e.event_count, CASE WHEN $1::text IS NOT NULL THEN e.job_context END AS job_context
    FROM /* TEMPLATE: schema */river_bpmn_event e
    WHERE $1::text IS NULL OR /* TEMPLATE: schema */river_bpmn_event_instances(e.job_context) @> ARRAY[$1::text]
    LIMIT $2::integer
) r;
