-- SessionObserve: the ping of a live client, and the leader's look at
-- sessions. It records when a session was first seen dead (its backend no
-- longer holds its advisory lock, or holds it but has been idle for longer
-- than $3, the stall bound: its client stopped pinging while its connection
-- stayed up; such a backend is terminated, so that the frozen client finds
-- its connection closed when it runs again), and resigns River's leadership on behalf
-- of a leader whose liveness sessions are all dead, with River's own
-- "resigned" notification (what River's leader sends when it steps down), so
-- that the other clients elect a new one at once rather than after the
-- leader's term runs out. Returns how many sessions it found dead, how many
-- leaders it resigned, whether session $2 (the pinging client's own; 0 for
-- none) is still alive for the others, and the backend the statement ran on
-- (a client checks that it is its session's: a transaction-mode pooler
-- would run it elsewhere).
--
-- $1 schema for River's notification channel (empty = current_schema()).
-- $2 the pinging client's session id, 0 for none.
-- $3 the stall bound (Config.StallAfter).
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
),
-- Backends idle for longer than the stall bound. state and state_change
-- are visible for backends of the same role (or with pg_read_all_stats);
-- for others they read NULL, and such a session is judged by its lock only.
stalled AS MATERIALIZED (
    SELECT
        pid
    FROM
        pg_stat_activity
    WHERE
        datid = (SELECT oid FROM pg_database WHERE datname = current_database())
        AND state = 'idle'
        AND state_change < now() - $3::interval
),
session AS MATERIALIZED (
    SELECT
        s.id,
        s.client_id,
        s.pid,
        s.dead_since,
        EXISTS (
            SELECT 1 FROM held
            WHERE held.pid = s.pid AND held.classid = s.lock_class AND held.objid = s.lock_obj
        ) AS holds,
        EXISTS (
            SELECT 1 FROM held
            WHERE held.pid = s.pid AND held.classid = s.lock_class AND held.objid = s.lock_obj
        ) AND NOT EXISTS (SELECT 1 FROM stalled WHERE stalled.pid = s.pid) AS alive
    FROM
        /* TEMPLATE: schema */river_bpmn_client_session AS s
),
-- Rows are locked with SKIP LOCKED: a ping never waits for another
-- client's ping, a takeover or River's elector (so pings never deadlock);
-- what it skips, the next ping does.
dead AS (
    UPDATE /* TEMPLATE: schema */river_bpmn_client_session AS s
    SET dead_since = now()
    WHERE s.id IN (
        SELECT locked.id
        FROM /* TEMPLATE: schema */river_bpmn_client_session AS locked
        WHERE locked.id IN (SELECT id FROM session WHERE NOT alive AND dead_since IS NULL)
        FOR UPDATE SKIP LOCKED
    )
        AND s.dead_since IS NULL
    RETURNING s.id
),
-- The backend of a session found dead while still holding its lock (a
-- stalled client) is ended: its lock goes, and so does its connection.
ended AS (
    SELECT pg_terminate_backend(session.pid)
    FROM session
    WHERE session.holds AND session.id IN (SELECT id FROM dead)
),
resigned AS (
    DELETE FROM /* TEMPLATE: schema */river_leader AS leader
    WHERE leader.leader_id IN (
        SELECT locked.leader_id
        FROM /* TEMPLATE: schema */river_leader AS locked
        WHERE locked.leader_id IN (SELECT client_id FROM session)
            AND NOT EXISTS (
                SELECT 1 FROM session
                WHERE session.client_id = locked.leader_id AND session.alive
            )
        FOR UPDATE SKIP LOCKED
    )
    RETURNING leader.leader_id
),
notified AS (
    SELECT pg_notify(
        concat(coalesce(nullif($1::text, ''), current_schema()), '.river_leadership'),
        json_build_object('leader_id', resigned.leader_id, 'action', 'resigned')::text
    )
    FROM resigned
)
SELECT
    (SELECT count(*) FROM dead) AS dead,
    (SELECT count(*) FROM notified) AS resigned,
    (SELECT count(*) FROM ended) AS ended,
    coalesce((SELECT alive AND dead_since IS NULL FROM session WHERE id = $2::bigint), false) AS self_alive,
    pg_backend_pid() AS backend;
