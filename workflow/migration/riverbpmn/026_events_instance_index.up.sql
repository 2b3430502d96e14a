-- riverbpmn migration line "riverbpmn", version 26: the job status events of
-- one process instance, found by an index (package events).
--
-- An outbox row holds the events of one statement on river_job (migration
-- 017), often of many process instances, so the events of one instance were
-- found by walking the newest rows backward and unpacking each: a console
-- page of one instance's history looked at 10,000 events and took about a
-- second over 1,000,000 events, and could not reach further back. The rows
-- now carry a GIN index over the distinct process instances of their events
-- (river_bpmn_event_instances below), and events.ReadBackward reads only
-- the rows of the instance asked for, however far back they are.
--
-- Cost: the index is written with every outbox row, that is once per River
-- statement that changed a job's state while events are on (a GIN entry per
-- distinct instance of the statement's jobs, through GIN's pending list).
-- With events off there is no trigger, no row and no index write. Building
-- the index reads the retained outbox once: prune it first on a large one.

-- The distinct process instances of an outbox row's job contexts (one per
-- event, as the trigger stored them: either form of the context, migration
-- 016), NULL when none has one. It reads the instance as
-- river_bpmn_ctx_instance does (element 0 of the array form, key
-- process_instance_id of the object form, a JSON string only) but on the
-- context itself: wrapping each context in a metadata object to call the
-- accessor made the index four times as dear to write.
CREATE FUNCTION /* TEMPLATE: schema */river_bpmn_event_instances(job_context jsonb[])
RETURNS text[]
LANGUAGE sql
IMMUTABLE
PARALLEL SAFE
AS $$
    SELECT array_agg(DISTINCT f.value #>> '{}')
    FROM unnest(job_context) AS c (ctx)
    CROSS JOIN LATERAL (
        SELECT CASE jsonb_typeof(c.ctx)
            WHEN 'array' THEN c.ctx -> 0
            WHEN 'object' THEN c.ctx -> 'process_instance_id'
        END AS value
    ) f
    WHERE jsonb_typeof(f.value) = 'string'
$$;

CREATE INDEX river_bpmn_event_instances_idx ON /* TEMPLATE: schema */river_bpmn_event
    USING gin (/* TEMPLATE: schema */river_bpmn_event_instances(job_context));
