-- OperationRelease: owner $2 gives operation $1 up (its process stops): its
-- heartbeat goes back to the epoch, so that the next takeover resumes it
-- at once.
UPDATE /* TEMPLATE: schema */river_bpmn_bulk_operation
SET heartbeat_at = 'epoch'
WHERE id = $1::bigint AND owner = $2::text AND state = 'running';
