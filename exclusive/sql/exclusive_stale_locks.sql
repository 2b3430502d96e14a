-- ExclusiveStaleLocks: the tokens of the exclusive locks a sweep may delete,
-- taken or given back more than $1 ago (kept until then so that the next job
-- of the key takes it with an in-place update): stale ones (the job no
-- longer runs the attempt that took the key; staleness judged in one
-- snapshot is permanent, exclusive/doc.go point 3; an engine leaves the lock
-- of a key whose work ended stale rather than writing it free,
-- exclusive/ended.go), and free ones.
SELECT
    lock.token
FROM
    /* TEMPLATE: schema */river_bpmn_exclusive_lock AS lock
WHERE
    (lock.job_id IS NOT NULL AND lock.locked_at < now() - $1::interval AND NOT /* LOCK_IS_LIVE: lock */)
    OR (lock.job_id IS NULL AND lock.released_at < now() - $1::interval);
