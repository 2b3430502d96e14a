-- JobExecuteRevert: give job $1 back its due date $2 when Engine.ExecuteJob
-- gave up before any client started it: only while it is still available
-- and unstarted since (attempted_at $3), so a run that began meanwhile is
-- left alone (the row lock orders this against a fetch).
UPDATE /* TEMPLATE: schema */river_job
SET scheduled_at = $2::timestamptz,
    state = CASE WHEN $4::text = 'retryable' THEN 'retryable'
        WHEN $2::timestamptz > now() THEN 'scheduled'
        ELSE 'available' END::/* TEMPLATE: schema */river_job_state,
    metadata = metadata - 'bpmn_executed_due'
WHERE id = $1
    AND state = 'available'
    AND attempted_at IS NOT DISTINCT FROM $3::timestamptz;
