-- SuspensionScheduleGet: scheduled change $1, locked so that two manual
-- applications of it do not run at once, and when it was applied (NULL: not
-- yet).
SELECT target_type, target_id, suspend, include_jobs, due_at, applied_at
FROM /* TEMPLATE: schema */river_bpmn_suspension_schedule
WHERE id = $1::bigint
FOR UPDATE;
