-- ExclusiveDeleteLocks: delete the exclusive locks with the given tokens
-- ($1 bigint[]). The condition is on the row itself, so a lock taken over
-- since its token was read (a new token) is left alone.
DELETE FROM
    /* TEMPLATE: schema */river_bpmn_exclusive_lock
WHERE
    token = ANY($1::bigint[])
RETURNING
    token;
