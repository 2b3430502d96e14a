-- riverbpmn migration line "riverbpmn", version 17: one outbox row per
-- statement instead of one per event (package events).
--
-- Same events, same transaction, same cursor. What 013 (and 016, which
-- only moved its reads onto the job context accessors) left was the insert
-- itself: one row per event, two per job (RUNNING at fetch, SUCCEEDED at
-- completion), each with its tuple header, primary key entry and sequence
-- value, about 455 bytes of WAL per event (the job context about 260 of
-- them). The trigger now writes the events of one UPDATE statement on
-- river_job into one row, as parallel arrays (element i of every array is
-- event i), and the reader unpacks them (events/sql/read.sql). Per-row costs
-- are paid per statement (River fetches and completes up to a few hundred
-- jobs per statement); the row is large enough to be compressed, with lz4
-- where the server has it (cheaper than pglz, below).
--
-- Trigger time per 100-row statement, EXPLAIN (ANALYZE, BUFFERS, WAL) of 40
-- River-like fetches and 40 completions of 100 jobs in a fresh session, the
-- first statement completing nothing (013's method), versions 13 and 17
-- interleaved, 3 runs each (scripts/events-trigger-cost.sh; 2 shared cores,
-- load average 3.8-4.2): median 013 0.88-1.05 ms, 017 0.32-0.38 ms, that is
-- 17.5-20.9 us per job (2 statements of 100 jobs) against 6.5-7.7 us;
-- minimum 0.67-0.80 against 0.22-0.23 ms. WAL of the outbox insert: 454
-- bytes per event against 29-30 (about 2,950 bytes per 100-event row, lz4
-- compressed, the job contexts TOASTed). pglz instead of lz4: 10-40% more
-- trigger time, 15% less WAL; the contexts stored uncompressed out of line:
-- slower than both; one jsonb array of the events per row instead of
-- parallel arrays: about twice the time (building JSON costs, copying
-- datums into arrays does not).

-- Event ids. The row's id is its first event's id, its i-th event (from 1)
-- has id + i - 1: ids are drawn 1,024 apart and a row holds at most 1,024
-- events (event_count; a larger statement writes several rows). So event
-- ids stay unique and increasing within a transaction, and the cursor
-- (txid, event id) keeps its meaning and format. A reader unpacks only the
-- rows its batch needs (by event_count), however large the statement.
--
-- Existing rows. Every row becomes a row of one event with the same txid
-- and id, so a cursor saved before this migration (a named subscription's,
-- or one an application kept) resumes exactly where it was. The table is
-- rewritten once (proportional to the retained outbox; writers of events,
-- that is River's fetches and completions while events are enabled, wait
-- for it; pruning first or disabling events makes it quick). A River
-- statement whose trigger call was already waiting on the rewrite may run
-- the old function body and fail once (its transaction rolls back; River
-- fetches or completes again). Subscribers of an older
-- riverbpmn cannot read the new rows: upgrade them with the migration.
--
-- process_instance_id is no longer stored: the reader derives it from the
-- job context it returns.

ALTER TABLE /* TEMPLATE: schema */river_bpmn_event
    DROP COLUMN process_instance_id,
    ALTER COLUMN status TYPE text[] USING ARRAY[status],
    ALTER COLUMN job_id TYPE bigint[] USING ARRAY[job_id],
    ALTER COLUMN kind TYPE text[] USING ARRAY[kind],
    ALTER COLUMN queue TYPE text[] USING ARRAY[queue],
    ALTER COLUMN attempt TYPE smallint[] USING ARRAY[attempt],
    ALTER COLUMN retries_left TYPE boolean[] USING ARRAY[retries_left],
    ALTER COLUMN retries_left SET NOT NULL,
    ALTER COLUMN error TYPE text[] USING ARRAY[error],
    ALTER COLUMN error SET NOT NULL,
    ALTER COLUMN job_context TYPE jsonb[] USING ARRAY[job_context],
    ALTER COLUMN job_context SET NOT NULL,
    ALTER COLUMN at TYPE timestamptz[] USING ARRAY[at],
    -- The row's number of events (the arrays' length), so that readers
    -- count events without reading the arrays.
    ADD COLUMN event_count smallint NOT NULL DEFAULT 1;
ALTER TABLE /* TEMPLATE: schema */river_bpmn_event ALTER COLUMN event_count DROP DEFAULT;

-- Ids 1,024 apart from here on, above every existing one. RESTART gives the
-- sequence a new file, so no backend goes on with values it had cached.
DO $do$
BEGIN
    EXECUTE format('ALTER TABLE %s ALTER COLUMN id SET INCREMENT BY 1024 RESTART WITH %s',
        '/* TEMPLATE: schema */river_bpmn_event',
        (SELECT coalesce(max(id), 0) + 1 FROM /* TEMPLATE: schema */river_bpmn_event));
END;
$do$;

