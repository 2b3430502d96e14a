-- The exclusive mechanism recorded by an earlier release (no row: the lock
-- table, the one mechanism).
SELECT value
FROM /* TEMPLATE: schema */river_bpmn_setting
WHERE name = 'exclusive_mechanism'
