-- SessionOpen: register a liveness session of River client $1 on this
-- connection, holding the session-level advisory lock ($2, the session's id):
-- the lock is taken before the row commits, so a row anyone sees names a lock
-- that was held. The client's earlier sessions are superseded from now on:
-- jobs it fetches from here belong to the new one.
WITH next AS MATERIALIZED (
    SELECT nextval(pg_get_serial_sequence('/* TEMPLATE: schema */river_bpmn_client_session', 'id')) % 2147483647 + 1 AS id
),
locked AS MATERIALIZED (
    SELECT next.id, pg_advisory_lock($2::integer, next.id::integer) FROM next
),
superseded AS (
    UPDATE /* TEMPLATE: schema */river_bpmn_client_session
    SET superseded_at = now()
    WHERE client_id = $1::text
        AND superseded_at IS NULL
)
INSERT INTO /* TEMPLATE: schema */river_bpmn_client_session
    (id, client_id, pid, lock_class, lock_obj)
SELECT
    locked.id, $1::text, pg_backend_pid(), $2::integer::oid, locked.id::oid
FROM
    locked
RETURNING
    id, pid;
