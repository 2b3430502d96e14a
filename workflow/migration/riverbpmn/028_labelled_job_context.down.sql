-- riverbpmn migration line "riverbpmn", version 28, down: back to migration
-- 016's array (with 026's parent at position 11). The indexes over the
-- accessors are dropped, every labelled context is rewritten to the array
-- (what the labelled form leaves out written out: priority 0, exclusive
-- true with an instance, the derived activity), the accessors of 016 and
-- 026 are restored, and the indexes are built again from their definitions.
-- Stop the clients first: a client of this release that has seen migration
-- 28 writes the labelled form, which 016's accessors do not read.
CREATE TEMPORARY TABLE river_bpmn_ctx_index_rebuild ON COMMIT DROP AS
SELECT c.relname AS name, pg_get_indexdef(i.indexrelid) AS definition
FROM pg_index AS i
JOIN pg_class AS c ON c.oid = i.indexrelid
WHERE i.indrelid = '/* TEMPLATE: schema */river_job'::regclass
    AND (coalesce(pg_get_expr(i.indexprs, i.indrelid), '') LIKE '%river_bpmn_ctx_%'
        OR coalesce(pg_get_expr(i.indpred, i.indrelid), '') LIKE '%river_bpmn_ctx_%');

DO $$
DECLARE
    idx record;
BEGIN
    FOR idx IN SELECT name FROM river_bpmn_ctx_index_rebuild LOOP
        EXECUTE format('DROP INDEX %s', '/* TEMPLATE: schema */' || quote_ident(idx.name));
    END LOOP;
END;
$$;

-- A labelled context as 016's array (trailing nulls left out); any other
-- value as it is.
CREATE FUNCTION /* TEMPLATE: schema */river_bpmn_ctx_array(ctx jsonb)
RETURNS jsonb
LANGUAGE sql
IMMUTABLE
PARALLEL SAFE
AS $$
    SELECT CASE
        WHEN jsonb_typeof(ctx) = 'object' AND NOT /* TEMPLATE: schema */river_bpmn_ctx_is_earlier_form(ctx) THEN (
            SELECT coalesce(jsonb_agg(coalesce(o.obj -> a.name, 'null'::jsonb) ORDER BY a.pos)
                FILTER (WHERE a.pos <= last.pos), '[]'::jsonb)
            FROM (SELECT /* TEMPLATE: schema */river_bpmn_ctx_object(ctx) AS obj) AS o
            CROSS JOIN unnest(ARRAY['process_instance_id', 'process_definition_key', 'activity_id',
                    'job_definition_id', 'priority', 'exclusive', 'deployment_id', 'job_type',
                    'retry_cycle', 'tenant_id', 'root_process_instance_id', 'parent_process_instance_id'])
                WITH ORDINALITY AS a (name, pos)
            CROSS JOIN LATERAL (
                SELECT coalesce(max(b.pos), 0) AS pos
                FROM unnest(ARRAY['process_instance_id', 'process_definition_key', 'activity_id',
                        'job_definition_id', 'priority', 'exclusive', 'deployment_id', 'job_type',
                        'retry_cycle', 'tenant_id', 'root_process_instance_id', 'parent_process_instance_id'])
                    WITH ORDINALITY AS b (name, pos)
                WHERE coalesce(o.obj -> b.name, 'null'::jsonb) <> 'null'::jsonb
            ) AS last)
        ELSE ctx
    END
$$;

UPDATE /* TEMPLATE: schema */river_job
SET metadata = jsonb_set(metadata, '{bpmn}', /* TEMPLATE: schema */river_bpmn_ctx_array(metadata -> 'bpmn'))
WHERE jsonb_typeof(metadata -> 'bpmn') = 'object'
    AND NOT /* TEMPLATE: schema */river_bpmn_ctx_is_earlier_form(metadata -> 'bpmn');

