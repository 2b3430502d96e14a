-- SetRetries: give locked job $1 max_attempts $2 and state $3. Reviving a
-- discarded job makes it available now, as River's JobRetry does; discarding
-- one (0 retries) finalises it. The incident triggers of migration
-- riverbpmn/004 open or resolve its failedJob incident.
UPDATE
    /* TEMPLATE: schema */river_job
SET
    max_attempts = $2::smallint,
    state = $3::text::/* TEMPLATE: schema */river_job_state,
    scheduled_at = CASE
        WHEN state = 'discarded' AND $3::text <> 'discarded' THEN now()
        ELSE scheduled_at
    END,
    finalized_at = CASE
        WHEN $3::text = 'discarded' THEN coalesce(finalized_at, now())
        ELSE NULL
    END,
    metadata = CASE
        -- Only an object has keys to remove (a raw row may hold any JSON).
        WHEN state = 'discarded' AND $3::text <> 'discarded' AND jsonb_typeof(metadata) = 'object'
            THEN metadata - 'cancel_attempted_at'
        ELSE metadata
    END
WHERE
    id = $1::bigint;
