-- Horizon: the cursor for "from now": every transaction below it had ended,
-- or runs in another database (as in read.sql).
WITH snap AS (
    SELECT pg_current_snapshot() AS s
)
SELECT coalesce(min(x), (SELECT pg_snapshot_xmax(s) FROM snap))::text
FROM snap, pg_snapshot_xip(snap.s) AS x
WHERE NOT EXISTS (
    SELECT 1
    FROM pg_stat_activity a
    WHERE a.backend_xid = xid(x)
        AND a.datid IS NOT NULL
        AND a.datid <> (SELECT oid FROM pg_database WHERE datname = current_database())
);
