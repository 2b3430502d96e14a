-- Whether the schema was worked by a riverbpmn that predates the recorded
-- exclusive scope: migration riverbpmn/021 leaves a marker in a schema that
-- held jobs or job definitions when it ran, but plain River's jobs leave it
-- too (a River app adopting riverbpmn), so the schema must also hold what
-- only riverbpmn writes: a job definition, or a job with a job context (the
-- "bpmn" metadata key, found through River's GIN index on metadata).
SELECT EXISTS (
    SELECT 1 FROM /* TEMPLATE: schema */river_bpmn_setting
    WHERE name = 'schema_predates_exclusive_default'
) AND (
    EXISTS (SELECT 1 FROM /* TEMPLATE: schema */river_bpmn_job_definition)
    OR EXISTS (SELECT 1 FROM /* TEMPLATE: schema */river_job WHERE metadata ? 'bpmn')
)
