-- riverbpmn migration line "riverbpmn", version 16: the compact job context.
--
-- Jobs inserted from now on carry their job context in metadata as one JSON
-- array instead of an object with one key per field (fewer entries in
-- River's GIN index on metadata at every state change):
--
--   {"bpmn": [instance, process definition key, activity, job definition,
--             priority, exclusive, deployment, job type, retry cycle,
--             tenant, root instance]}
--
-- (positions 0-10; an empty field is null, trailing nulls are left out, the
-- root only when it differs from the instance). River's GIN index on
-- metadata (jsonb_ops) takes one entry per key and per value at every state
-- change of a job, and River's updates are never HOT: the object form cost
-- about 15 entries per row version, the array one per distinct element and
-- one for "bpmn". Workflow.JobContext's doc comment and README "What River
-- UI shows" give the order.
--
-- Rows written in the object form are not rewritten: every reader accepts
-- both forms, forever, and old rows age out through River's cleaner. Readers
-- go through the accessor functions below, never through metadata -> 'bpmn'
-- directly, so that the position or key of a field is written in one place.
-- The accessors are LANGUAGE sql, IMMUTABLE and single expressions, so the
-- planner inlines them, in queries and in index expressions alike, and an
-- index over an accessor serves a query that calls it.
--
-- The indexes and statistics over migration 003's functions
-- (river_bpmn_priority, river_bpmn_is_timer, river_bpmn_deployment) and over
-- metadata -> 'bpmn' (migrations 005 and 010) are rebuilt over the
-- accessors, and the old functions dropped: a client of an earlier version
-- fails its fetches loudly after this migration rather than fetching array
-- rows without seeing their priority or exclusive key. Stop such clients
-- before migrating. The indexes are built while the migration holds its lock
-- on river_job (inserts and River's updates wait): on a large table, run it
-- when the queue is short. The tenant indexes of fair clients
-- (sql/fairness_index_create.sql) are dropped; a fair client's start builds
-- them again.

-- The raw value of a job context field, in either form: element pos of an
-- array context, key name of an object context. NULL when metadata has no
-- job context or the context lacks the field; JSON null as stored.
CREATE FUNCTION /* TEMPLATE: schema */river_bpmn_ctx_field(metadata jsonb, pos integer, name text)
RETURNS jsonb
LANGUAGE sql
IMMUTABLE
PARALLEL SAFE
AS $$
    SELECT CASE
        WHEN jsonb_typeof(metadata -> 'bpmn') = 'array' THEN metadata -> 'bpmn' -> pos
        ELSE metadata -> 'bpmn' -> name
    END
$$;

-- The text of a job context field that is a JSON string; NULL for any other
-- value (a number, an object: data written by hand), as for an absent one.
CREATE FUNCTION /* TEMPLATE: schema */river_bpmn_ctx_string(metadata jsonb, pos integer, name text)
RETURNS text
LANGUAGE sql
IMMUTABLE
PARALLEL SAFE
AS $$
    SELECT CASE
        WHEN jsonb_typeof(/* TEMPLATE: schema */river_bpmn_ctx_field(metadata, pos, name)) = 'string'
        THEN /* TEMPLATE: schema */river_bpmn_ctx_field(metadata, pos, name) #>> '{}'
    END
$$;

-- One accessor per field (the position is the array form's, the name the
-- object form's and workflow.JobContext's JSON name).

CREATE FUNCTION /* TEMPLATE: schema */river_bpmn_ctx_instance(metadata jsonb)
RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT /* TEMPLATE: schema */river_bpmn_ctx_string(metadata, 0, 'process_instance_id') $$;

CREATE FUNCTION /* TEMPLATE: schema */river_bpmn_ctx_definition(metadata jsonb)
RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT /* TEMPLATE: schema */river_bpmn_ctx_string(metadata, 1, 'process_definition_key') $$;

CREATE FUNCTION /* TEMPLATE: schema */river_bpmn_ctx_activity(metadata jsonb)
RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT /* TEMPLATE: schema */river_bpmn_ctx_string(metadata, 2, 'activity_id') $$;

CREATE FUNCTION /* TEMPLATE: schema */river_bpmn_ctx_job_definition(metadata jsonb)
RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT /* TEMPLATE: schema */river_bpmn_ctx_string(metadata, 3, 'job_definition_id') $$;

-- The BPMN priority (position 4), higher first. Never fails: a value that is
-- not an integer number in bigint's range reads as 0, the default, instead
-- of breaking inserts or fetches for the whole table (as migration 003's
-- river_bpmn_priority did for the object form, which tested the number's
-- text with a regular expression; its scale is the same test, and about
-- a third cheaper per row, which a fetch by priority pays per candidate).
CREATE FUNCTION /* TEMPLATE: schema */river_bpmn_ctx_priority(metadata jsonb)
RETURNS bigint
LANGUAGE sql
IMMUTABLE
PARALLEL SAFE
AS $$
    SELECT CASE
        WHEN jsonb_typeof(/* TEMPLATE: schema */river_bpmn_ctx_field(metadata, 4, 'priority')) = 'number'
            AND scale(/* TEMPLATE: schema */river_bpmn_ctx_field(metadata, 4, 'priority')::numeric) = 0
            AND /* TEMPLATE: schema */river_bpmn_ctx_field(metadata, 4, 'priority')::numeric
                BETWEEN -9223372036854775808 AND 9223372036854775807
        THEN /* TEMPLATE: schema */river_bpmn_ctx_field(metadata, 4, 'priority')::numeric::bigint
        ELSE 0
    END
$$;

-- Whether the job is exclusive (position 5): true only for JSON true; NULL
-- when the field is absent, false for any other value.
CREATE FUNCTION /* TEMPLATE: schema */river_bpmn_ctx_exclusive(metadata jsonb)
RETURNS boolean LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT /* TEMPLATE: schema */river_bpmn_ctx_field(metadata, 5, 'exclusive') = 'true'::jsonb $$;

CREATE FUNCTION /* TEMPLATE: schema */river_bpmn_ctx_deployment(metadata jsonb)
RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT /* TEMPLATE: schema */river_bpmn_ctx_string(metadata, 6, 'deployment_id') $$;

-- Whether the job is a timer (job type, position 7, is "timer"); never NULL.
CREATE FUNCTION /* TEMPLATE: schema */river_bpmn_ctx_is_timer(metadata jsonb)
RETURNS boolean LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT coalesce(/* TEMPLATE: schema */river_bpmn_ctx_field(metadata, 7, 'job_type') = '"timer"'::jsonb, false) $$;

CREATE FUNCTION /* TEMPLATE: schema */river_bpmn_ctx_retry_cycle(metadata jsonb)
RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT /* TEMPLATE: schema */river_bpmn_ctx_string(metadata, 8, 'retry_cycle') $$;

CREATE FUNCTION /* TEMPLATE: schema */river_bpmn_ctx_tenant(metadata jsonb)
RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT /* TEMPLATE: schema */river_bpmn_ctx_string(metadata, 9, 'tenant_id') $$;

-- The root process instance as stored (position 10): NULL when the instance
-- is its own root, which is how both forms store a top-level instance.
CREATE FUNCTION /* TEMPLATE: schema */river_bpmn_ctx_root(metadata jsonb)
RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT /* TEMPLATE: schema */river_bpmn_ctx_string(metadata, 10, 'root_process_instance_id') $$;

-- Whether the job context of metadata has field (pos, name) equal to the
-- string value, in either form: containment on each form, which River's GIN
-- index on metadata answers (a BitmapOr of two index scans), then the field
-- itself, since the array form's containment matches value at any position.
-- STABLE, not IMMUTABLE, because jsonb_build_object is: an IMMUTABLE SQL
-- function calling it would not be inlined, and then no index would serve it.
CREATE FUNCTION /* TEMPLATE: schema */river_bpmn_ctx_has(metadata jsonb, pos integer, name text, value text)
RETURNS boolean
LANGUAGE sql
STABLE
PARALLEL SAFE
AS $$
    SELECT (metadata @> jsonb_build_object('bpmn', jsonb_build_array(value))
            OR metadata @> jsonb_build_object('bpmn', jsonb_build_object(name, value)))
        AND /* TEMPLATE: schema */river_bpmn_ctx_field(metadata, pos, name) = to_jsonb(value)
$$;

-- The lookups by containment: the jobs of a process instance, of a job
-- definition, of a process definition.
CREATE FUNCTION /* TEMPLATE: schema */river_bpmn_ctx_has_instance(metadata jsonb, process_instance_id text)
RETURNS boolean LANGUAGE sql STABLE PARALLEL SAFE
AS $$ SELECT /* TEMPLATE: schema */river_bpmn_ctx_has(metadata, 0, 'process_instance_id', process_instance_id) $$;

CREATE FUNCTION /* TEMPLATE: schema */river_bpmn_ctx_has_definition(metadata jsonb, process_definition_key text)
RETURNS boolean LANGUAGE sql STABLE PARALLEL SAFE
AS $$ SELECT /* TEMPLATE: schema */river_bpmn_ctx_has(metadata, 1, 'process_definition_key', process_definition_key) $$;

CREATE FUNCTION /* TEMPLATE: schema */river_bpmn_ctx_has_job_definition(metadata jsonb, job_definition_id text)
RETURNS boolean LANGUAGE sql STABLE PARALLEL SAFE
AS $$ SELECT /* TEMPLATE: schema */river_bpmn_ctx_has(metadata, 3, 'job_definition_id', job_definition_id) $$;

-- A job context (metadata -> 'bpmn') in the object form, whichever form it
-- is stored in: an array's non-null elements under their names (elements
-- past the last known position are left out), an object as it is, anything
-- else (NULL, a number, a string) as it is. For readers that show the
-- context to people or to programs written against the object form (the
-- events of package events).
CREATE FUNCTION /* TEMPLATE: schema */river_bpmn_ctx_object(ctx jsonb)
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

-- metadata with job context field (pos, name) set to value, in the form the
-- context is stored in (an array is padded with nulls up to pos). Metadata
-- without a job context, or with one that is neither array nor object, gets
-- an array context holding only this field. For the writers of a field: the
-- overriding priority (trigger below, job definition cascade) and
-- Engine.SetJobPriority.
CREATE FUNCTION /* TEMPLATE: schema */river_bpmn_ctx_set(metadata jsonb, pos integer, name text, value jsonb)
RETURNS jsonb
LANGUAGE sql
IMMUTABLE
PARALLEL SAFE
AS $$
    SELECT CASE jsonb_typeof(metadata -> 'bpmn')
        WHEN 'object' THEN jsonb_set(metadata, ARRAY['bpmn', name], value)
        WHEN 'array' THEN CASE
            WHEN jsonb_array_length(metadata -> 'bpmn') > pos
                THEN jsonb_set(metadata, ARRAY['bpmn', pos::text], value)
            ELSE jsonb_set(metadata, '{bpmn}', (metadata -> 'bpmn')
                || (SELECT coalesce(jsonb_agg(NULL::jsonb), '[]'::jsonb)
                    FROM generate_series(jsonb_array_length(metadata -> 'bpmn'), pos - 1))
                || jsonb_build_array(value))
            END
        ELSE metadata || jsonb_build_object('bpmn',
            (SELECT coalesce(jsonb_agg(NULL::jsonb), '[]'::jsonb) FROM generate_series(1, pos))
            || jsonb_build_array(value))
    END
$$;

-- The indexes and statistics over the job context, rebuilt over the
-- accessors (same columns, same predicates as before). The fetch-order and
-- tenant indexes are built on demand (sql/fetch_index_create.sql,
-- sql/fairness_index_create.sql, now over the accessors): those built before
-- read the functions dropped here, so they go, and the clients that read
-- them build them again when they start.
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
DROP FUNCTION /* TEMPLATE: schema */river_bpmn_priority(jsonb);
DROP FUNCTION /* TEMPLATE: schema */river_bpmn_is_timer(jsonb);
DROP FUNCTION /* TEMPLATE: schema */river_bpmn_deployment(jsonb);

CREATE STATISTICS /* TEMPLATE: schema */river_bpmn_job_priority
    ON (/* TEMPLATE: schema */river_bpmn_ctx_priority(metadata))
    FROM /* TEMPLATE: schema */river_job;
CREATE STATISTICS /* TEMPLATE: schema */river_bpmn_job_deployment
    ON (/* TEMPLATE: schema */river_bpmn_ctx_deployment(metadata))
    FROM /* TEMPLATE: schema */river_job;


-- The head-of-key indexes of exclusive jobs (migration 005: River's order;
-- 010: by priority, the key as jsonb, the JSON string of the key, so that
-- only the by-priority probe reads them). The key expressions are
-- workflow/sql/exclusive_key_*.sql's.
CREATE INDEX river_bpmn_job_exclusive_instance
    ON /* TEMPLATE: schema */river_job (
        (nullif(/* TEMPLATE: schema */river_bpmn_ctx_instance(metadata), '')),
        queue, priority, scheduled_at, id
    )
    WHERE state = 'available' AND /* TEMPLATE: schema */river_bpmn_ctx_exclusive(metadata);
CREATE INDEX river_bpmn_job_exclusive_root
    ON /* TEMPLATE: schema */river_job (
        (coalesce(nullif(/* TEMPLATE: schema */river_bpmn_ctx_root(metadata), ''),
            nullif(/* TEMPLATE: schema */river_bpmn_ctx_instance(metadata), ''))),
        queue, priority, scheduled_at, id
    )
    WHERE state = 'available' AND /* TEMPLATE: schema */river_bpmn_ctx_exclusive(metadata);
CREATE INDEX river_bpmn_job_exclusive_instance_p
    ON /* TEMPLATE: schema */river_job (
        (nullif(/* TEMPLATE: schema */river_bpmn_ctx_field(metadata, 0, 'process_instance_id'), '""'::jsonb)),
        queue, /* TEMPLATE: schema */river_bpmn_ctx_priority(metadata) DESC, priority, scheduled_at, id
    )
    WHERE state = 'available' AND /* TEMPLATE: schema */river_bpmn_ctx_exclusive(metadata);
CREATE INDEX river_bpmn_job_exclusive_root_p
    ON /* TEMPLATE: schema */river_job (
        (coalesce(
            nullif(nullif(/* TEMPLATE: schema */river_bpmn_ctx_field(metadata, 10, 'root_process_instance_id'), 'null'::jsonb), '""'::jsonb),
            nullif(/* TEMPLATE: schema */river_bpmn_ctx_field(metadata, 0, 'process_instance_id'), '""'::jsonb))),
        queue, /* TEMPLATE: schema */river_bpmn_ctx_priority(metadata) DESC, priority, scheduled_at, id
    )
    WHERE state = 'available' AND /* TEMPLATE: schema */river_bpmn_ctx_exclusive(metadata);

-- Triggers that read the job context, over the accessors.

-- Migration 002's overriding priority, for either form: only jobs whose
-- context carries a priority are touched.
CREATE OR REPLACE FUNCTION /* TEMPLATE: schema */river_bpmn_job_apply_overriding_priority()
RETURNS trigger
LANGUAGE plpgsql
AS $$
DECLARE
    job_definition_id text := /* TEMPLATE: schema */river_bpmn_ctx_job_definition(NEW.metadata);
    override bigint;
BEGIN
    IF job_definition_id IS NULL
        OR coalesce(jsonb_typeof(/* TEMPLATE: schema */river_bpmn_ctx_field(NEW.metadata, 4, 'priority')), 'null') = 'null' THEN
        RETURN NEW;
    END IF;

    -- Keyed by this river_job table too: schemas do not contend.
    PERFORM pg_advisory_xact_lock_shared(1380076878, hashtext(TG_RELID::text || ':' || job_definition_id));
    SELECT overriding_priority INTO override
    FROM /* TEMPLATE: schema */river_bpmn_job_definition
    WHERE id = job_definition_id
    FOR SHARE;

    IF override IS NOT NULL THEN
        NEW.metadata := /* TEMPLATE: schema */river_bpmn_ctx_set(NEW.metadata, 4, 'priority', to_jsonb(override));
    END IF;
    RETURN NEW;
END;
$$;

-- Migration 004's incidents: the incident's columns through the accessors
-- (NULL for a field that is not a string, as before).
CREATE OR REPLACE FUNCTION /* TEMPLATE: schema */river_bpmn_job_incident()
RETURNS trigger
LANGUAGE plpgsql
AS $$
BEGIN
    IF TG_OP = 'UPDATE' AND NEW.state = 'discarded' THEN
        INSERT INTO /* TEMPLATE: schema */river_bpmn_incident
            (incident_type, job_id, job_definition_id, activity_id, process_instance_id, message)
        VALUES (
            'failedJob',
            NEW.id,
            /* TEMPLATE: schema */river_bpmn_ctx_job_definition(NEW.metadata),
            /* TEMPLATE: schema */river_bpmn_ctx_activity(NEW.metadata),
            /* TEMPLATE: schema */river_bpmn_ctx_instance(NEW.metadata),
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

-- Migration 004's unbounded retry cycles.
DROP TRIGGER river_bpmn_job_renew_unbounded ON /* TEMPLATE: schema */river_job;
CREATE TRIGGER river_bpmn_job_renew_unbounded
    BEFORE UPDATE OF state ON /* TEMPLATE: schema */river_job
    FOR EACH ROW
    WHEN (OLD.state = 'running'
        AND NEW.state IN ('available', 'retryable')
        AND NEW.attempt >= 1000
        AND NEW.max_attempts = 32767
        AND (/* TEMPLATE: schema */river_bpmn_ctx_retry_cycle(NEW.metadata) LIKE 'R/%'
            OR NEW.metadata ->> 'bpmn_retry_cycle' LIKE 'R/%'))
    EXECUTE FUNCTION /* TEMPLATE: schema */river_bpmn_job_renew_unbounded();

-- Migration 007's suspension on insert: the targets through the accessors.
CREATE OR REPLACE FUNCTION /* TEMPLATE: schema */river_bpmn_job_insert_hold()
RETURNS trigger
LANGUAGE plpgsql
AS $$
DECLARE
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

    IF jsonb_typeof(NEW.metadata -> 'bpmn') NOT IN ('object', 'array')
        OR NEW.state NOT IN ('available', 'scheduled', 'pending') THEN
        RETURN NEW;
    END IF;
    definition_id := /* TEMPLATE: schema */river_bpmn_ctx_job_definition(NEW.metadata);
    IF definition_id IS NOT NULL THEN
        definition_type := 'job_definition';
    ELSE
        definition_id := /* TEMPLATE: schema */river_bpmn_ctx_definition(NEW.metadata);
        IF definition_id IS NOT NULL THEN
            definition_type := 'process_definition';
        END IF;
    END IF;
    instance_id := nullif(/* TEMPLATE: schema */river_bpmn_ctx_instance(NEW.metadata), '');
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

-- Migration 013's job status events: the job context is stored whatever
-- its JSON type (river_bpmn_event.job_context holds the stored form; the
-- events' reader, events/sql/read.sql, turns it into the object form), the
-- process instance through its accessor. Otherwise 013's function.
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
