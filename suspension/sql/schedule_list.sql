-- SuspensionScheduleList: changes not yet applied, in due order.
SELECT id, target_type, target_id, suspend, include_jobs, due_at, last_error
FROM /* TEMPLATE: schema */river_bpmn_suspension_schedule
WHERE applied_at IS NULL
ORDER BY due_at, id
LIMIT $1::integer;
