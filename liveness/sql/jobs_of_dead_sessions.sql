-- JobsOfDeadSessions: which of the running jobs $1 were fetched by a
-- session that is dead (its backend no longer holds its lock, or a client
-- recorded it dead): the takeover gives them back without using an
-- attempt, so River's rescuer must leave them alone.
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
    job.id
FROM
    /* TEMPLATE: schema */river_job AS job
WHERE
    job.id = any($1::bigint[])
    AND job.state = 'running'
    AND EXISTS (
        SELECT 1
        FROM /* TEMPLATE: schema */river_bpmn_client_session AS s
        WHERE
            s.client_id = job.attempted_by[array_upper(job.attempted_by, 1)]
            AND job.attempted_at >= s.started_at
            AND job.attempted_at < coalesce(s.superseded_at, 'infinity')
            AND (
                s.dead_since IS NOT NULL
                OR NOT EXISTS (
                    SELECT 1 FROM held
                    WHERE held.pid = s.pid AND held.classid = s.lock_class AND held.objid = s.lock_obj
                )
            )
    );
