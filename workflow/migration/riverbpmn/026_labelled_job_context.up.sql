-- riverbpmn migration line "riverbpmn", version 26: the labelled job context.
--
-- Jobs inserted from now on carry their job context in metadata as one JSON
-- object with short labels, readable in River UI without a table of
-- positions, instead of migration 016's array:
--
--   {"bpmn": {"instance": "order-4711", "process": "order",
--             "job": "order:reserve", "priority": 10,
--             "deployment": "dep-2026-11", "tenant": "acme"}}
--
-- Labels: instance, process, activity, job (job definition), priority,
-- exclusive, deployment, type (job type), retry (retry cycle), tenant, root,
-- parent. River's GIN index on metadata (jsonb_ops) takes one entry per key
-- and one per value at every state change of a job, so the form leaves out
-- what a reader tells without it: empty fields; priority when 0, and
-- exclusive when true in a context with an instance (the defaults: absent
-- reads as them, JSON null is none); the root when the instance is its own
-- root;
-- the activity when the job definition's id is "<process>:<activity>"
-- (absent reads as that activity; a job definition of that shape without an
-- activity stores "activity": null). workflow.JobContext's doc comment and
-- docs/operating/river-ui.md describe the form.
--
-- Rows written before are not rewritten: every reader accepts every form,
-- forever. The accessor functions of migration 016 are replaced with the
-- same names, signatures and volatility, and read all three forms: an array
-- (016) by position, an object by the fields' names or else by label, with
-- the labelled form's defaults only for an object that holds neither
-- "process_definition_key" nor "process_instance_id" (riverbpmn wrote one of
-- them in every object before 016). For rows of the two older forms they
-- return what they returned before (an object written by hand, holding
-- neither key, nor an instance, reads priority 0 where it read no priority:
-- the same for every reader), so the indexes built
-- over them (the head-of-key indexes, the fetch-order, tenant and
-- running-key indexes built on demand) stay valid and are not rebuilt: no
-- row in the labelled form exists before this migration. Callers pass the
-- position and name as constants, and the planner folds the label lookup,
-- so an index over an accessor still serves a query that calls it.
--
-- New accessor: river_bpmn_ctx_parent, the parent process instance
-- (position 11 of the array form, which 016's writers never reached).

-- The raw value of a job context field, in any form: element pos of an
-- array context; key name, else the label of position pos, of an object
-- context. An object holding neither "process_definition_key" nor
-- "process_instance_id" is in the labelled form (riverbpmn wrote one of the
-- two in every object before migration 016), and gets the labelled form's
-- defaults for what it leaves out: priority 0; exclusive true when it has an
-- instance; the activity derived from the job definition's id. NULL when
-- metadata has no job context or the context lacks the field; JSON null as
-- stored. jsonb_object builds the derived activity's JSON string (to_jsonb
-- is STABLE, and an IMMUTABLE function calling it would not be inlined).
CREATE OR REPLACE FUNCTION /* TEMPLATE: schema */river_bpmn_ctx_field(metadata jsonb, pos integer, name text)
RETURNS jsonb
LANGUAGE sql
IMMUTABLE
PARALLEL SAFE
AS $$
    SELECT CASE jsonb_typeof(metadata -> 'bpmn')
        WHEN 'array' THEN metadata -> 'bpmn' -> pos
        WHEN 'object' THEN coalesce(
            metadata -> 'bpmn' -> name,
            metadata -> 'bpmn' -> ((ARRAY['instance', 'process', 'activity', 'job', 'priority', 'exclusive',
                'deployment', 'type', 'retry', 'tenant', 'root', 'parent'])[pos + 1]),
            CASE
                WHEN (metadata -> 'bpmn') ? 'process_definition_key' OR (metadata -> 'bpmn') ? 'process_instance_id' THEN NULL
                WHEN pos = 4 THEN '0'::jsonb
                WHEN pos = 5 AND (metadata -> 'bpmn') ? 'instance' THEN 'true'::jsonb
                WHEN pos = 2
                    AND jsonb_typeof(metadata -> 'bpmn' -> 'process') = 'string'
                    AND jsonb_typeof(metadata -> 'bpmn' -> 'job') = 'string'
                    AND metadata -> 'bpmn' ->> 'process' <> ''
                    AND starts_with(metadata -> 'bpmn' ->> 'job', (metadata -> 'bpmn' ->> 'process') || ':')
                    THEN jsonb_object(ARRAY['a', substr(metadata -> 'bpmn' ->> 'job',
                        length(metadata -> 'bpmn' ->> 'process') + 2)]) -> 'a'
            END)
        ELSE metadata -> 'bpmn' -> name
    END
$$;

-- The parent process instance (position 11, label "parent"): NULL for a
-- top-level instance and for jobs written before this migration.
CREATE FUNCTION /* TEMPLATE: schema */river_bpmn_ctx_parent(metadata jsonb)
RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT /* TEMPLATE: schema */river_bpmn_ctx_string(metadata, 11, 'parent_process_instance_id') $$;

