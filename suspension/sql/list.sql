-- SuspensionList: every suspended target, oldest first.
SELECT target_type, target_id, suspended_at
FROM /* TEMPLATE: schema */river_bpmn_suspension
ORDER BY suspended_at, target_type, target_id
LIMIT $1::integer;
