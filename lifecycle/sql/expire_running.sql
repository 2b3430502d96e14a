-- LifecycleExpireRunning: end job $1, fetched after its expiration date
-- passed (the client's clock decided), as discarded without running it (the work path's guard). River's
-- completer then leaves it alone (it only changes running jobs).
UPDATE /* TEMPLATE: schema */river_job
SET
    state = 'discarded',
    finalized_at = now(),
    errors = array_append(errors, jsonb_build_object(
        'at', now(),
        'attempt', attempt,
        'error', $2::text,
        'trace', ''
    ))
WHERE id = $1::bigint
    AND state = 'running';
