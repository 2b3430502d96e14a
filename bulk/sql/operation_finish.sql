-- OperationFinish: ends operation $1 of owner $2 with progress $3, state $4
-- (finished or failed) and error $5.
UPDATE /* TEMPLATE: schema */river_bpmn_bulk_operation
SET progress = $3::jsonb, state = $4::text, error = $5::text, finished_at = now(), heartbeat_at = now()
WHERE id = $1::bigint AND owner = $2::text AND state = 'running'
RETURNING id;
