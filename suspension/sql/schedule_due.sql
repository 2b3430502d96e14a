-- SuspensionScheduleDue: the changes due now (up to $1), in due order, and
-- when the next one not yet due is due (NULL when none).
SELECT id, target_type, target_id, suspend, include_jobs, due_at,
    (SELECT min(due_at) FROM /* TEMPLATE: schema */river_bpmn_suspension_schedule
     WHERE applied_at IS NULL AND due_at > now()) AS next_due_at
FROM /* TEMPLATE: schema */river_bpmn_suspension_schedule
WHERE applied_at IS NULL AND due_at <= now()
ORDER BY due_at, id
LIMIT $1::integer;
