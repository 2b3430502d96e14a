-- PruneCount: the events Prune with the same $1 would delete (those of the
-- outbox rows before the first row written at or after $1), for the
-- console's confirmation. Reads those rows through the primary key.
WITH boundary AS (
    SELECT txid, id
    FROM /* TEMPLATE: schema */river_bpmn_event
    WHERE created_at >= $1::timestamptz
    ORDER BY txid, id
    LIMIT 1
)
SELECT coalesce(sum(event_count), 0)::bigint
FROM /* TEMPLATE: schema */river_bpmn_event
WHERE NOT EXISTS (SELECT 1 FROM boundary)
    OR (txid, id) < (SELECT txid, id FROM boundary);
