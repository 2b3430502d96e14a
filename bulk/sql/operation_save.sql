-- OperationSave: saves the progress $3 of operation $1 and refreshes its
-- heartbeat, while $2 still owns it and it runs. No row: another process
-- took it over (or it ended).
UPDATE /* TEMPLATE: schema */river_bpmn_bulk_operation
SET progress = coalesce($3::jsonb, progress), heartbeat_at = now()
WHERE id = $1::bigint AND owner = $2::text AND state = 'running'
RETURNING id;
