-- Records $1 as the exclusive scope in force unless one is recorded, and
-- returns it when it did (no row when a scope was recorded already, or is
-- being recorded by a concurrent transaction that has since committed).
INSERT INTO /* TEMPLATE: schema */river_bpmn_setting (name, value, recorded_by)
VALUES ('exclusive_scope', $1, $2)
ON CONFLICT (name) DO NOTHING
RETURNING value
