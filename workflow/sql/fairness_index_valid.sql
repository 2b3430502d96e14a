-- Engine.TenantFairnessEnabled: how many of the two tenant indexes exist and
-- are valid in the schema ($1, or the first schema of the search_path).
SELECT count(*)
FROM pg_index i
JOIN pg_class c ON c.oid = i.indexrelid
JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE c.relname IN ('river_bpmn_fetch_tenant', 'river_bpmn_fetch_tenant_p')
  AND n.nspname = coalesce(nullif($1::text, ''), current_schema())
  AND i.indisvalid;
