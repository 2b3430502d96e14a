-- Back to migration 025's job context (016's array): rows written in the
-- labelled form are rewritten to the array form first (the readers of 025
-- read only the array and the older object), with every field as the
-- accessors read it (the labelled form's defaults spelled out) and trailing
-- nulls left out; the parent process instance, which 025 has no place for,
-- is dropped. Then migration 016's functions are restored.
UPDATE /* TEMPLATE: schema */river_job
SET metadata = jsonb_set(metadata, '{bpmn}', (
    SELECT coalesce(jsonb_agg(a.value ORDER BY a.pos), '[]'::jsonb)
    FROM (
        SELECT p.pos, coalesce(/* TEMPLATE: schema */river_bpmn_ctx_field(metadata, p.pos, f.name), 'null'::jsonb) AS value
        FROM unnest(ARRAY['process_instance_id', 'process_definition_key', 'activity_id',
                'job_definition_id', 'priority', 'exclusive', 'deployment_id', 'job_type',
                'retry_cycle', 'tenant_id', 'root_process_instance_id'])
            WITH ORDINALITY AS f (name, ord)
        CROSS JOIN LATERAL (SELECT (f.ord - 1)::integer AS pos) p
    ) a
    WHERE a.pos <= (
        SELECT coalesce(max(l.pos), -1)
        FROM generate_series(0, 10) AS l (pos)
        CROSS JOIN LATERAL (
            SELECT /* TEMPLATE: schema */river_bpmn_ctx_field(metadata, l.pos, (ARRAY['process_instance_id',
                'process_definition_key', 'activity_id', 'job_definition_id', 'priority', 'exclusive', 'deployment_id',
                'job_type', 'retry_cycle', 'tenant_id', 'root_process_instance_id'])[l.pos + 1]) AS value
        ) v
        WHERE jsonb_typeof(v.value) <> 'null'
    )
))
WHERE jsonb_typeof(metadata -> 'bpmn') = 'object'
    AND NOT (metadata -> 'bpmn') ? 'process_definition_key'
    AND NOT (metadata -> 'bpmn') ? 'process_instance_id';

DROP FUNCTION /* TEMPLATE: schema */river_bpmn_ctx_parent(jsonb);

CREATE OR REPLACE FUNCTION /* TEMPLATE: schema */river_bpmn_ctx_field(metadata jsonb, pos integer, name text)
RETURNS jsonb
LANGUAGE sql
IMMUTABLE
PARALLEL SAFE
AS $$
    SELECT CASE
        WHEN jsonb_typeof(metadata -> 'bpmn') = 'array' THEN metadata -> 'bpmn' -> pos
        ELSE metadata -> 'bpmn' -> name
    END
$$;

CREATE OR REPLACE FUNCTION /* TEMPLATE: schema */river_bpmn_ctx_has(metadata jsonb, pos integer, name text, value text)
RETURNS boolean
LANGUAGE sql
STABLE
PARALLEL SAFE
AS $$
    SELECT (metadata @> jsonb_build_object('bpmn', jsonb_build_array(value))
            OR metadata @> jsonb_build_object('bpmn', jsonb_build_object(name, value)))
        AND /* TEMPLATE: schema */river_bpmn_ctx_field(metadata, pos, name) = to_jsonb(value)
$$;

CREATE OR REPLACE FUNCTION /* TEMPLATE: schema */river_bpmn_ctx_object(ctx jsonb)
RETURNS jsonb
LANGUAGE sql
IMMUTABLE
PARALLEL SAFE
AS $$
    SELECT CASE
        WHEN jsonb_typeof(ctx) = 'array' THEN coalesce((
            SELECT jsonb_object_agg(f.name, ctx -> (f.pos - 1)::integer)
            FROM unnest(ARRAY['process_instance_id', 'process_definition_key', 'activity_id',
                    'job_definition_id', 'priority', 'exclusive', 'deployment_id', 'job_type',
                    'retry_cycle', 'tenant_id', 'root_process_instance_id'])
                WITH ORDINALITY AS f (name, pos)
            WHERE jsonb_typeof(ctx -> (f.pos - 1)::integer) <> 'null'
        ), '{}'::jsonb)
        ELSE ctx
    END
$$;

CREATE OR REPLACE FUNCTION /* TEMPLATE: schema */river_bpmn_ctx_set(metadata jsonb, pos integer, name text, value jsonb)
RETURNS jsonb
LANGUAGE sql
IMMUTABLE
PARALLEL SAFE
AS $$
    SELECT CASE jsonb_typeof(metadata -> 'bpmn')
        WHEN 'object' THEN jsonb_set(metadata, ARRAY['bpmn', name], value)
        WHEN 'array' THEN CASE
            WHEN jsonb_array_length(metadata -> 'bpmn') > pos
                THEN jsonb_set(metadata, ARRAY['bpmn', pos::text], value)
            ELSE jsonb_set(metadata, '{bpmn}', (metadata -> 'bpmn')
                || (SELECT coalesce(jsonb_agg(NULL::jsonb), '[]'::jsonb)
                    FROM generate_series(jsonb_array_length(metadata -> 'bpmn'), pos - 1))
                || jsonb_build_array(value))
            END
        ELSE metadata || jsonb_build_object('bpmn',
            (SELECT coalesce(jsonb_agg(NULL::jsonb), '[]'::jsonb) FROM generate_series(1, pos))
            || jsonb_build_array(value))
    END
$$;

-- Sessions opened before this migration (down) cache the expressions and
-- predicates of river_job's indexes as the planner saw them, with migration 026's
-- accessors inlined; they would no longer match the new accessors in their
-- queries (the head-of-key and fetch-order indexes would go unused until the
-- connections closed). Resetting a storage parameter that none of them sets
-- changes nothing on disk and makes every session read the indexes over the
-- accessors again.
DO $$
DECLARE
    index_name text;
BEGIN
    FOR index_name IN
        SELECT DISTINCT i.indexrelid::regclass::text
        FROM pg_index i
        JOIN pg_depend d ON d.classid = 'pg_class'::regclass AND d.objid = i.indexrelid
            AND d.refclassid = 'pg_proc'::regclass
        JOIN pg_proc p ON p.oid = d.refobjid AND p.proname LIKE 'river\_bpmn\_ctx\_%'
        WHERE i.indrelid = '/* TEMPLATE: schema */river_job'::regclass
    LOOP
        EXECUTE format('ALTER INDEX %s RESET (fillfactor)', index_name);
    END LOOP;
END;
$$;
