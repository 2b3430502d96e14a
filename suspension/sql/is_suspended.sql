-- SuspensionIsSuspended: whether target ($1 type, $2 id) is suspended, and
-- since when.
SELECT suspended_at
FROM /* TEMPLATE: schema */river_bpmn_suspension
WHERE target_type = $1::text AND target_id = $2::text;
