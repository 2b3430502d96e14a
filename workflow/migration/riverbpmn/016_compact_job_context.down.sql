-- Back to migration 015's job context: rows written in the array form are
-- rewritten to the object form first (the readers of 015 read only that),
-- then the functions, indexes and triggers of migrations 002-015 that read
-- the job context are restored as they were.
UPDATE /* TEMPLATE: schema */river_job
SET metadata = jsonb_set(metadata, '{bpmn}', /* TEMPLATE: schema */river_bpmn_ctx_object(metadata -> 'bpmn'))
WHERE jsonb_typeof(metadata -> 'bpmn') = 'array';

DROP INDEX IF EXISTS /* TEMPLATE: schema */river_bpmn_fetch_tenant;
DROP INDEX IF EXISTS /* TEMPLATE: schema */river_bpmn_fetch_tenant_p;
DROP INDEX IF EXISTS /* TEMPLATE: schema */river_bpmn_fetch_tenant_t;
DROP INDEX IF EXISTS /* TEMPLATE: schema */river_bpmn_fetch_tenant_d;
DROP INDEX IF EXISTS /* TEMPLATE: schema */river_bpmn_fetch_tenant_pt;
DROP INDEX IF EXISTS /* TEMPLATE: schema */river_bpmn_fetch_tenant_pd;
DROP INDEX IF EXISTS /* TEMPLATE: schema */river_bpmn_fetch_tenant_td;
DROP INDEX IF EXISTS /* TEMPLATE: schema */river_bpmn_fetch_tenant_ptd;
DROP INDEX IF EXISTS /* TEMPLATE: schema */river_bpmn_fetch_p;
DROP INDEX IF EXISTS /* TEMPLATE: schema */river_bpmn_fetch_t;
DROP INDEX IF EXISTS /* TEMPLATE: schema */river_bpmn_fetch_pt;
DROP INDEX IF EXISTS /* TEMPLATE: schema */river_bpmn_fetch_pd;
DROP INDEX IF EXISTS /* TEMPLATE: schema */river_bpmn_fetch_td;
DROP INDEX IF EXISTS /* TEMPLATE: schema */river_bpmn_fetch_ptd;
DROP INDEX /* TEMPLATE: schema */river_bpmn_job_exclusive_instance;
DROP INDEX /* TEMPLATE: schema */river_bpmn_job_exclusive_root;
DROP INDEX /* TEMPLATE: schema */river_bpmn_job_exclusive_instance_p;
DROP INDEX /* TEMPLATE: schema */river_bpmn_job_exclusive_root_p;
DROP STATISTICS /* TEMPLATE: schema */river_bpmn_job_priority;
DROP STATISTICS /* TEMPLATE: schema */river_bpmn_job_deployment;

-- Migration 003's functions and statistics (the fetch-order indexes are
-- built on demand since migration 015; those built over the accessors went
-- above).
CREATE FUNCTION /* TEMPLATE: schema */river_bpmn_priority(metadata jsonb)
RETURNS bigint
LANGUAGE sql
IMMUTABLE
PARALLEL SAFE
AS $$
    SELECT CASE
        WHEN jsonb_typeof(metadata -> 'bpmn' -> 'priority') = 'number'
            AND (metadata -> 'bpmn' ->> 'priority') ~ '^-?[0-9]{1,19}$'
            AND (metadata -> 'bpmn' ->> 'priority')::numeric BETWEEN -9223372036854775808 AND 9223372036854775807
        THEN (metadata -> 'bpmn' ->> 'priority')::bigint
        ELSE 0
    END
$$;

CREATE FUNCTION /* TEMPLATE: schema */river_bpmn_is_timer(metadata jsonb)
RETURNS boolean
LANGUAGE sql
IMMUTABLE
PARALLEL SAFE
AS $$
    SELECT coalesce(metadata -> 'bpmn' -> 'job_type' = '"timer"'::jsonb, false)
$$;

