-- SessionsList: every liveness session, oldest first, and whether its
-- backend still holds its lock (at most $1).
WITH held AS MATERIALIZED (
    SELECT
        pid, classid, objid
    FROM
        pg_locks
    WHERE
        locktype = 'advisory'
        AND objsubid = 2
        AND granted
        AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
)
SELECT
    s.id, s.client_id, s.pid, s.started_at, s.superseded_at, s.dead_since,
    EXISTS (
        SELECT 1 FROM held
        WHERE held.pid = s.pid AND held.classid = s.lock_class AND held.objid = s.lock_obj
    ) AS alive
FROM
    /* TEMPLATE: schema */river_bpmn_client_session AS s
ORDER BY
    s.id
LIMIT $1::integer;
