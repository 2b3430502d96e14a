-- Whether the schema was in use before the exclusive scope was first
-- recorded: migration riverbpmn/021 leaves this marker in a schema that held
-- jobs or job definitions when it ran.
SELECT EXISTS (
    SELECT 1 FROM /* TEMPLATE: schema */river_bpmn_setting
    WHERE name = 'schema_predates_exclusive_default'
)