CREATE FUNCTION /* TEMPLATE: schema */river_bpmn_deployment(metadata jsonb)
RETURNS text
LANGUAGE sql
IMMUTABLE
PARALLEL SAFE
AS $$
    SELECT CASE
        WHEN jsonb_typeof(metadata -> 'bpmn' -> 'deployment_id') = 'string'
        THEN metadata -> 'bpmn' ->> 'deployment_id'
    END
$$;

CREATE STATISTICS /* TEMPLATE: schema */river_bpmn_job_priority
    ON (/* TEMPLATE: schema */river_bpmn_priority(metadata))
    FROM /* TEMPLATE: schema */river_job;
CREATE STATISTICS /* TEMPLATE: schema */river_bpmn_job_deployment
    ON (/* TEMPLATE: schema */river_bpmn_deployment(metadata))
    FROM /* TEMPLATE: schema */river_job;


-- Migration 005's and 010's head-of-key indexes.
CREATE INDEX river_bpmn_job_exclusive_instance
    ON /* TEMPLATE: schema */river_job (
        (nullif(metadata -> 'bpmn' ->> 'process_instance_id', '')),
        queue, priority, scheduled_at, id
    )
    WHERE state = 'available' AND metadata -> 'bpmn' -> 'exclusive' = 'true'::jsonb;

CREATE INDEX river_bpmn_job_exclusive_root
    ON /* TEMPLATE: schema */river_job (
        (coalesce(nullif(metadata -> 'bpmn' ->> 'root_process_instance_id', ''), nullif(metadata -> 'bpmn' ->> 'process_instance_id', ''))),
        queue, priority, scheduled_at, id
    )
    WHERE state = 'available' AND metadata -> 'bpmn' -> 'exclusive' = 'true'::jsonb;

CREATE INDEX river_bpmn_job_exclusive_instance_p
    ON /* TEMPLATE: schema */river_job (
        (nullif(metadata -> 'bpmn' -> 'process_instance_id', '""'::jsonb)),
        queue, /* TEMPLATE: schema */river_bpmn_priority(metadata) DESC, priority, scheduled_at, id
    )
    WHERE state = 'available' AND metadata -> 'bpmn' -> 'exclusive' = 'true'::jsonb;

CREATE INDEX river_bpmn_job_exclusive_root_p
    ON /* TEMPLATE: schema */river_job (
        (coalesce(
            nullif(nullif(metadata -> 'bpmn' -> 'root_process_instance_id', 'null'::jsonb), '""'::jsonb),
            nullif(metadata -> 'bpmn' -> 'process_instance_id', '""'::jsonb))),
        queue, /* TEMPLATE: schema */river_bpmn_priority(metadata) DESC, priority, scheduled_at, id
    )
    WHERE state = 'available' AND metadata -> 'bpmn' -> 'exclusive' = 'true'::jsonb;

-- The trigger functions of migrations 002, 004, 007 and 013.
CREATE OR REPLACE FUNCTION /* TEMPLATE: schema */river_bpmn_job_apply_overriding_priority()
RETURNS trigger
LANGUAGE plpgsql
AS $$
DECLARE
    job_definition_id text;
    override bigint;
BEGIN
    IF jsonb_typeof(NEW.metadata -> 'bpmn' -> 'job_definition_id') IS DISTINCT FROM 'string'
        OR NOT (NEW.metadata -> 'bpmn') ? 'priority' THEN
        RETURN NEW;
    END IF;
    job_definition_id := NEW.metadata -> 'bpmn' ->> 'job_definition_id';

    -- Keyed by this river_job table too: schemas do not contend.
    PERFORM pg_advisory_xact_lock_shared(1380076878, hashtext(TG_RELID::text || ':' || job_definition_id));
    SELECT overriding_priority INTO override
    FROM /* TEMPLATE: schema */river_bpmn_job_definition
    WHERE id = job_definition_id
    FOR SHARE;

    IF override IS NOT NULL THEN
        NEW.metadata := jsonb_set(NEW.metadata, '{bpmn,priority}', to_jsonb(override));
    END IF;
    RETURN NEW;
END;
$$;

CREATE OR REPLACE FUNCTION /* TEMPLATE: schema */river_bpmn_job_incident()
RETURNS trigger
LANGUAGE plpgsql
AS $$
DECLARE
    ctx jsonb;
