-- riverbpmn migration line "riverbpmn", version 26: the parent process
-- instance of a job context.
--
-- A job context may name the process instance that called its instance
-- (workflow.JobContext.ParentProcessInstanceID), stored at position 11 of
-- the compact array (the key parent_process_instance_id of the object form
-- of migrations before 016), so that instance trees nest each instance
-- under its caller. Migration 016's river_bpmn_ctx_field already reads any
-- position and name; this adds the accessor. No index and no row change:
-- jobs written before have no parent, and their instances are shown under
-- their root. A client of an earlier release refuses to read a context of
-- twelve fields: upgrade every client before inserting jobs that name a
-- parent.
CREATE FUNCTION /* TEMPLATE: schema */river_bpmn_ctx_parent(metadata jsonb)
RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT /* TEMPLATE: schema */river_bpmn_ctx_string(metadata, 11, 'parent_process_instance_id') $$;

-- The object form of a context (for status events) names the parent too.
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
