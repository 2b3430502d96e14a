-- The incident filter of an Incidents selection, ANDed into the WHERE
-- clause of sql/incidents_count.sql, sql/incidents_retry_batch.sql and the
-- engine's incident listing: each parameter NULL means "any". The names
-- ($ids...) are numbered where the filter goes (IncidentFilterSQL), in
-- the order of Incidents.IncidentArgs. Over river_bpmn_incident, unaliased.
($ids::bigint[] IS NULL OR job_id = ANY($ids::bigint[]))
AND ($job_definition::text IS NULL OR job_definition_id = $job_definition::text)
AND ($instance_prefix::text IS NULL OR process_instance_id LIKE $instance_prefix::text)
AND ($activity::text IS NULL OR activity_id = $activity::text)
AND ($error::text IS NULL OR message ILIKE $error::text)
AND ($opened_before::timestamptz IS NULL OR created_at < $opened_before::timestamptz)
AND ($process_definition::text IS NULL OR EXISTS (
    SELECT 1 FROM /* TEMPLATE: schema */river_job fj
    WHERE fj.id = job_id AND /* TEMPLATE: schema */river_bpmn_ctx_definition(fj.metadata) = $process_definition::text))
AND ($tenant::text IS NULL OR EXISTS (
    SELECT 1 FROM /* TEMPLATE: schema */river_job tj
    WHERE tj.id = job_id AND /* TEMPLATE: schema */river_bpmn_ctx_tenant(tj.metadata) = $tenant::text))
