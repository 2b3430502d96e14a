-- riverbpmn migration line "riverbpmn", version 28: the labelled job context.
--
-- A job's context is stored in metadata as one JSON object with labels, so
-- that a person reading the job in River UI sees who it is without a table
-- of positions, instead of migration 016's array:
--
--   {"bpmn": {"instance": "order-4711", "process": "order",
--             "job": "order:reserve", "priority": 10,
--             "deployment": "dep-2026-11", "tenant": "acme"}}
--
-- Labels: instance, process, activity, job (job definition), priority,
-- exclusive, deployment, type (job type), retry (retry cycle), tenant, root,
-- parent. Left out is what a reader tells without it: empty fields; the
-- priority when it is 0 (JSON null: none, prioritised job creation off);
-- exclusive when it is true in a context with an instance (so
-- "exclusive": false marks a job that is not exclusive); the root when the
-- instance is its own root; the activity when the job definition's id is
-- "<process>:<activity>" (a job definition of that shape without an
-- activity stores "activity": null). workflow.JobContext's doc comment and
-- docs/operating/river-ui.md describe the form.
--
-- One form in force per schema: every row holding a context in an earlier
-- form (016's array, the object of migrations before 016) is rewritten to
-- the labelled form here, and the accessor functions (same names,
-- signatures and volatility, so every statement that calls them is
-- unchanged) read the labelled form only. Each is a couple of operators on
-- metadata -> 'bpmn' after inlining (the label is a constant folded from
-- the position), so the expressions and predicates of the indexes over
-- them, which the planner copies and compares for every statement on
-- river_job, are smaller than 016's, which told two forms apart with a
-- CASE. Rows written afterwards in an earlier form (a client of an earlier
-- release, or of this one that has not seen this migration yet, writes the
-- array) are rewritten on insert by river_bpmn_job_apply_overriding_priority,
-- the BEFORE INSERT trigger every job with a context already passes
-- through. Clients of releases before this one cannot read the labelled
-- form: upgrade every client first (this release writes the array until its
-- schema has this migration), then migrate.
--
-- The indexes whose expressions or predicates call the accessors (the
-- head-of-key indexes, the fetch-order, tenant and running-key indexes built
-- on demand) are dropped before the rewrite and built again after it from
-- their own definitions, over the new accessors. The rewrite and the builds
-- hold river_job's lock: on a large table, delete finalized jobs first
-- (River's cleaner does) or migrate when the queue is short.

-- A job context (metadata -> 'bpmn') in the labelled form, whichever form it
-- is stored in: 016's array by position, an object of migrations before 016
-- (it holds a field by its JSON name, other than priority and exclusive,
-- which both forms spell alike: json.Marshal wrote "process_definition_key"
-- in every one) by the fields' names, the labelled form as it is, anything else as it is. What
-- the labelled form leaves out is left out (see above), as
-- workflow.JobContext's encoder leaves it out.
-- A field's value, SQL NULL when absent, JSON null or "".
CREATE FUNCTION /* TEMPLATE: schema */river_bpmn_ctx_value(value jsonb)
RETURNS jsonb LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT nullif(nullif(value, 'null'::jsonb), '""'::jsonb) $$;

-- The activity a reader derives from a job definition's id
-- "<process>:<activity>" (workflow.derivedActivity), as a JSON string; NULL
-- when the id has another shape. jsonb_object builds the string (to_jsonb
-- is STABLE).
CREATE FUNCTION /* TEMPLATE: schema */river_bpmn_ctx_derived_activity(process jsonb, job jsonb)
RETURNS jsonb LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT CASE
        WHEN jsonb_typeof(process) = 'string' AND jsonb_typeof(job) = 'string' AND process <> '""'::jsonb
            AND starts_with(job #>> '{}', (process #>> '{}') || ':')
        THEN jsonb_object(ARRAY['a', substr(job #>> '{}', length(process #>> '{}') + 2)]) -> 'a'
    END
$$;

-- The labelled form of the fields given in 016's order. One expression, so
-- that it is inlined into the row rewrite below and into the insert trigger
-- (a function with a FROM clause is not, and cost 100 us a row). STABLE,
-- because jsonb_build_object is.
CREATE FUNCTION /* TEMPLATE: schema */river_bpmn_ctx_labelled_of(
    instance jsonb, process jsonb, activity jsonb, job jsonb, priority jsonb, exclusive jsonb,
    deployment jsonb, type jsonb, retry jsonb, tenant jsonb, root jsonb, parent jsonb)
RETURNS jsonb
LANGUAGE sql
STABLE
PARALLEL SAFE
AS $$
    SELECT jsonb_strip_nulls(jsonb_build_object(
            'instance', /* TEMPLATE: schema */river_bpmn_ctx_value(instance),
            'process', /* TEMPLATE: schema */river_bpmn_ctx_value(process),
            'job', /* TEMPLATE: schema */river_bpmn_ctx_value(job),
            'activity', CASE
                WHEN /* TEMPLATE: schema */river_bpmn_ctx_derived_activity(process, job)
                    IS NOT DISTINCT FROM /* TEMPLATE: schema */river_bpmn_ctx_value(activity) THEN NULL
                ELSE /* TEMPLATE: schema */river_bpmn_ctx_value(activity)
            END,
            'priority', CASE WHEN priority = '0'::jsonb OR priority = 'null'::jsonb THEN NULL ELSE priority END,
            'exclusive', CASE
                WHEN exclusive = 'true'::jsonb THEN
                    CASE WHEN /* TEMPLATE: schema */river_bpmn_ctx_value(instance) IS NULL THEN exclusive END
                WHEN exclusive IS NULL OR exclusive = 'null'::jsonb THEN
                    CASE WHEN /* TEMPLATE: schema */river_bpmn_ctx_value(instance) IS NOT NULL THEN 'false'::jsonb END
                ELSE exclusive -- false, or a value written by hand, which reads as not exclusive
            END,
            'deployment', /* TEMPLATE: schema */river_bpmn_ctx_value(deployment),
            'type', /* TEMPLATE: schema */river_bpmn_ctx_value(type),
            'retry', /* TEMPLATE: schema */river_bpmn_ctx_value(retry),
            'tenant', /* TEMPLATE: schema */river_bpmn_ctx_value(tenant),
            'root', CASE
                WHEN /* TEMPLATE: schema */river_bpmn_ctx_value(root) IS DISTINCT FROM /* TEMPLATE: schema */river_bpmn_ctx_value(instance)
                THEN /* TEMPLATE: schema */river_bpmn_ctx_value(root)
            END,
            'parent', /* TEMPLATE: schema */river_bpmn_ctx_value(parent)))
        -- JSON nulls that carry meaning, which jsonb_strip_nulls took out:
        -- no priority, and no activity where one would be derived.
        || CASE WHEN priority IS NULL OR priority = 'null'::jsonb THEN '{"priority": null}'::jsonb ELSE '{}'::jsonb END
        || CASE
            WHEN /* TEMPLATE: schema */river_bpmn_ctx_derived_activity(process, job) IS NOT NULL
                AND /* TEMPLATE: schema */river_bpmn_ctx_value(activity) IS NULL
            THEN '{"activity": null}'::jsonb ELSE '{}'::jsonb
        END
$$;

CREATE FUNCTION /* TEMPLATE: schema */river_bpmn_ctx_labelled(ctx jsonb)
RETURNS jsonb
LANGUAGE sql
STABLE
PARALLEL SAFE
AS $$
    SELECT CASE
        WHEN jsonb_typeof(ctx) = 'array' THEN /* TEMPLATE: schema */river_bpmn_ctx_labelled_of(
            ctx -> 0, ctx -> 1, ctx -> 2, ctx -> 3, ctx -> 4, ctx -> 5,
            ctx -> 6, ctx -> 7, ctx -> 8, ctx -> 9, ctx -> 10, ctx -> 11)
        WHEN jsonb_typeof(ctx) = 'object' AND ctx ?| ARRAY['process_instance_id', 'process_definition_key', 'activity_id',
            'job_definition_id', 'deployment_id', 'job_type', 'retry_cycle', 'tenant_id',
            'root_process_instance_id', 'parent_process_instance_id']
            THEN /* TEMPLATE: schema */river_bpmn_ctx_labelled_of(
            ctx -> 'process_instance_id', ctx -> 'process_definition_key', ctx -> 'activity_id',
            ctx -> 'job_definition_id', ctx -> 'priority', ctx -> 'exclusive', ctx -> 'deployment_id',
            ctx -> 'job_type', ctx -> 'retry_cycle', ctx -> 'tenant_id',
            ctx -> 'root_process_instance_id', ctx -> 'parent_process_instance_id')
        ELSE ctx
    END
$$;

-- Whether a job context is stored in a form earlier than the labelled one
-- (river_bpmn_ctx_labelled rewrites it).
CREATE FUNCTION /* TEMPLATE: schema */river_bpmn_ctx_is_earlier_form(ctx jsonb)
RETURNS boolean
LANGUAGE sql
IMMUTABLE
PARALLEL SAFE
AS $$
    SELECT jsonb_typeof(ctx) = 'array'
        OR (jsonb_typeof(ctx) = 'object' AND ctx ?| ARRAY['process_instance_id', 'process_definition_key', 'activity_id',
            'job_definition_id', 'deployment_id', 'job_type', 'retry_cycle', 'tenant_id',
            'root_process_instance_id', 'parent_process_instance_id'])
$$;

-- The accessors. river_bpmn_ctx_field reads the label of position pos (016's
-- positions, which every caller passes as a constant); name is the field's
-- JSON name, kept for the callers' sake. The labels are an array literal
-- indexed from 0, so that inlining folds the label with one evaluation
-- (inlining happens at every planning of a statement that calls an
-- accessor, and of every statement on river_job for the statistics objects
-- over river_bpmn_ctx_priority and river_bpmn_ctx_deployment, whose
-- expressions PostgreSQL does not cache): the inlined accessor is
-- metadata -> 'bpmn' -> 'label'. NULL when metadata has no job context or
-- the context lacks the field; JSON null as stored.
CREATE OR REPLACE FUNCTION /* TEMPLATE: schema */river_bpmn_ctx_field(metadata jsonb, pos integer, name text)
RETURNS jsonb
LANGUAGE sql
IMMUTABLE
PARALLEL SAFE
AS $$
    SELECT metadata -> 'bpmn'
        -> ('[0:11]={instance,process,activity,job,priority,exclusive,deployment,type,retry,tenant,root,parent}'::text[])[pos]
$$;

-- The accessors of single fields name their label: nothing to fold, one
-- function body to inline (016's went through river_bpmn_ctx_string and
-- river_bpmn_ctx_field, three bodies each). The text of a field that is a
-- JSON string; NULL for any other value (a number, an object: data written
-- by hand), as for an absent one.
CREATE OR REPLACE FUNCTION /* TEMPLATE: schema */river_bpmn_ctx_instance(metadata jsonb)
RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT CASE WHEN jsonb_typeof(metadata -> 'bpmn' -> 'instance') = 'string' THEN metadata -> 'bpmn' ->> 'instance' END $$;

CREATE OR REPLACE FUNCTION /* TEMPLATE: schema */river_bpmn_ctx_definition(metadata jsonb)
RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT CASE WHEN jsonb_typeof(metadata -> 'bpmn' -> 'process') = 'string' THEN metadata -> 'bpmn' ->> 'process' END $$;

CREATE OR REPLACE FUNCTION /* TEMPLATE: schema */river_bpmn_ctx_job_definition(metadata jsonb)
RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT CASE WHEN jsonb_typeof(metadata -> 'bpmn' -> 'job') = 'string' THEN metadata -> 'bpmn' ->> 'job' END $$;

CREATE OR REPLACE FUNCTION /* TEMPLATE: schema */river_bpmn_ctx_deployment(metadata jsonb)
RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT CASE WHEN jsonb_typeof(metadata -> 'bpmn' -> 'deployment') = 'string' THEN metadata -> 'bpmn' ->> 'deployment' END $$;

CREATE OR REPLACE FUNCTION /* TEMPLATE: schema */river_bpmn_ctx_retry_cycle(metadata jsonb)
RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT CASE WHEN jsonb_typeof(metadata -> 'bpmn' -> 'retry') = 'string' THEN metadata -> 'bpmn' ->> 'retry' END $$;

CREATE OR REPLACE FUNCTION /* TEMPLATE: schema */river_bpmn_ctx_tenant(metadata jsonb)
RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT CASE WHEN jsonb_typeof(metadata -> 'bpmn' -> 'tenant') = 'string' THEN metadata -> 'bpmn' ->> 'tenant' END $$;

-- NULL when the instance is its own root (the form leaves it out).
CREATE OR REPLACE FUNCTION /* TEMPLATE: schema */river_bpmn_ctx_root(metadata jsonb)
RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT CASE WHEN jsonb_typeof(metadata -> 'bpmn' -> 'root') = 'string' THEN metadata -> 'bpmn' ->> 'root' END $$;

CREATE OR REPLACE FUNCTION /* TEMPLATE: schema */river_bpmn_ctx_parent(metadata jsonb)
RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT CASE WHEN jsonb_typeof(metadata -> 'bpmn' -> 'parent') = 'string' THEN metadata -> 'bpmn' ->> 'parent' END $$;

-- Whether the job is a timer ("type" is "timer"); never NULL.
CREATE OR REPLACE FUNCTION /* TEMPLATE: schema */river_bpmn_ctx_is_timer(metadata jsonb)
RETURNS boolean LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT coalesce(metadata -> 'bpmn' -> 'type' = '"timer"'::jsonb, false) $$;

-- The BPMN priority, higher first; absent (the form's default) reads as 0.
-- Never fails: a value that is not an integer number in bigint's range
-- reads as 0 too, as in migration 016.
CREATE OR REPLACE FUNCTION /* TEMPLATE: schema */river_bpmn_ctx_priority(metadata jsonb)
RETURNS bigint
LANGUAGE sql
IMMUTABLE
PARALLEL SAFE
AS $$
    SELECT CASE
        WHEN jsonb_typeof(metadata -> 'bpmn' -> 'priority') = 'number'
            AND scale((metadata -> 'bpmn' -> 'priority')::numeric) = 0
            AND (metadata -> 'bpmn' -> 'priority')::numeric BETWEEN -9223372036854775808 AND 9223372036854775807
        THEN (metadata -> 'bpmn' -> 'priority')::numeric::bigint
        ELSE 0
    END
$$;

-- Whether the job is exclusive: "exclusive" is JSON true, or absent in a
-- context with an instance (the default the form leaves out). NULL or false
-- otherwise.
CREATE OR REPLACE FUNCTION /* TEMPLATE: schema */river_bpmn_ctx_exclusive(metadata jsonb)
RETURNS boolean LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT coalesce(metadata -> 'bpmn' -> 'exclusive',
        CASE WHEN metadata -> 'bpmn' ? 'instance' THEN 'true'::jsonb END) = 'true'::jsonb
$$;

-- The activity: "activity" when present (JSON null: none), else the one the
-- job definition's id names after "<process>:" (left out by the form).
CREATE OR REPLACE FUNCTION /* TEMPLATE: schema */river_bpmn_ctx_activity(metadata jsonb)
RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT CASE
        WHEN metadata -> 'bpmn' ? 'activity' THEN
            CASE WHEN jsonb_typeof(metadata -> 'bpmn' -> 'activity') = 'string' THEN metadata -> 'bpmn' ->> 'activity' END
        WHEN jsonb_typeof(metadata -> 'bpmn' -> 'process') = 'string'
            AND jsonb_typeof(metadata -> 'bpmn' -> 'job') = 'string'
            AND metadata -> 'bpmn' ->> 'process' <> ''
            AND starts_with(metadata -> 'bpmn' ->> 'job', (metadata -> 'bpmn' ->> 'process') || ':')
            THEN substr(metadata -> 'bpmn' ->> 'job', length(metadata -> 'bpmn' ->> 'process') + 2)
    END
$$;

-- Whether the job context has the field of position pos equal to the string
-- value: containment, which River's GIN index on metadata answers, then the
-- field itself, as in migration 016. On the labelled form the second test
-- is implied by the first; it is kept for the planner, which estimates the
-- pair as it estimated 016's and so keeps reading a definition's or an
-- instance's jobs through the GIN index (containment alone, estimated from
-- a job definition holding 2% of the rows, got a sequential scan). STABLE,
-- as in migration 016 (jsonb_build_object is).
CREATE OR REPLACE FUNCTION /* TEMPLATE: schema */river_bpmn_ctx_has(metadata jsonb, pos integer, name text, value text)
RETURNS boolean
LANGUAGE sql
STABLE
PARALLEL SAFE
AS $$
    SELECT metadata @> jsonb_build_object('bpmn', jsonb_build_object(
            ('[0:11]={instance,process,activity,job,priority,exclusive,deployment,type,retry,tenant,root,parent}'::text[])[pos], value))
        AND /* TEMPLATE: schema */river_bpmn_ctx_field(metadata, pos, name) = to_jsonb(value)
$$;

-- A job context in the object form of migrations before 016 (the fields'
-- JSON names), whichever form it is stored in, with what the labelled form
-- leaves out filled in (priority 0, exclusive true with an instance, the
-- derived activity): for readers that show the context to people or to
-- programs written against the object form (the events of package events,
-- whose rows keep the form of their time). An array's non-null elements
-- under their names, an object of that form as it is, anything else as it
-- is.
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
        WHEN jsonb_typeof(ctx) = 'object' AND NOT /* TEMPLATE: schema */river_bpmn_ctx_is_earlier_form(ctx)
            AND ctx <> '{}'::jsonb THEN coalesce((
            SELECT jsonb_object_agg(f.name, f.value)
            FROM (
                SELECT l.name, CASE
                    WHEN l.label = 'priority' AND NOT ctx ? 'priority' THEN '0'::jsonb
                    WHEN l.label = 'exclusive' AND NOT ctx ? 'exclusive' AND ctx ? 'instance' THEN 'true'::jsonb
                    WHEN l.label = 'activity' AND NOT ctx ? 'activity'
                        AND jsonb_typeof(ctx -> 'process') = 'string' AND jsonb_typeof(ctx -> 'job') = 'string'
                        AND starts_with(ctx ->> 'job', (ctx ->> 'process') || ':')
                        THEN jsonb_object(ARRAY['a', substr(ctx ->> 'job', length(ctx ->> 'process') + 2)]) -> 'a'
                    ELSE ctx -> l.label
                END AS value
                FROM unnest(
                    ARRAY['instance', 'process', 'activity', 'job', 'priority', 'exclusive',
                        'deployment', 'type', 'retry', 'tenant', 'root', 'parent'],
                    ARRAY['process_instance_id', 'process_definition_key', 'activity_id',
                        'job_definition_id', 'priority', 'exclusive', 'deployment_id', 'job_type',
                        'retry_cycle', 'tenant_id', 'root_process_instance_id', 'parent_process_instance_id'])
                    AS l (label, name)
            ) AS f
            WHERE f.value IS NOT NULL AND f.value <> 'null'::jsonb
        ), '{}'::jsonb)
        ELSE ctx
    END
$$;

-- Migration 027's instance of an event's job context (the GIN index of
-- events by instance): the labelled form's "instance" too. The events kept
-- from before hold arrays and objects, read as before, so the index stays
-- valid.
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
        WHEN jsonb_typeof(ctx) = 'object' AND jsonb_typeof(ctx -> 'instance') = 'string'
            AND NOT /* TEMPLATE: schema */river_bpmn_ctx_is_earlier_form(ctx)
            THEN ctx ->> 'instance'
    END
$$;

-- metadata with the job context field of position pos set to value (the
-- overriding priority below, the job definition cascade,
-- Engine.SetJobPriority). Metadata without a job context gets one holding
-- only this field.
CREATE OR REPLACE FUNCTION /* TEMPLATE: schema */river_bpmn_ctx_set(metadata jsonb, pos integer, name text, value jsonb)
RETURNS jsonb
LANGUAGE sql
IMMUTABLE
PARALLEL SAFE
AS $$
    SELECT CASE jsonb_typeof(metadata -> 'bpmn')
        WHEN 'object' THEN jsonb_set(metadata, ARRAY['bpmn',
            ('[0:11]={instance,process,activity,job,priority,exclusive,deployment,type,retry,tenant,root,parent}'::text[])[pos]], value)
        ELSE metadata || jsonb_build_object('bpmn', jsonb_build_object(
            ('[0:11]={instance,process,activity,job,priority,exclusive,deployment,type,retry,tenant,root,parent}'::text[])[pos], value))
    END
$$;

-- Migration 016's overriding priority, on the labelled form, after
-- rewriting a context stored in an earlier form (by a client that writes
-- the array). A context whose priority is JSON null (prioritised job
-- creation off) is left alone; an absent priority is 0, and is overridden.
CREATE OR REPLACE FUNCTION /* TEMPLATE: schema */river_bpmn_job_apply_overriding_priority()
RETURNS trigger
LANGUAGE plpgsql
AS $$
DECLARE
    job_definition_id text;
    override bigint;
BEGIN
    IF /* TEMPLATE: schema */river_bpmn_ctx_is_earlier_form(NEW.metadata -> 'bpmn')
        AND jsonb_typeof(NEW.metadata) = 'object' THEN
        NEW.metadata := jsonb_set(NEW.metadata, '{bpmn}',
            /* TEMPLATE: schema */river_bpmn_ctx_labelled(NEW.metadata -> 'bpmn'));
    END IF;
    job_definition_id := /* TEMPLATE: schema */river_bpmn_ctx_job_definition(NEW.metadata);
    IF job_definition_id IS NULL OR NEW.metadata -> 'bpmn' -> 'priority' = 'null'::jsonb THEN
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

-- The indexes over the accessors: dropped, the rows rewritten, built again
-- from their definitions (pg_get_indexdef), so that no index holds values
-- of the old accessors and every session's cached index expressions are the
-- new ones.
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

UPDATE /* TEMPLATE: schema */river_job
SET metadata = jsonb_set(metadata, '{bpmn}', /* TEMPLATE: schema */river_bpmn_ctx_labelled(metadata -> 'bpmn'))
WHERE jsonb_typeof(metadata) = 'object'
    AND /* TEMPLATE: schema */river_bpmn_ctx_is_earlier_form(metadata -> 'bpmn');

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
