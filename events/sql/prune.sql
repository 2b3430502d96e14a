-- Prune: deletes at most $2 outbox rows (each the events of one statement,
-- migration riverbpmn/017), in cursor order, that come before the first row
-- written at or after $1. Scans only the rows it deletes (and the first one
-- it keeps), through the primary key. Records the cursor of the last event
-- it deleted in river_bpmn_event_pruned (migration riverbpmn/019), in this
-- same statement, so a reader sees the deletion and the mark together.
-- Returns the rows and events deleted.
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
),
deleted AS (
    DELETE FROM /* TEMPLATE: schema */river_bpmn_event e
    USING doomed d
    WHERE e.txid = d.txid AND e.id = d.id
    RETURNING e.txid, e.id + e.event_count - 1 AS last_id, e.event_count AS events
),
mark AS (
    INSERT INTO /* TEMPLATE: schema */river_bpmn_event_pruned AS p (txid, id, pruned_at)
    SELECT txid, last_id, now()
    FROM deleted
    ORDER BY txid DESC, last_id DESC
    LIMIT 1
    ON CONFLICT (singleton) DO UPDATE
    SET txid = excluded.txid, id = excluded.id, pruned_at = excluded.pruned_at
    WHERE (p.txid, p.id) < (excluded.txid, excluded.id)
)
SELECT count(*), coalesce(sum(events), 0)::bigint
FROM deleted;