-- Whether the job context of metadata has field (pos, name) equal to the
-- string value, in any form: containment on each form, which River's GIN
-- index on metadata answers (a BitmapOr of three index scans), then the
-- field itself, since the array form's containment matches value at any
-- position. STABLE, as in migration 016.
CREATE OR REPLACE FUNCTION /* TEMPLATE: schema */river_bpmn_ctx_has(metadata jsonb, pos integer, name text, value text)
RETURNS boolean
LANGUAGE sql
STABLE
PARALLEL SAFE
AS $$
    SELECT (metadata @> jsonb_build_object('bpmn', jsonb_build_object(
                (ARRAY['instance', 'process', 'activity', 'job', 'priority', 'exclusive',
                    'deployment', 'type', 'retry', 'tenant', 'root', 'parent'])[pos + 1], value))
            OR metadata @> jsonb_build_object('bpmn', jsonb_build_array(value))
            OR metadata @> jsonb_build_object('bpmn', jsonb_build_object(name, value)))
        AND /* TEMPLATE: schema */river_bpmn_ctx_field(metadata, pos, name) = to_jsonb(value)
$$;

-- A job context (metadata -> 'bpmn') in the object form of migrations
-- before 016, whichever form it is stored in: an array's or a labelled
-- object's non-null fields under their names (with the labelled form's
-- defaults filled in, as river_bpmn_ctx_field reads them), an object of that
-- form as it is, anything else (NULL, a number, a string) as it is. For
-- readers that show the context to people or to programs written against
-- the object form (the events of package events).
CREATE OR REPLACE FUNCTION /* TEMPLATE: schema */river_bpmn_ctx_object(ctx jsonb)
RETURNS jsonb
LANGUAGE sql
IMMUTABLE
PARALLEL SAFE
AS $$
    SELECT CASE
        WHEN jsonb_typeof(ctx) = 'array'
            OR (jsonb_typeof(ctx) = 'object' AND NOT ctx ? 'process_definition_key' AND NOT ctx ? 'process_instance_id') THEN coalesce((
            SELECT jsonb_object_agg(f.name, v.value)
            FROM unnest(ARRAY['process_instance_id', 'process_definition_key', 'activity_id',
                    'job_definition_id', 'priority', 'exclusive', 'deployment_id', 'job_type',
                    'retry_cycle', 'tenant_id', 'root_process_instance_id', 'parent_process_instance_id'])
                WITH ORDINALITY AS f (name, pos)
            CROSS JOIN LATERAL (
                SELECT /* TEMPLATE: schema */river_bpmn_ctx_field(jsonb_set('{"bpmn": null}'::jsonb, '{bpmn}', ctx),
                    (f.pos - 1)::integer, f.name) AS value
            ) v
            WHERE jsonb_typeof(v.value) <> 'null'
        ), '{}'::jsonb)
        ELSE ctx
    END
$$;

-- metadata with job context field (pos, name) set to value, in the form the
-- context is stored in: an array is padded with nulls up to pos; an object
-- of the older form (or one already holding name) gets name, a labelled
-- object the label. Metadata without a job context, or with one that is
-- neither array nor object, gets a labelled context holding only this field
-- (without an instance, it is not exclusive, as migration 016's array
-- holding only the field read). For the writers of a field: the overriding
-- priority (insert trigger, job definition cascade) and
-- Engine.SetJobPriority.
CREATE OR REPLACE FUNCTION /* TEMPLATE: schema */river_bpmn_ctx_set(metadata jsonb, pos integer, name text, value jsonb)
RETURNS jsonb
LANGUAGE sql
IMMUTABLE
PARALLEL SAFE
AS $$
    SELECT CASE
        WHEN jsonb_typeof(metadata -> 'bpmn') = 'object'
            AND ((metadata -> 'bpmn') ? 'process_definition_key' OR (metadata -> 'bpmn') ? 'process_instance_id' OR (metadata -> 'bpmn') ? name)
            THEN jsonb_set(metadata, ARRAY['bpmn', name], value)
        WHEN jsonb_typeof(metadata -> 'bpmn') = 'object'
            THEN jsonb_set(metadata, ARRAY['bpmn', (ARRAY['instance', 'process', 'activity', 'job', 'priority',
                'exclusive', 'deployment', 'type', 'retry', 'tenant', 'root', 'parent'])[pos + 1]], value)
        WHEN jsonb_typeof(metadata -> 'bpmn') = 'array' THEN CASE
            WHEN jsonb_array_length(metadata -> 'bpmn') > pos
                THEN jsonb_set(metadata, ARRAY['bpmn', pos::text], value)
            ELSE jsonb_set(metadata, '{bpmn}', (metadata -> 'bpmn')
                || (SELECT coalesce(jsonb_agg(NULL::jsonb), '[]'::jsonb)
                    FROM generate_series(jsonb_array_length(metadata -> 'bpmn'), pos - 1))
                || jsonb_build_array(value))
            END
        ELSE metadata || jsonb_build_object('bpmn', jsonb_build_object((ARRAY['instance', 'process', 'activity',
            'job', 'priority', 'exclusive', 'deployment', 'type', 'retry', 'tenant', 'root', 'parent'])[pos + 1], value))
    END
$$;

-- Sessions opened before this migration cache the expressions and
-- predicates of river_job's indexes as the planner saw them, with the old
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
