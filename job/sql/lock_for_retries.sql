-- LockForRetries: lock job $1 for SetRetries and return what decides
-- the update. The row lock keeps the fetch query (FOR UPDATE SKIP LOCKED),
-- River's completer and other management calls off the job until commit.
SELECT
    state::text,
    attempt,
    max_attempts
FROM
    /* TEMPLATE: schema */river_job
WHERE
    id = $1::bigint
FOR UPDATE;
