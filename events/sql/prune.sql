-- Prune: deletes at most $2 events, in cursor order, that come before the
-- first event written at or after $1. Scans only the rows it deletes (and
-- the first one it keeps), through the primary key.
WITH boundary AS (
    SELECT txid, id
    FROM /* TEMPLATE: schema */river_bpmn_event
    WHERE created_at >= $1::timestamptz
    ORDER BY txid, id
    LIMIT 1
),
doomed AS (
    SELECT txid, id
    FROM /* TEMPLATE: schema */river_bpmn_event
    WHERE NOT EXISTS (SELECT 1 FROM boundary)
        OR (txid, id) < (SELECT txid, id FROM boundary)
    ORDER BY txid, id
    LIMIT $2::integer
)
DELETE FROM /* TEMPLATE: schema */river_bpmn_event e
USING doomed d
WHERE e.txid = d.txid AND e.id = d.id;