-- lz4 where the server has it (PostgreSQL 14 or later built with lz4):
-- compressing a 100-event row takes about a third of pglz's time. Otherwise
-- the server's default compression.
DO $do$
BEGIN
    IF current_setting('server_version_num')::int >= 140000 THEN
        EXECUTE format('ALTER TABLE %s %s', '/* TEMPLATE: schema */river_bpmn_event',
            (SELECT string_agg(format('ALTER COLUMN %I SET COMPRESSION lz4', c), ', ')
             FROM unnest(ARRAY['status', 'job_id', 'kind', 'queue', 'attempt', 'retries_left',
                 'error', 'job_context', 'at']) AS c));
    END IF;
EXCEPTION WHEN feature_not_supported THEN
    NULL; -- built without lz4
END;
$do$;

-- Records the status changes of one UPDATE statement on river_job, from its
-- transition tables (statuses: migration 009), as one row (or one per 1,024
-- events). INCIDENT, which follows FAILED for a discarded job with a job
-- context, is written by a second insert that runs only when the statement
-- discarded a job.
CREATE OR REPLACE FUNCTION /* TEMPLATE: schema */river_bpmn_job_event()
RETURNS trigger
LANGUAGE plpgsql
SET enable_nestloop = off
SET jit = off
AS $$
DECLARE
    bucket bigint;
    recorded boolean;
BEGIN
    INSERT INTO /* TEMPLATE: schema */river_bpmn_event
        (event_count, status, job_id, kind, queue, attempt, retries_left, error, job_context, at)
    SELECT
        count(*),
        array_agg(e.status), array_agg(e.id), array_agg(e.kind), array_agg(e.queue), array_agg(e.attempt),
        array_agg(CASE WHEN e.status = 'FAILED' THEN e.retries_left END),
        array_agg(CASE WHEN e.status = 'FAILED' THEN e.error END),
        array_agg(e.ctx),
        array_agg(CASE WHEN e.status = 'RUNNING' THEN coalesce(e.attempted_at, now())
            ELSE coalesce(e.finalized_at, clock_timestamp()) END)
    FROM (
        SELECT
            (row_number() OVER () - 1) / 1024 AS chunk,
            n.id, n.kind, n.queue, n.attempt, n.attempted_at, n.finalized_at,
            CASE
                WHEN n.state = 'running' THEN 'RUNNING'
                WHEN n.state = 'completed' THEN 'SUCCEEDED'
                WHEN n.state = 'discarded' THEN 'FAILED'
                WHEN n.state = 'cancelled' AND n.metadata ? 'cancel_attempted_at' THEN 'ABORTED'
                WHEN n.state = 'cancelled' THEN 'FAILED'
                WHEN o.state = 'running'
                    AND coalesce(array_length(n.errors, 1), 0) > coalesce(array_length(o.errors, 1), 0)
                    THEN 'FAILED'
            END AS status,
            CASE
                WHEN n.state IN ('discarded', 'cancelled') THEN false
                WHEN n.state IN ('available', 'retryable', 'scheduled') THEN true
            END AS retries_left,
            CASE WHEN n.state NOT IN ('running', 'completed') THEN
                left(n.errors[array_upper(n.errors, 1)] ->> 'error', 4000)
            END AS error,
            -- The job context as stored, whatever its JSON type; the reader
            -- interprets it (events/sql/read.sql).
            n.metadata -> 'bpmn' AS ctx
        FROM new_rows n
        JOIN old_rows o ON o.id = n.id AND o.state IS DISTINCT FROM n.state
    ) e
    WHERE e.status IS NOT NULL
    GROUP BY e.chunk;
    recorded := FOUND;

    IF EXISTS (SELECT 1 FROM new_rows WHERE state = 'discarded') THEN
        INSERT INTO /* TEMPLATE: schema */river_bpmn_event
            (event_count, status, job_id, kind, queue, attempt, retries_left, error, job_context, at)
        SELECT
            count(*),
            array_agg('INCIDENT'::text), array_agg(e.id), array_agg(e.kind), array_agg(e.queue), array_agg(e.attempt),
            array_agg(NULL::boolean), array_agg(e.error), array_agg(e.ctx), array_agg(e.at)
        FROM (
            SELECT
                (row_number() OVER () - 1) / 1024 AS chunk,
                n.id, n.kind, n.queue, n.attempt,
                left(n.errors[array_upper(n.errors, 1)] ->> 'error', 4000) AS error,
                n.metadata -> 'bpmn' AS ctx,
                coalesce(n.finalized_at, clock_timestamp()) AS at
            FROM new_rows n
            JOIN old_rows o ON o.id = n.id AND o.state IS DISTINCT FROM n.state
            WHERE n.state = 'discarded' AND n.metadata ? 'bpmn'
        ) e
        GROUP BY e.chunk;
        recorded := recorded OR FOUND;
    END IF;

    IF recorded THEN
        bucket := (extract(epoch FROM clock_timestamp()) * 20)::bigint;
        IF bucket > coalesce(pg_sequence_last_value(format('%I.river_bpmn_event_notified', TG_TABLE_SCHEMA)::regclass), 0) THEN
            PERFORM setval(format('%I.river_bpmn_event_notified', TG_TABLE_SCHEMA)::regclass, bucket);
            PERFORM pg_notify(TG_TABLE_SCHEMA || '.river_bpmn_event', '');
        END IF;
    END IF;
    RETURN NULL;
END;
$$;
