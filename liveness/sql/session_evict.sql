-- SessionEvict: terminate the backend of one of this client's earlier
-- sessions if it still holds that session's lock: the client fenced it
-- (it could not reach it in time) and has moved on to a new session, so the
-- old one must die for its jobs to be given back. $1 pid, $2 lock class,
-- $3 lock object.
SELECT
    pg_terminate_backend(pid)
FROM
    pg_locks
WHERE
    locktype = 'advisory'
    AND objsubid = 2
    AND granted
    AND pid = $1::integer
    AND classid = $2::integer::oid
    AND objid = $3::bigint::oid;
