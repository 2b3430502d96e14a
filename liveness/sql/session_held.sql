-- SessionHeld: the backend this statement runs on, and whether it holds
-- the session lock ($1 lock class, $2 session id): run on a session's
-- connection to check that it is one backend that keeps its lock.
SELECT
    pg_backend_pid(),
    EXISTS (
        SELECT 1
        FROM pg_locks
        WHERE
            locktype = 'advisory'
            AND objsubid = 2
            AND granted
            AND pid = pg_backend_pid()
            AND classid = $1::integer::oid
            AND objid = $2::bigint::oid
    );
