-- Records $1 as the exclusive mechanism in force, replacing any.
INSERT INTO /* TEMPLATE: schema */river_bpmn_setting (name, value, recorded_by)
VALUES ('exclusive_mechanism', $1, $2)
ON CONFLICT (name) DO UPDATE SET value = excluded.value, recorded_at = now(), recorded_by = excluded.recorded_by
