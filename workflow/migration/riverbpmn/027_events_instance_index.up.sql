-- riverbpmn migration line "riverbpmn", version 27: the job status events of
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
-- Measured with scripts/events-trigger-cost.sh (without and with this
-- migration, interleaved, 100 distinct instances in each 100-job statement, 2 shared
-- cores, load average 11.5 to 11.8): trigger time per statement median
-- 0.30-0.33 ms without the index, 0.57-0.58 ms with it (one round of three
-- 1.9 ms, its p25 0.59 ms: a load spike), so about 5 us more per job (a
-- fetch and a completion); WAL 28 bytes per event without, 54 with. With
-- events off there is no trigger, no row and no index write. Building the
-- index reads the retained outbox once (4 to 7 s for 1,000,000 events):
-- prune it first on a large one.

-- The process instance of one event's job context as the trigger stored
-- it (either form of the context, migration 016), as
-- river_bpmn_ctx_instance reads it (element 0 of the array form, key
-- process_instance_id of the object form, a JSON string only) but on the
-- context itself: wrapping each
-- context in a metadata object to call the accessor made the index four
-- times as dear to write. A single expression, so inlined where it is
-- called.
CREATE FUNCTION /* TEMPLATE: schema */river_bpmn_event_instance(ctx jsonb)
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

-- The distinct process instances of an outbox row's events (one job
-- context per event), NULL when none has one: what the index holds.
CREATE FUNCTION /* TEMPLATE: schema */river_bpmn_event_instances(job_context jsonb[])
RETURNS text[]
LANGUAGE sql
IMMUTABLE
PARALLEL SAFE
AS $$
    SELECT array_agg(DISTINCT i.instance)
    FROM unnest(job_context) AS c (ctx)
    CROSS JOIN LATERAL (SELECT /* TEMPLATE: schema */river_bpmn_event_instance(c.ctx) AS instance) i
    WHERE i.instance IS NOT NULL
$$;

CREATE INDEX river_bpmn_event_instances_idx ON /* TEMPLATE: schema */river_bpmn_event
    USING gin (/* TEMPLATE: schema */river_bpmn_event_instances(job_context));
