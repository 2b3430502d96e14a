-- riverbpmn migration line "riverbpmn", version 26, down: the accessor of
-- the parent process instance goes and the object form of a context no
-- longer names it; contexts that name a parent keep it in their metadata.
DROP FUNCTION /* TEMPLATE: schema */river_bpmn_ctx_parent(jsonb);

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
