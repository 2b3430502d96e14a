-- riverbpmn migration line "riverbpmn", version 13: a cheaper job status
-- event trigger (package events; the outbox is migration 009's).
--
-- Same events, same transaction, same cursor; three costs of 009's function
-- removed (each measured):
--
--  1. The join of the transition tables. A trigger function's plan is cached
--     from its first call, when the transition tables may have held a row or
--     two, so 009's plan joined old_rows to new_rows by a nested loop: for
--     River's batches of 100 to a few hundred rows, 10,000 or more
--     comparisons per statement, most of the function's time. The function
--     now plans without nested loops (a merge or hash join whatever the
--     cached estimates) and without JIT (the penalty for a disabled nested
--     loop would otherwise push the cost above jit_above_cost).
--  2. The identity of river_bpmn_event: each backend now takes its ids
--     1,000 at a time instead of one by one. The cursor is (txid, id); ids
--     only need to be unique and increasing within a transaction, which a
--     backend's cached block of values gives.
--  3. The notification. NOTIFY serializes committing transactions that
--     notified (PostgreSQL holds a database-wide lock from before the commit
--     record until after it is flushed), so with a notification per
--     statement every fetch and completion of River committed one after the
--     other, each waiting for the other's WAL flush. A statement now
--     notifies only when no statement of this schema has done so in the
--     current 50 ms (the last one's slot is kept in the sequence
--     river_bpmn_event_notified, outside any transaction). Subscribers read
--     again 50 ms after every batch they got (events.Subscribe), so a burst's
--     last events do not wait for the poll interval; the notification only
--     ever wakes subscribers early, and delivery never depended on it.

CREATE SEQUENCE /* TEMPLATE: schema */river_bpmn_event_notified MINVALUE 0 START 0;

ALTER TABLE /* TEMPLATE: schema */river_bpmn_event ALTER COLUMN id SET CACHE 1000;

-- Records the status changes of one UPDATE statement on river_job, from its
-- transition tables (see migration 009 for the statuses).
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
        CASE WHEN jsonb_typeof(m.ctx -> 'process_instance_id') = 'string'
            THEN m.ctx ->> 'process_instance_id' END,
        CASE WHEN jsonb_typeof(m.ctx) = 'object' THEN m.ctx END,
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
