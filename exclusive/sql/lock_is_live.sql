-- Whether the exclusive lock row named LOCK_ALIAS holds its key: it names a
-- job, and that job still runs the attempt that took the key; or, for the
-- lock of a run (Config.ExclusiveBatch, migration riverbpmn/018: run_job_ids
-- set), any job of the run still runs the attempt the fetch moved it to. A
-- scalar subquery per job on purpose: it always looks the jobs up by primary
-- key.
-- Written as a join, the planner may instead walk every running job through
-- River's fetch index, whose running part fills up with dead entries between
-- vacuums (seen: 18 ms per fetch). A lock of one job (run_job_ids NULL, every
-- lock taken without batching) costs one probe, as before. A run's jobs are
-- probed one by one for the same reason: `holder.id = ANY(run_job_ids) AND
-- state = 'running'` let the planner AND a primary-key bitmap with a bitmap
-- of every running job from River's fetch index (seen in CI's plan test).
CASE WHEN LOCK_ALIAS.run_job_ids IS NULL OR LOCK_ALIAS.job_id IS NULL THEN coalesce((
    SELECT
        holder.state = 'running' AND holder.attempt = LOCK_ALIAS.attempt
    FROM
        /* TEMPLATE: schema */river_job AS holder
    WHERE
        holder.id = LOCK_ALIAS.job_id
), false)
ELSE EXISTS (
    SELECT
        1
    FROM
        unnest(LOCK_ALIAS.run_job_ids, LOCK_ALIAS.run_attempts) AS run (job_id, attempt)
    WHERE
        coalesce((
            SELECT
                holder.state = 'running' AND holder.attempt = run.attempt
            FROM
                /* TEMPLATE: schema */river_job AS holder
            WHERE
                holder.id = run.job_id
        ), false)
) END
