-- Upsert (Sync): store declared job definitions ($1..$4 are parallel
-- arrays), keeping the run-time state (overriding_priority) of existing rows.
INSERT INTO /* TEMPLATE: schema */river_bpmn_job_definition (id, process_definition_key, activity_id, kind)
SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[])
ON CONFLICT (id) DO UPDATE SET
    process_definition_key = EXCLUDED.process_definition_key,
    activity_id = EXCLUDED.activity_id,
    kind = EXCLUDED.kind,
    updated_at = now()
WHERE (river_bpmn_job_definition.process_definition_key, river_bpmn_job_definition.activity_id, river_bpmn_job_definition.kind)
    IS DISTINCT FROM (EXCLUDED.process_definition_key, EXCLUDED.activity_id, EXCLUDED.kind);
