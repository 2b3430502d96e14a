-- Subscriptions: the named subscriptions (all, or the one named $1), by
-- name, each with its saved cursor, when it was last saved, and how many
-- events the outbox holds after it (readable now: committed). An outbox row
-- holds the events id .. id + event_count - 1 of one statement (migration
-- riverbpmn/017); the row holding the cursor counts only its events after
-- it. The count reads the outbox rows after the cursor over its primary key
-- (txid, id): its cost grows with how far behind the subscription is,
-- bounded by the retention.
SELECT
    s.name,
    s.txid::text,
    s.id,
    s.updated_at,
    coalesce((
        SELECT sum(CASE
            WHEN e.txid > s.txid THEN e.event_count
            ELSE e.id + e.event_count - greatest(e.id, s.id + 1)
        END)
        FROM /* TEMPLATE: schema */river_bpmn_event e
        WHERE e.txid >= s.txid
            AND (e.txid > s.txid OR e.id + e.event_count - 1 > s.id)
    ), 0)::bigint AS behind
FROM /* TEMPLATE: schema */river_bpmn_event_subscription s
WHERE $1::text IS NULL OR s.name = $1::text
ORDER BY s.name;