-- The contexts the job status events recorded (migration 017's rows of
-- events, each with its job's context as it was stored).
UPDATE /* TEMPLATE: schema */river_bpmn_event
SET job_context = (
    SELECT array_agg(/* TEMPLATE: schema */river_bpmn_ctx_array(c.ctx) ORDER BY c.ord)
    FROM unnest(job_context) WITH ORDINALITY AS c (ctx, ord))
WHERE EXISTS (
    SELECT 1 FROM unnest(job_context) AS c (ctx)
    WHERE jsonb_typeof(c.ctx) = 'object' AND NOT /* TEMPLATE: schema */river_bpmn_ctx_is_earlier_form(c.ctx));

DROP FUNCTION /* TEMPLATE: schema */river_bpmn_ctx_array(jsonb);

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

-- Migration 016's accessors of single fields (026's for the parent).
CREATE OR REPLACE FUNCTION /* TEMPLATE: schema */river_bpmn_ctx_instance(metadata jsonb)
RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT /* TEMPLATE: schema */river_bpmn_ctx_string(metadata, 0, 'process_instance_id') $$;

CREATE OR REPLACE FUNCTION /* TEMPLATE: schema */river_bpmn_ctx_definition(metadata jsonb)
RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT /* TEMPLATE: schema */river_bpmn_ctx_string(metadata, 1, 'process_definition_key') $$;



CREATE OR REPLACE FUNCTION /* TEMPLATE: schema */river_bpmn_ctx_job_definition(metadata jsonb)
RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT /* TEMPLATE: schema */river_bpmn_ctx_string(metadata, 3, 'job_definition_id') $$;

-- The BPMN priority (position 4), higher first. Never fails: a value that is
-- not an integer number in bigint's range reads as 0, the default, instead
-- of breaking inserts or fetches for the whole table (as migration 003's
-- river_bpmn_priority did for the object form, which tested the number's
-- text with a regular expression; its scale is the same test, and about
-- a third cheaper per row, which a fetch by priority pays per candidate).
CREATE OR REPLACE FUNCTION /* TEMPLATE: schema */river_bpmn_ctx_priority(metadata jsonb)
RETURNS bigint
LANGUAGE sql
IMMUTABLE
PARALLEL SAFE
AS $$
    SELECT CASE
        WHEN jsonb_typeof(/* TEMPLATE: schema */river_bpmn_ctx_field(metadata, 4, 'priority')) = 'number'
            AND scale(/* TEMPLATE: schema */river_bpmn_ctx_field(metadata, 4, 'priority')::numeric) = 0
            AND /* TEMPLATE: schema */river_bpmn_ctx_field(metadata, 4, 'priority')::numeric
                BETWEEN -9223372036854775808 AND 9223372036854775807
        THEN /* TEMPLATE: schema */river_bpmn_ctx_field(metadata, 4, 'priority')::numeric::bigint
        ELSE 0
    END
$$;

-- Whether the job is exclusive (position 5): true only for JSON true; NULL
-- when the field is absent, false for any other value.


CREATE OR REPLACE FUNCTION /* TEMPLATE: schema */river_bpmn_ctx_deployment(metadata jsonb)
RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT /* TEMPLATE: schema */river_bpmn_ctx_string(metadata, 6, 'deployment_id') $$;

-- Whether the job is a timer (job type, position 7, is "timer"); never NULL.
CREATE OR REPLACE FUNCTION /* TEMPLATE: schema */river_bpmn_ctx_is_timer(metadata jsonb)
RETURNS boolean LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT coalesce(/* TEMPLATE: schema */river_bpmn_ctx_field(metadata, 7, 'job_type') = '"timer"'::jsonb, false) $$;

CREATE OR REPLACE FUNCTION /* TEMPLATE: schema */river_bpmn_ctx_retry_cycle(metadata jsonb)
RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT /* TEMPLATE: schema */river_bpmn_ctx_string(metadata, 8, 'retry_cycle') $$;

CREATE OR REPLACE FUNCTION /* TEMPLATE: schema */river_bpmn_ctx_tenant(metadata jsonb)
RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT /* TEMPLATE: schema */river_bpmn_ctx_string(metadata, 9, 'tenant_id') $$;

