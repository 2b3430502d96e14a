-- The exclusive mechanism in force (no row: exclusive.LockTable, which every
-- client used before the mechanism was recorded).
SELECT value
FROM /* TEMPLATE: schema */river_bpmn_setting
WHERE name = 'exclusive_mechanism'
