-- The exclusive scope in force, with when and by whom it was recorded (no
-- row when none is).
SELECT value, recorded_at, recorded_by
FROM /* TEMPLATE: schema */river_bpmn_setting
WHERE name = 'exclusive_scope'
