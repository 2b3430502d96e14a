-- SetOverridingPriority: set ($2 non-NULL) or clear ($2 NULL) the
-- overriding priority of job definition $1, upserting the declared row
-- ($3..$5: process definition key, activity, kind) when $6 is true.
-- Runs after pg_advisory_xact_lock(AdvisoryLockClassJobDefinition,
-- hashtext($1)) in the same transaction: see migration riverbpmn/002.
WITH upserted AS (
    INSERT INTO /* TEMPLATE: schema */river_bpmn_job_definition (id, process_definition_key, activity_id, kind, overriding_priority)
    SELECT $1::text, $3::text, $4::text, $5::text, $2::bigint
    WHERE $6::boolean
    ON CONFLICT (id) DO UPDATE SET
        overriding_priority = EXCLUDED.overriding_priority,
        updated_at = now()
    RETURNING id
), updated AS (
    UPDATE /* TEMPLATE: schema */river_bpmn_job_definition
    SET overriding_priority = $2::bigint, updated_at = now()
    WHERE id = $1::text AND NOT $6::boolean
    RETURNING id
)
SELECT id FROM upserted UNION ALL SELECT id FROM updated;
