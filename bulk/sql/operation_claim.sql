-- OperationClaim: owner $1 takes over the running operations whose
-- heartbeat is older than $2 (their process died or gave them up), at most
-- $3, oldest first. SKIP LOCKED: two consoles taking over at once share
-- them out, each operation to one.
WITH stale AS (
    SELECT id
    FROM /* TEMPLATE: schema */river_bpmn_bulk_operation
    WHERE state = 'running' AND heartbeat_at < now() - $2::interval
    ORDER BY id
    LIMIT $3::integer
    FOR UPDATE SKIP LOCKED
)
UPDATE /* TEMPLATE: schema */river_bpmn_bulk_operation o
SET owner = $1::text, heartbeat_at = now(), runs = o.runs + 1
FROM stale
WHERE o.id = stale.id
RETURNING /* COLUMNS */;
