-- riverbpmn migration line "riverbpmn", version 9: the job status event
-- outbox (package events).
--
-- This migration creates the outbox and the function that fills it, but no
-- trigger: a schema where events are off pays nothing on any path. Enabling
-- events (events.Enable, Engine.EnableEvents, `riverbpmn events-enable`, or a
-- client of an engine with Config.Events set) creates the statement trigger
-- river_bpmn_job_event on river_job; disabling drops it.
--
-- The cursor. Events are ordered by (txid, id): txid is the writing
-- transaction's 64-bit id, id a sequence within it. A reader only takes rows
-- whose txid is below the oldest transaction of this database still running
-- when the reader looked (events/sql/read.sql): a row with a lower (txid,
-- id) than one already read can never appear later, so a reader that
-- resumes after its last (txid, id) misses nothing. (A plain serial id does
-- not have this property: ids are taken at insert, transactions commit in
-- another order.) A long-running transaction in this database delays
-- delivery until it ends; it never loses an event.
CREATE TABLE /* TEMPLATE: schema */river_bpmn_event (
    txid xid8 NOT NULL DEFAULT pg_current_xact_id(),
    id bigint GENERATED ALWAYS AS IDENTITY,
    -- RUNNING, SUCCEEDED, FAILED, ABORTED or INCIDENT.
    status text NOT NULL,
    job_id bigint NOT NULL,
    kind text NOT NULL,
    queue text NOT NULL,
    attempt smallint NOT NULL,
    -- FAILED: whether the job will run again (false: it was discarded or
    -- cancelled itself). NULL for the other statuses.
    retries_left boolean,
    -- FAILED and INCIDENT: the attempt's error (at most 4000 characters).
    error text,
    -- The job context (metadata -> 'bpmn'), NULL for a plain River job, and
    -- its process instance for filtering.
    process_instance_id text,
    job_context jsonb,
    -- When the change happened, by the job's own times (attempted_at for
    -- RUNNING, finalized_at for final states), else when it was recorded.
    at timestamptz NOT NULL,
    -- When the row was written; pruning goes by it.
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (txid, id)
);

-- Durable subscriptions: the position of each named subscriber, so that a
-- subscriber that restarts resumes where it stopped.
CREATE TABLE /* TEMPLATE: schema */river_bpmn_event_subscription (
    name text PRIMARY KEY CHECK (name <> '' AND length(name) <= 255),
    txid xid8 NOT NULL,
    id bigint NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
);

-- Records the status changes of one UPDATE statement on river_job, from its
-- transition tables, in the same transaction, and wakes subscribers (the
-- notification carries nothing: it only says "look"). Metadata is read
-- defensively: a malformed value gives NULL columns, never an error that
-- would make River's UPDATE fail.
CREATE FUNCTION /* TEMPLATE: schema */river_bpmn_job_event()
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
