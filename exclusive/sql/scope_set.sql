-- Records $1 as the exclusive scope in force, replacing any, and returns the
-- scope it replaced (NULL when none was recorded).
WITH previous AS (
    SELECT value FROM /* TEMPLATE: schema */river_bpmn_setting WHERE name = 'exclusive_scope' FOR UPDATE
), upsert AS (
    INSERT INTO /* TEMPLATE: schema */river_bpmn_setting (name, value, recorded_by)
    VALUES ('exclusive_scope', $1, $2)
    ON CONFLICT (name) DO UPDATE SET value = excluded.value, recorded_at = now(), recorded_by = excluded.recorded_by
)
SELECT (SELECT value FROM previous)
