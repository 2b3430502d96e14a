-- IncidentsRetryBatch: one batch of a bulk retry. Takes the next $2 open
-- incidents after incident id $1 and up to incident id $3 (the newest
-- incident when the bulk retry began: incidents opened later, say by a job
-- this retry revived that failed again, are not its business) that the
-- filter (sql/incidents_filter.sql, from $5) keeps, in incident id order
-- (river_bpmn_incident_open); gives each one's job, if it is still
-- discarded, $4 retries: available now, max_attempts its attempt + $4 (as
-- Engine.SetJobRetries does). The incident trigger
-- (migration 004) resolves the incident in the same statement.
--
-- Idempotent: a job that is no longer discarded is left alone, so a batch
-- that runs twice (a bulk retry interrupted and started again) revives
-- each job once. Rows are locked in id order and for this statement's
-- transaction only. Returns the batch's last incident id (the next
-- cursor; NULL when there was none), how many incidents it took and how
-- many jobs it revived.
WITH batch AS (
    SELECT
        id, job_id
    FROM
        /* TEMPLATE: schema */river_bpmn_incident
    WHERE
        resolved_at IS NULL
        AND id > $1::bigint
        AND id <= $3::bigint
        AND /* FILTER */
    ORDER BY
        id
    LIMIT $2::integer
), locked AS (
    SELECT
        river_job.id
    FROM
        /* TEMPLATE: schema */river_job
    WHERE
        river_job.id IN (SELECT job_id FROM batch)
        AND river_job.state = 'discarded'
    ORDER BY
        river_job.id
    FOR UPDATE
), revived AS (
    UPDATE
        /* TEMPLATE: schema */river_job
    SET
        max_attempts = least(river_job.attempt + $4::integer, 32767),
        state = 'available',
        scheduled_at = now(),
        finalized_at = NULL,
        metadata = CASE
            WHEN jsonb_typeof(river_job.metadata) = 'object' THEN river_job.metadata - 'cancel_attempted_at'
            ELSE river_job.metadata
        END
    FROM
        locked
    WHERE
        river_job.id = locked.id
        AND river_job.state = 'discarded'
    RETURNING
        river_job.id
)
SELECT
    (SELECT max(id) FROM batch),
    (SELECT count(*) FROM batch),
    (SELECT count(*) FROM revived);
