-- Back to one outbox row per event (migration 016's trigger). Every event
-- becomes a row of its own with its id (the row's id plus its position), so
-- cursors keep their meaning in this direction too.

-- Split the rows of several events: events 2.. get rows of their own, the
-- row keeps its first.
INSERT INTO /* TEMPLATE: schema */river_bpmn_event
    (txid, id, event_count, status, job_id, kind, queue, attempt, retries_left, error, job_context, at, created_at)
OVERRIDING SYSTEM VALUE
SELECT e.txid, e.id + u.ord - 1, 1, ARRAY[u.status], ARRAY[u.job_id], ARRAY[u.kind], ARRAY[u.queue], ARRAY[u.attempt],
    ARRAY[u.retries_left], ARRAY[u.error], ARRAY[u.job_context], ARRAY[u.at], e.created_at
FROM /* TEMPLATE: schema */river_bpmn_event e
CROSS JOIN LATERAL unnest(e.status, e.job_id, e.kind, e.queue, e.attempt, e.retries_left, e.error, e.job_context, e.at)
    WITH ORDINALITY AS u (status, job_id, kind, queue, attempt, retries_left, error, job_context, at, ord)
WHERE e.event_count > 1 AND u.ord > 1;

ALTER TABLE /* TEMPLATE: schema */river_bpmn_event
    DROP COLUMN event_count,
    ALTER COLUMN status TYPE text USING status[1],
    ALTER COLUMN job_id TYPE bigint USING job_id[1],
    ALTER COLUMN kind TYPE text USING kind[1],
    ALTER COLUMN queue TYPE text USING queue[1],
    ALTER COLUMN attempt TYPE smallint USING attempt[1],
    ALTER COLUMN retries_left TYPE boolean USING retries_left[1],
    ALTER COLUMN retries_left DROP NOT NULL,
    ALTER COLUMN error TYPE text USING error[1],
    ALTER COLUMN error DROP NOT NULL,
    ALTER COLUMN job_context TYPE jsonb USING CASE WHEN jsonb_typeof(job_context[1]) IN ('object', 'array') THEN job_context[1] END,
    ALTER COLUMN job_context DROP NOT NULL,
    ALTER COLUMN at TYPE timestamptz USING at[1],
    ADD COLUMN process_instance_id text;

UPDATE /* TEMPLATE: schema */river_bpmn_event
SET process_instance_id = /* TEMPLATE: schema */river_bpmn_ctx_instance(jsonb_build_object('bpmn', job_context))
WHERE job_context IS NOT NULL;

DO $do$
BEGIN
    EXECUTE format('ALTER TABLE %s ALTER COLUMN id SET INCREMENT BY 1 RESTART WITH %s',
        '/* TEMPLATE: schema */river_bpmn_event',
        (SELECT coalesce(max(id), 0) + 1 FROM /* TEMPLATE: schema */river_bpmn_event));
END;
$do$;

DO $do$
BEGIN
    IF current_setting('server_version_num')::int >= 140000 THEN
        EXECUTE format('ALTER TABLE %s %s', '/* TEMPLATE: schema */river_bpmn_event',
            (SELECT string_agg(format('ALTER COLUMN %I SET COMPRESSION default', c), ', ')
             FROM unnest(ARRAY['status', 'job_id', 'kind', 'queue', 'attempt', 'retries_left',
                 'error', 'job_context', 'at']) AS c));
    END IF;
END;
$do$;

-- Migration 016's function.
CREATE OR REPLACE FUNCTION /* TEMPLATE: schema */river_bpmn_job_event()
RETURNS trigger
LANGUAGE plpgsql
SET enable_nestloop = off
SET jit = off
AS $$
DECLARE
    bucket bigint;
BEGIN
    INSERT INTO /* TEMPLATE: schema */river_bpmn_event
        (status, job_id, kind, queue, attempt, retries_left, error, process_instance_id, job_context, at)
    SELECT
        ev.status,
        n.id,
        n.kind,
        n.queue,
        n.attempt,
        CASE WHEN ev.status = 'FAILED' THEN ev.retries_left END,
        CASE WHEN ev.status IN ('FAILED', 'INCIDENT') THEN
            left(n.errors[array_upper(n.errors, 1)] ->> 'error', 4000)
        END,
        /* TEMPLATE: schema */river_bpmn_ctx_instance(n.metadata),
        CASE WHEN jsonb_typeof(m.ctx) IN ('object', 'array') THEN m.ctx END,
        CASE WHEN ev.status = 'RUNNING' THEN coalesce(n.attempted_at, now())
            ELSE coalesce(n.finalized_at, clock_timestamp()) END
    FROM new_rows n
    JOIN old_rows o ON o.id = n.id AND o.state IS DISTINCT FROM n.state
    CROSS JOIN LATERAL (SELECT n.metadata -> 'bpmn' AS ctx) m
    CROSS JOIN LATERAL (
        SELECT s.status, s.retries_left
        FROM (VALUES
            (CASE
                WHEN n.state = 'running' THEN 'RUNNING'
                WHEN n.state = 'completed' THEN 'SUCCEEDED'
                WHEN n.state = 'discarded' THEN 'FAILED'
                WHEN n.state = 'cancelled' AND n.metadata ? 'cancel_attempted_at' THEN 'ABORTED'
                WHEN n.state = 'cancelled' THEN 'FAILED'
                WHEN o.state = 'running'
                    AND coalesce(array_length(n.errors, 1), 0) > coalesce(array_length(o.errors, 1), 0)
                    THEN 'FAILED'
            END,
            CASE
                WHEN n.state IN ('discarded', 'cancelled') THEN false
                WHEN n.state IN ('available', 'retryable', 'scheduled') THEN true
            END),
            (CASE WHEN n.state = 'discarded' AND m.ctx IS NOT NULL THEN 'INCIDENT' END, NULL::boolean)
        ) AS s (status, retries_left)
        WHERE s.status IS NOT NULL
    ) AS ev
    ORDER BY n.id, ev.status;

    IF FOUND THEN
        bucket := (extract(epoch FROM clock_timestamp()) * 20)::bigint;
        IF bucket > coalesce(pg_sequence_last_value(format('%I.river_bpmn_event_notified', TG_TABLE_SCHEMA)::regclass), 0) THEN
            PERFORM setval(format('%I.river_bpmn_event_notified', TG_TABLE_SCHEMA)::regclass, bucket);
            PERFORM pg_notify(TG_TABLE_SCHEMA || '.river_bpmn_event', '');
        END IF;
    END IF;
    RETURN NULL;
END;
$$;
