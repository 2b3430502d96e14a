-- ExclusiveDeleteLocks: delete the exclusive locks with the given tokens
-- ($1 bigint[]) if they still hold no live key: stale (token unchanged, so
-- the same acquisition, which stays stale) or free. The condition is on the
-- row itself, so a lock taken since its token was read (a new token) is left
-- alone.
DELETE FROM
    /* TEMPLATE: schema */river_bpmn_exclusive_lock
WHERE
    token = ANY($1::bigint[])
RETURNING
    token;
