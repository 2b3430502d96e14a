-- SessionTakeover: give back the running jobs of dead session $1 (River
-- client $2, fetched between $3 and $4): each goes back to available with
-- its attempt given back (River's attempt counter, as a snooze does: the dead
-- run used up no execution, as a Camunda lock expiry leaves the retries
-- unchanged), and an error entry $5 naming the dead client. Its scheduled_at
-- is kept: it was due when it was fetched, so it runs again at once, from
-- its place in River's order (first of its exclusive key), not behind every
-- job queued since. Their
-- exclusive keys are freed (a key taken for a run of jobs when any job of
-- the run is given back: the run's other jobs have ended), their queues' producers woken with River's insert
-- notification ($6 schema for the channel), and the session deleted.
-- Returns the ids of the jobs given back.
WITH given AS (
    UPDATE /* TEMPLATE: schema */river_job
    SET
        state = 'available',
        attempt = greatest(river_job.attempt - 1, 0),
        errors = array_append(river_job.errors, jsonb_build_object(
            'at', now(),
            'attempt', river_job.attempt,
            'error', $5::text,
            'trace', ''
        ))
    WHERE
        river_job.state = 'running'
        AND river_job.attempted_by[array_upper(river_job.attempted_by, 1)] = $2::text
        AND river_job.attempted_at >= $3::timestamptz
        AND river_job.attempted_at < coalesce($4::timestamptz, 'infinity')
    RETURNING
        river_job.id, river_job.queue
),
freed AS (
    UPDATE /* TEMPLATE: schema */river_bpmn_exclusive_lock AS lock
    SET
        job_id = NULL,
        attempt = NULL,
        released_at = now()
    WHERE
        lock.job_id IN (SELECT id FROM given)
        -- The lock of a run (riverbpmn's Config.ExclusiveBatch) names all
        -- its jobs: its head may have ended while the rest of the run, given
        -- back here, waited or worked.
        OR lock.run_job_ids && ARRAY(SELECT id FROM given)
    RETURNING
        lock.key
),
woken AS (
    SELECT pg_notify(
        concat(coalesce(nullif($6::text, ''), current_schema()), '.river_insert'),
        json_build_object('queue', queue)::text
    )
    FROM (SELECT DISTINCT queue FROM given) AS queues
),
gone AS (
    DELETE FROM /* TEMPLATE: schema */river_bpmn_client_session
    WHERE id = $1::bigint
)
SELECT
    given.id,
    (SELECT count(*) FROM freed) AS freed,
    (SELECT count(*) FROM woken) AS woken
FROM
    given;
