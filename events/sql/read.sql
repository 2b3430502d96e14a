-- Read: the next events after the cursor ($1 txid, $2 event id), at most $3,
-- only from transactions that cannot write another event before the
-- cursor's position: the horizon is the oldest transaction that was running
-- when this statement's snapshot was taken (it may still commit events), not
-- counting transactions known to run in another database (they cannot write
-- to this table; an unknown one counts). See migration riverbpmn/009 for why
-- that makes the cursor safe.
--
-- A row holds the events of one statement as parallel arrays (migration
-- riverbpmn/017); its id is its first event's id, and event i (from 1) has
-- id + i - 1, with at most 1,024 events a row (event_count). The rows that
-- hold an event after the cursor are found through the primary key (txid,
-- id): those after (txid, event id - 1024) whose last event is after the
-- cursor. Only as many of them as $3 events need are unpacked (the rows
-- before a row hold fewer than $3 events, plus at most 1,023 of the first
-- row that precede the cursor), so a read costs about $3 events whatever
-- the size of the rows, and whatever plan sorts the unpacked events.
WITH snap AS (
    SELECT pg_current_snapshot() AS s
),
horizon AS (
    SELECT coalesce(min(x), (SELECT pg_snapshot_xmax(s) FROM snap)) AS h
    FROM snap, pg_snapshot_xip(snap.s) AS x
    WHERE NOT EXISTS (
        SELECT 1
        FROM pg_stat_activity a
        WHERE a.backend_xid = xid(x)
            AND a.datid IS NOT NULL
            AND a.datid <> (SELECT oid FROM pg_database WHERE datname = current_database())
    )
)
SELECT
    e.txid::text, e.id + u.ord - 1, u.status, u.job_id, u.kind, u.queue, u.attempt, u.retries_left, u.error,
    CASE WHEN jsonb_typeof(c.job_context -> 'process_instance_id') = 'string'
        THEN c.job_context ->> 'process_instance_id' END,
    c.job_context, u.at, e.created_at
FROM (
    SELECT r.*
    FROM (
        SELECT
            e.*,
            sum(e.event_count) OVER (ORDER BY e.txid, e.id ROWS UNBOUNDED PRECEDING) - e.event_count AS events_before
        FROM /* TEMPLATE: schema */river_bpmn_event e
        WHERE (e.txid, e.id) > ($1::text::xid8, $2::bigint - 1024)
            AND (e.txid, e.id + e.event_count - 1) > ($1::text::xid8, $2::bigint)
            AND e.txid < (SELECT h FROM horizon)
        ORDER BY e.txid, e.id
        LIMIT $3::integer
    ) r
    WHERE r.events_before < $3::integer + 1023
) e
CROSS JOIN LATERAL unnest(e.status, e.job_id, e.kind, e.queue, e.attempt, e.retries_left, e.error, e.job_context, e.at)
    WITH ORDINALITY AS u (status, job_id, kind, queue, attempt, retries_left, error, job_context, at, ord)
-- The job context: the job's metadata -> 'bpmn' as the trigger stored it,
-- in the object form whichever form the job stored (river_bpmn_ctx_object,
-- migration riverbpmn/016); any other JSON type gives none. The event's
-- process instance is the object's process_instance_id (a string).
CROSS JOIN LATERAL (
    SELECT CASE WHEN jsonb_typeof(o.ctx) = 'object' THEN o.ctx END AS job_context
    FROM (SELECT /* TEMPLATE: schema */river_bpmn_ctx_object(u.job_context) AS ctx) o
) c
WHERE (e.txid, e.id + u.ord - 1) > ($1::text::xid8, $2::bigint)
ORDER BY e.txid, e.id, u.ord
LIMIT $3::integer;
