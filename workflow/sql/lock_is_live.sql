-- Whether the exclusive lock row named LOCK_ALIAS holds its key: it names a
-- job, and that job still runs the attempt that took the key. A scalar
-- subquery on purpose: it always looks the job up by primary key. Written as
-- a join, the planner may instead walk every running job through River's
-- fetch index, whose running part fills up with dead entries between vacuums
-- (seen: 18 ms per fetch).
coalesce((
    SELECT
        holder.state = 'running' AND holder.attempt = LOCK_ALIAS.attempt
    FROM
        /* TEMPLATE: schema */river_job AS holder
    WHERE
        holder.id = LOCK_ALIAS.job_id
), false)