-- The root process instance as stored (position 10): NULL when the instance
-- is its own root, which is how both forms store a top-level instance.
CREATE OR REPLACE FUNCTION /* TEMPLATE: schema */river_bpmn_ctx_root(metadata jsonb)
RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT /* TEMPLATE: schema */river_bpmn_ctx_string(metadata, 10, 'root_process_instance_id') $$;

CREATE OR REPLACE FUNCTION /* TEMPLATE: schema */river_bpmn_ctx_parent(metadata jsonb)
RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT /* TEMPLATE: schema */river_bpmn_ctx_string(metadata, 11, 'parent_process_instance_id') $$;

CREATE OR REPLACE FUNCTION /* TEMPLATE: schema */river_bpmn_ctx_exclusive(metadata jsonb)
RETURNS boolean LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT /* TEMPLATE: schema */river_bpmn_ctx_field(metadata, 5, 'exclusive') = 'true'::jsonb $$;

CREATE OR REPLACE FUNCTION /* TEMPLATE: schema */river_bpmn_ctx_activity(metadata jsonb)
RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT /* TEMPLATE: schema */river_bpmn_ctx_string(metadata, 2, 'activity_id') $$;

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
                    'retry_cycle', 'tenant_id', 'root_process_instance_id', 'parent_process_instance_id'])
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

CREATE OR REPLACE FUNCTION /* TEMPLATE: schema */river_bpmn_job_apply_overriding_priority()
RETURNS trigger
LANGUAGE plpgsql
AS $$
DECLARE
    job_definition_id text := /* TEMPLATE: schema */river_bpmn_ctx_job_definition(NEW.metadata);
    override bigint;
BEGIN
    IF job_definition_id IS NULL
        OR coalesce(jsonb_typeof(/* TEMPLATE: schema */river_bpmn_ctx_field(NEW.metadata, 4, 'priority')), 'null') = 'null' THEN
        RETURN NEW;
    END IF;

    -- Keyed by this river_job table too: schemas do not contend.
    PERFORM pg_advisory_xact_lock_shared(1380076878, hashtext(TG_RELID::text || ':' || job_definition_id));
    SELECT overriding_priority INTO override
    FROM /* TEMPLATE: schema */river_bpmn_job_definition
    WHERE id = job_definition_id
    FOR SHARE;

    IF override IS NOT NULL THEN
        NEW.metadata := /* TEMPLATE: schema */river_bpmn_ctx_set(NEW.metadata, 4, 'priority', to_jsonb(override));
    END IF;
    RETURN NEW;
END;
$$;

CREATE OR REPLACE FUNCTION /* TEMPLATE: schema */river_bpmn_event_instance(ctx jsonb)
RETURNS text
LANGUAGE sql
IMMUTABLE
PARALLEL SAFE
AS $$
    SELECT CASE
        WHEN jsonb_typeof(ctx) = 'array' AND jsonb_typeof(ctx -> 0) = 'string' THEN ctx ->> 0
        WHEN jsonb_typeof(ctx) = 'object' AND jsonb_typeof(ctx -> 'process_instance_id') = 'string'
            THEN ctx ->> 'process_instance_id'
    END
$$;

DROP FUNCTION /* TEMPLATE: schema */river_bpmn_ctx_labelled(jsonb);
DROP FUNCTION /* TEMPLATE: schema */river_bpmn_ctx_labelled_of(jsonb, jsonb, jsonb, jsonb, jsonb, jsonb,
    jsonb, jsonb, jsonb, jsonb, jsonb, jsonb);
DROP FUNCTION /* TEMPLATE: schema */river_bpmn_ctx_is_earlier_form(jsonb);
DROP FUNCTION /* TEMPLATE: schema */river_bpmn_ctx_derived_activity(jsonb, jsonb);
DROP FUNCTION /* TEMPLATE: schema */river_bpmn_ctx_value(jsonb);

DO $$
DECLARE
    idx record;
BEGIN
    FOR idx IN SELECT definition FROM river_bpmn_ctx_index_rebuild ORDER BY name LOOP
        EXECUTE idx.definition;
    END LOOP;
END;
$$;

DROP TABLE river_bpmn_ctx_index_rebuild;