BEGIN
    IF TG_OP = 'UPDATE' AND NEW.state = 'discarded' THEN
        ctx := NEW.metadata -> 'bpmn';
        IF jsonb_typeof(ctx) IS DISTINCT FROM 'object' THEN
            ctx := '{}';
        END IF;
        INSERT INTO /* TEMPLATE: schema */river_bpmn_incident
            (incident_type, job_id, job_definition_id, activity_id, process_instance_id, message)
        VALUES (
            'failedJob',
            NEW.id,
            CASE WHEN jsonb_typeof(ctx -> 'job_definition_id') = 'string' THEN ctx ->> 'job_definition_id' END,
            CASE WHEN jsonb_typeof(ctx -> 'activity_id') = 'string' THEN ctx ->> 'activity_id' END,
            CASE WHEN jsonb_typeof(ctx -> 'process_instance_id') = 'string' THEN ctx ->> 'process_instance_id' END,
            left(NEW.errors[array_upper(NEW.errors, 1)] ->> 'error', 4000)
        )
        ON CONFLICT (job_id) WHERE resolved_at IS NULL DO NOTHING;
    ELSE
        UPDATE /* TEMPLATE: schema */river_bpmn_incident
        SET resolved_at = greatest(clock_timestamp(), created_at)
        WHERE job_id = OLD.id
            AND resolved_at IS NULL;
    END IF;
    RETURN NULL;
END;
$$;

DROP TRIGGER river_bpmn_job_renew_unbounded ON /* TEMPLATE: schema */river_job;
CREATE TRIGGER river_bpmn_job_renew_unbounded
    BEFORE UPDATE OF state ON /* TEMPLATE: schema */river_job
    FOR EACH ROW
    WHEN (OLD.state = 'running'
        AND NEW.state IN ('available', 'retryable')
        AND NEW.attempt >= 1000
        AND NEW.max_attempts = 32767
        AND (NEW.metadata -> 'bpmn' ->> 'retry_cycle' LIKE 'R/%'
            OR NEW.metadata ->> 'bpmn_retry_cycle' LIKE 'R/%'))
    EXECUTE FUNCTION /* TEMPLATE: schema */river_bpmn_job_renew_unbounded();

CREATE OR REPLACE FUNCTION /* TEMPLATE: schema */river_bpmn_job_insert_hold()
RETURNS trigger
LANGUAGE plpgsql
AS $$
DECLARE
    ctx jsonb;
    definition_type text;
    definition_id text;
    instance_id text;
    mode text;
