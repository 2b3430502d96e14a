-- The indexes of an on-demand family (fetch-order or tenant indexes: any of
-- the names in $2) that exist and are valid in the schema ($1, or the first
-- schema of the search_path), by name.
SELECT c.relname::text
FROM pg_index i
JOIN pg_class c ON c.oid = i.indexrelid
JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE c.relname = ANY($2::text[])
  AND n.nspname = coalesce(nullif($1::text, ''), current_schema())
  AND i.indisvalid
ORDER BY 1;
