-- Read: the next events after the cursor ($1 txid, $2 id), at most $3, only
-- from transactions that cannot write another event before the cursor's
-- position: the horizon is the oldest transaction that was running when
-- this statement's snapshot was taken (it may still commit events), not
-- counting transactions known to run in another database (they cannot write
-- to this table; an unknown one counts). See migration riverbpmn/009 for why
-- that makes the cursor safe. Served by the primary key (txid, id).
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
    txid::text, id, status, job_id, kind, queue, attempt, retries_left, error,
    process_instance_id, job_context, at, created_at
FROM /* TEMPLATE: schema */river_bpmn_event
WHERE (txid, id) > ($1::text::xid8, $2::bigint)
    AND txid < (SELECT h FROM horizon)
ORDER BY txid, id
LIMIT $3::integer;