BEGIN
    IF jsonb_typeof(NEW.metadata) IS DISTINCT FROM 'object' THEN
        RETURN NEW;
    END IF;
    IF NEW.metadata ? 'bpmn_hold' THEN
        NEW.metadata := NEW.metadata - 'bpmn_hold';
    END IF;

    mode := current_setting('riverbpmn.suspension_' || TG_RELID::text, true);
    IF mode = 'none' THEN
        RETURN NEW;
    END IF;
    IF current_setting('transaction_isolation') <> 'read committed' THEN
        -- Never waits (a suspension holds the row while it waits for
        -- inserts): fails while a change is under way, or when one
        -- committed after this transaction's snapshot.
        PERFORM 1 FROM /* TEMPLATE: schema */river_bpmn_suspension_epoch FOR SHARE SKIP LOCKED;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'riverbpmn: a suspension is being changed; retry the transaction'
                USING ERRCODE = 'serialization_failure';
        END IF;
    END IF;
    IF mode IS NULL OR mode = '' THEN
        PERFORM pg_advisory_xact_lock_shared(1380076879, hashtext(TG_RELID::text || ':any'));
        mode := CASE WHEN EXISTS (SELECT 1 FROM /* TEMPLATE: schema */river_bpmn_suspension) THEN 'some' ELSE 'none' END;
        PERFORM set_config('riverbpmn.suspension_' || TG_RELID::text, mode, true);
        IF mode = 'none' THEN
            RETURN NEW;
        END IF;
    END IF;

    ctx := NEW.metadata -> 'bpmn';
    IF jsonb_typeof(ctx) IS DISTINCT FROM 'object'
        OR NEW.state NOT IN ('available', 'scheduled', 'pending') THEN
        RETURN NEW;
    END IF;
    IF jsonb_typeof(ctx -> 'job_definition_id') = 'string' THEN
        definition_type := 'job_definition';
        definition_id := ctx ->> 'job_definition_id';
    ELSIF jsonb_typeof(ctx -> 'process_definition_key') = 'string' THEN
        definition_type := 'process_definition';
        definition_id := ctx ->> 'process_definition_key';
    END IF;
    IF jsonb_typeof(ctx -> 'process_instance_id') = 'string' THEN
        instance_id := nullif(ctx ->> 'process_instance_id', '');
    END IF;
    IF definition_id IS NULL AND instance_id IS NULL THEN
        RETURN NEW;
    END IF;

    PERFORM pg_advisory_xact_lock_shared(1380076879,
        hashtext(TG_RELID::text || ':' || (hashtext(t.target_type || ':' || t.target_id) & 31)::text))
    FROM (VALUES (definition_type, definition_id), ('process_instance', instance_id)) AS t(target_type, target_id)
    WHERE t.target_id IS NOT NULL;

    IF EXISTS (
        SELECT 1
        FROM /* TEMPLATE: schema */river_bpmn_suspension AS s
        WHERE (s.target_type = definition_type AND s.target_id = definition_id)
            OR (s.target_type = 'process_instance' AND s.target_id = instance_id)
    ) THEN
        NEW.metadata := NEW.metadata || jsonb_build_object('bpmn_hold', jsonb_build_object(
            'reasons', jsonb_build_array('suspended'),
            'release_to', NEW.state::text,
            'since', now()
        ));
        NEW.state := 'pending';
    END IF;
    RETURN NEW;
END;
$$;

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

DROP FUNCTION /* TEMPLATE: schema */river_bpmn_ctx_set(jsonb, integer, text, jsonb);
DROP FUNCTION /* TEMPLATE: schema */river_bpmn_ctx_object(jsonb);
DROP FUNCTION /* TEMPLATE: schema */river_bpmn_ctx_has_job_definition(jsonb, text);
DROP FUNCTION /* TEMPLATE: schema */river_bpmn_ctx_has_definition(jsonb, text);
DROP FUNCTION /* TEMPLATE: schema */river_bpmn_ctx_has_instance(jsonb, text);
DROP FUNCTION /* TEMPLATE: schema */river_bpmn_ctx_has(jsonb, integer, text, text);
DROP FUNCTION /* TEMPLATE: schema */river_bpmn_ctx_root(jsonb);
DROP FUNCTION /* TEMPLATE: schema */river_bpmn_ctx_tenant(jsonb);
DROP FUNCTION /* TEMPLATE: schema */river_bpmn_ctx_retry_cycle(jsonb);
DROP FUNCTION /* TEMPLATE: schema */river_bpmn_ctx_is_timer(jsonb);
DROP FUNCTION /* TEMPLATE: schema */river_bpmn_ctx_deployment(jsonb);
DROP FUNCTION /* TEMPLATE: schema */river_bpmn_ctx_exclusive(jsonb);
DROP FUNCTION /* TEMPLATE: schema */river_bpmn_ctx_priority(jsonb);
DROP FUNCTION /* TEMPLATE: schema */river_bpmn_ctx_job_definition(jsonb);
DROP FUNCTION /* TEMPLATE: schema */river_bpmn_ctx_activity(jsonb);
DROP FUNCTION /* TEMPLATE: schema */river_bpmn_ctx_definition(jsonb);
DROP FUNCTION /* TEMPLATE: schema */river_bpmn_ctx_instance(jsonb);
DROP FUNCTION /* TEMPLATE: schema */river_bpmn_ctx_string(jsonb, integer, text);
DROP FUNCTION /* TEMPLATE: schema */river_bpmn_ctx_field(jsonb, integer, text);
