-- SessionObserve: the ping of a live client, and the leader's look at
-- sessions. It records when a session was first seen dead (its backend no
-- longer holds its advisory lock), and resigns River's leadership on behalf
-- of a leader whose liveness sessions are all dead, with River's own
-- "resigned" notification (what River's leader sends when it steps down), so
-- that the other clients elect a new one at once rather than after the
-- leader's term runs out. Returns how many sessions it found dead.
--
-- $1 schema for River's notification channel (empty = current_schema()).
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
session AS MATERIALIZED (
    SELECT
        s.id,
        s.client_id,
        s.dead_since,
        EXISTS (
            SELECT 1 FROM held
            WHERE held.pid = s.pid AND held.classid = s.lock_class AND held.objid = s.lock_obj
        ) AS alive
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
    (SELECT count(*) FROM notified) AS resigned;
