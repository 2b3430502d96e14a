-- Back to migration 009's event trigger function, identity and notification.
CREATE OR REPLACE FUNCTION /* TEMPLATE: schema */river_bpmn_job_event()
RETURNS trigger
LANGUAGE plpgsql
AS $$
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
        CASE WHEN jsonb_typeof(n.metadata -> 'bpmn' -> 'process_instance_id') = 'string'
            THEN n.metadata -> 'bpmn' ->> 'process_instance_id' END,
        CASE WHEN jsonb_typeof(n.metadata -> 'bpmn') = 'object' THEN n.metadata -> 'bpmn' END,
        CASE WHEN ev.status = 'RUNNING' THEN coalesce(n.attempted_at, now())
            ELSE coalesce(n.finalized_at, clock_timestamp()) END
    FROM new_rows n
    JOIN old_rows o ON o.id = n.id
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
            (CASE WHEN n.state = 'discarded' AND n.metadata ? 'bpmn' THEN 'INCIDENT' END, NULL::boolean)
        ) AS s (status, retries_left)
        WHERE s.status IS NOT NULL
    ) AS ev
    WHERE n.state IS DISTINCT FROM o.state
    ORDER BY n.id, ev.status;

    IF FOUND THEN
        PERFORM pg_notify(TG_TABLE_SCHEMA || '.river_bpmn_event', '');
    END IF;
    RETURN NULL;
END;
$$;

ALTER TABLE /* TEMPLATE: schema */river_bpmn_event ALTER COLUMN id SET CACHE 1;

DROP SEQUENCE /* TEMPLATE: schema */river_bpmn_event_notified;
