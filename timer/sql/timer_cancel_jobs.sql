-- Cancels the timer's occurrences that have not started, as River's own
-- JobCancel does for a job that is not running.
UPDATE /* TEMPLATE: schema */river_job
SET state = 'cancelled',
    finalized_at = $2,
    metadata = jsonb_set(metadata, '{cancel_attempted_at}', to_jsonb($2::timestamptz), true)
WHERE id = ANY($1::bigint[])
    AND state IN ('available', 'scheduled', 'retryable', 'pending')
RETURNING id;
