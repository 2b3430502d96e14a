-- ReadBackward: events before the cursor ($1 txid, $2 event id; the caller
-- passes the largest cursor for "from the newest"), newest first, at most
-- $3, looking at no more than the outbox rows that hold the $4 events
-- before the cursor (whole rows: up to 1,023 events more). The events of one
-- process instance are read_backward_instance.sql's.
--
-- Unlike read.sql there is no horizon: a page shows what is committed now
-- (a subscriber, which must never skip an event, waits for older
-- transactions; a page need not).
--
-- Rows are walked backwards on the primary key (txid, id) from the cursor,
-- counting the events each holds before the cursor (the row holding the
-- cursor, only those before it), and stop once $4 events are counted. Only
-- those rows are unpacked. Every result row also carries the oldest row
-- looked at (where the next, older page starts) and whether any row is
-- older than it. No row at all: nothing before the cursor.
WITH scanned AS (
    SELECT r.*
    FROM (
        SELECT
            e.*,
            sum(b.events) OVER (ORDER BY e.txid DESC, e.id DESC ROWS UNBOUNDED PRECEDING) - b.events AS events_after
        FROM /* TEMPLATE: schema */river_bpmn_event e
        -- The row's events before the cursor: all, but in the cursor's row.
        CROSS JOIN LATERAL (
            SELECT CASE WHEN e.txid = $1::text::xid8 AND $2::bigint - e.id < e.event_count
                THEN $2::bigint - e.id ELSE e.event_count END AS events
        ) b
        WHERE (e.txid, e.id) < ($1::text::xid8, $2::bigint)
        ORDER BY e.txid DESC, e.id DESC
        LIMIT $4::integer
    ) r
    WHERE r.events_after < $4::integer
),
oldest AS (
    SELECT s.txid, s.id,
        EXISTS (
            SELECT 1
            FROM /* TEMPLATE: schema */river_bpmn_event o
            WHERE (o.txid, o.id) < (s.txid, s.id)
        ) AS more
    FROM scanned s
    ORDER BY s.txid, s.id
    LIMIT 1
)
SELECT o.txid::text, o.id, o.more,
    m.txid::text, m.event_id, m.status, m.job_id, m.kind, m.queue, m.attempt, m.retries_left, m.error,
    m.process_instance_id, m.job_context, m.at, m.created_at
FROM oldest o
LEFT JOIN LATERAL (
    SELECT
        e.txid, e.id + u.ord - 1 AS event_id, u.status, u.job_id, u.kind, u.queue, u.attempt, u.retries_left, u.error,
        CASE WHEN jsonb_typeof(c.job_context -> 'process_instance_id') = 'string'
            THEN c.job_context ->> 'process_instance_id' END AS process_instance_id,
        c.job_context, u.at, e.created_at
    FROM scanned e
    CROSS JOIN LATERAL unnest(e.status, e.job_id, e.kind, e.queue, e.attempt, e.retries_left, e.error, e.job_context, e.at)
        WITH ORDINALITY AS u (status, job_id, kind, queue, attempt, retries_left, error, job_context, at, ord)
    -- The job context in its object form, as in read.sql.
    CROSS JOIN LATERAL (
        SELECT CASE WHEN jsonb_typeof(x.ctx) = 'object' THEN x.ctx END AS job_context
        FROM (SELECT /* TEMPLATE: schema */river_bpmn_ctx_object(u.job_context) AS ctx) x
    ) c
    WHERE (e.txid, e.id + u.ord - 1) < ($1::text::xid8, $2::bigint)
    ORDER BY e.txid DESC, e.id DESC, u.ord DESC
    LIMIT $3::integer
) m ON true
ORDER BY m.txid DESC, m.event_id DESC;
