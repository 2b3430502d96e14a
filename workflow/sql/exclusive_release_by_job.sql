-- ExclusiveReleaseByJob: give back whatever key job $1 holds for attempt $2,
-- for a job whose key cannot be computed from its job context (someone
-- edited the row). Rare, so a scan of the lock table is fine. Commits
-- asynchronously, as sql/exclusive_release.sql does.
WITH async_commit AS MATERIALIZED (
    SELECT set_config('synchronous_commit', 'off', true)
)
UPDATE
    /* TEMPLATE: schema */river_bpmn_exclusive_lock AS lock
SET
    job_id = NULL,
    attempt = NULL,
    released_at = now()
FROM
    async_commit
WHERE
    lock.job_id = $1::bigint
    AND lock.attempt = $2::smallint;
