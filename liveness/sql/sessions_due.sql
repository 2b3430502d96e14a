-- SessionsDue: lock the dead sessions whose takeover is due: first seen dead
-- at least $1 ago. SKIP LOCKED, so two leaders (River's terms may overlap
-- for a moment) never take one session over twice.
SELECT
    id, client_id, started_at, superseded_at, dead_since
FROM
    /* TEMPLATE: schema */river_bpmn_client_session
WHERE
    dead_since <= now() - $1::interval
ORDER BY
    id
LIMIT 100
FOR UPDATE SKIP LOCKED;
