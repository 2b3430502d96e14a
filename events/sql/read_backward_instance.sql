-- ReadBackwardInstance: the events of process instance $4 before the cursor
-- ($1 txid, $2 event id; the caller passes the largest cursor for "from the
-- newest"), newest first, at most $3.
--
-- The outbox rows holding an event of the instance are found through the
-- GIN index over their instances (river_bpmn_event_instances, migration
-- riverbpmn/027), however far back they are; the newest $3 + 1 of those
-- before the cursor are unpacked (every row but the one holding the cursor
-- has an event of the instance before it, so they hold the $3 events the
-- page needs). The rows are materialized first so that the plan is the
-- index's whatever the statistics say (walking the primary key backward
-- would evaluate the function on every row it passes). As in
-- read_backward.sql there is no horizon.
WITH matching AS MATERIALIZED (
    SELECT e.txid, e.id
    FROM /* TEMPLATE: schema */river_bpmn_event e
    WHERE /* TEMPLATE: schema */river_bpmn_event_instances(e.job_context) @> ARRAY[$4::text]
        AND (e.txid, e.id) < ($1::text::xid8, $2::bigint)
),
newest AS (
    SELECT m.txid, m.id
    FROM matching m
    ORDER BY m.txid DESC, m.id DESC
    LIMIT $3::integer + 1
)
SELECT
    e.txid::text, e.id + u.ord - 1 AS event_id, u.status, u.job_id, u.kind, u.queue, u.attempt, u.retries_left, u.error,
    $4::text, c.job_context, u.at, e.created_at
FROM newest n
JOIN /* TEMPLATE: schema */river_bpmn_event e ON e.txid = n.txid AND e.id = n.id
CROSS JOIN LATERAL unnest(e.status, e.job_id, e.kind, e.queue, e.attempt, e.retries_left, e.error, e.job_context, e.at)
    WITH ORDINALITY AS u (status, job_id, kind, queue, attempt, retries_left, error, job_context, at, ord)
-- The job context in its object form, as in read.sql.
CROSS JOIN LATERAL (
    SELECT CASE WHEN jsonb_typeof(x.ctx) = 'object' THEN x.ctx END AS job_context
    FROM (SELECT /* TEMPLATE: schema */river_bpmn_ctx_object(u.job_context) AS ctx) x
) c
-- The row's other instances' events are left out (the instance read as the
-- index reads it, cheaper than the object form).
WHERE (e.txid, e.id + u.ord - 1) < ($1::text::xid8, $2::bigint)
    AND /* TEMPLATE: schema */river_bpmn_event_instance(u.job_context) = $4::text
ORDER BY e.txid DESC, event_id DESC
LIMIT $3::integer;
