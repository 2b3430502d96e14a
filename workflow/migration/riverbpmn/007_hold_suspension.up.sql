-- riverbpmn migration line "riverbpmn", version 7: held jobs (package hold)
-- and suspension (package suspension).
--
-- A held job is in River's own 'pending' state, which River never fetches,
-- schedules, rescues or cleans: holding costs the fetch nothing. Why it is
-- held is kept in river_bpmn_hold, one row per (job, reason); a job can be
-- held for several reasons at once. What the job becomes when its last
-- reason goes (available; scheduled at its due time; retryable with its wait;
-- or pending, for a job that River's InsertOpts.Pending put there) is kept in
-- the job's metadata under "bpmn_hold", with a copy of its reasons, so that
-- River UI shows a held job as held:
--
--   "bpmn_hold": {"reasons": ["suspended"], "release_to": "scheduled", "since": "..."}
--
-- Invariant (package hold): a job has rows in river_bpmn_hold if and only if
-- its metadata has "bpmn_hold" with the same reasons; such a job is
-- 'pending', or 'running' (held while it ran: release_to is null until River
-- records the run's outcome). Rows and metadata change only together, with
-- the job's row locked, so a job is released exactly when its last reason is
-- removed, in the transaction that removes it.

CREATE TABLE /* TEMPLATE: schema */river_bpmn_hold (
    job_id bigint NOT NULL,
    reason text NOT NULL CHECK (char_length(reason) BETWEEN 1 AND 255),
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (job_id, reason)
);

-- Jobs held for one reason.
CREATE INDEX river_bpmn_hold_reason
    ON /* TEMPLATE: schema */river_bpmn_hold (reason, job_id);

-- The reasons of job_id, sorted, as a JSON array (NULL when none).
CREATE FUNCTION /* TEMPLATE: schema */river_bpmn_hold_reasons(hold_job_id bigint)
RETURNS jsonb
LANGUAGE sql
STABLE
AS $$
    SELECT jsonb_agg(reason ORDER BY reason)
    FROM /* TEMPLATE: schema */river_bpmn_hold
    WHERE job_id = hold_job_id
$$;

-- Holds jobs job_ids for reason hold_reason. Unfinished jobs only (a
-- finished job has nothing to hold); a running job keeps running and is held
-- from its next run on. Returns the jobs that did not have the reason yet.
-- Rows are locked in id order.
CREATE FUNCTION /* TEMPLATE: schema */river_bpmn_hold_add(job_ids bigint[], hold_reason text)
RETURNS SETOF bigint
LANGUAGE plpgsql
AS $$
DECLARE
    added bigint[];
BEGIN
    WITH locked AS (
        SELECT id
        FROM /* TEMPLATE: schema */river_job
        WHERE id = ANY(job_ids)
            AND state IN ('available', 'scheduled', 'retryable', 'pending', 'running')
            AND jsonb_typeof(metadata) = 'object'
        ORDER BY id
        FOR UPDATE
    ), inserted AS (
        INSERT INTO /* TEMPLATE: schema */river_bpmn_hold (job_id, reason)
        SELECT id, hold_reason FROM locked
        ON CONFLICT (job_id, reason) DO NOTHING
        RETURNING job_id
    )
    SELECT array_agg(job_id) INTO added FROM inserted;

    IF added IS NULL THEN
        RETURN;
    END IF;

    RETURN QUERY
    UPDATE /* TEMPLATE: schema */river_job
    SET
        state = CASE WHEN state = 'running' THEN state ELSE 'pending' END,
        metadata = metadata || jsonb_build_object('bpmn_hold', jsonb_build_object(
            'reasons', /* TEMPLATE: schema */river_bpmn_hold_reasons(id),
            'release_to', CASE
                WHEN jsonb_typeof(metadata -> 'bpmn_hold') = 'object' THEN metadata -> 'bpmn_hold' -> 'release_to'
                WHEN state = 'running' THEN 'null'::jsonb
                ELSE to_jsonb(state::text)
            END,
            'since', coalesce(metadata -> 'bpmn_hold' -> 'since', to_jsonb(now()))
        ))
    WHERE id = ANY(added)
    RETURNING id;
END;
$$;

-- Removes reason hold_reason from jobs job_ids. A job whose last reason goes
-- is released in this statement: a pending job goes to its release_to state
-- (River's scheduler makes a scheduled or retryable job available when it is
-- due; one already due becomes available at once), a running one just loses
-- its mark. Producers of the queues that got
-- available jobs are woken with River's insert notification (sent when the
-- transaction commits). Returns each job that had the reason, and whether it
-- was released. Rows are locked in id order.
CREATE FUNCTION /* TEMPLATE: schema */river_bpmn_hold_remove(job_ids bigint[], hold_reason text)
RETURNS TABLE (job_id bigint, released boolean)
LANGUAGE plpgsql
AS $$
DECLARE
    removed bigint[];
    ids bigint[];
    releases boolean[];
    woken_queues text[];
BEGIN
    WITH locked AS (
        SELECT id
        FROM /* TEMPLATE: schema */river_job
        WHERE id = ANY(job_ids)
        ORDER BY id
        FOR UPDATE
    ), deleted AS (
        DELETE FROM /* TEMPLATE: schema */river_bpmn_hold AS hold
        USING locked
        WHERE hold.job_id = locked.id
            AND hold.reason = hold_reason
        RETURNING hold.job_id
    )
    SELECT array_agg(deleted.job_id) INTO removed FROM deleted;

    IF removed IS NULL THEN
        RETURN;
    END IF;

    WITH remaining AS (
        SELECT r.id, /* TEMPLATE: schema */river_bpmn_hold_reasons(r.id) AS reasons
        FROM unnest(removed) AS r(id)
    ), updated AS (
        UPDATE /* TEMPLATE: schema */river_job
        SET
            state = CASE
                WHEN remaining.reasons IS NOT NULL OR river_job.state <> 'pending' THEN river_job.state
                WHEN river_job.metadata -> 'bpmn_hold' ->> 'release_to' = 'pending' THEN 'pending'::/* TEMPLATE: schema */river_job_state
                -- Due already: available at once, as River's scheduler would
                -- make it (a held job is pending, in its unique key's index
                -- as an available one is, so this cannot conflict).
                WHEN river_job.scheduled_at <= now() THEN 'available'::/* TEMPLATE: schema */river_job_state
                WHEN river_job.metadata -> 'bpmn_hold' ->> 'release_to' IN ('available', 'scheduled', 'retryable')
                    THEN (river_job.metadata -> 'bpmn_hold' ->> 'release_to')::/* TEMPLATE: schema */river_job_state
                WHEN river_job.scheduled_at > now() THEN 'scheduled'::/* TEMPLATE: schema */river_job_state
                ELSE 'available'::/* TEMPLATE: schema */river_job_state
            END,
            metadata = CASE
                WHEN remaining.reasons IS NULL THEN river_job.metadata - 'bpmn_hold'
                ELSE jsonb_set(river_job.metadata, '{bpmn_hold,reasons}', remaining.reasons)
            END
        FROM remaining
        WHERE river_job.id = remaining.id
        RETURNING river_job.id, river_job.queue, river_job.state, remaining.reasons IS NULL AS released
    )
    SELECT
        array_agg(updated.id),
        array_agg(updated.released),
        array_agg(DISTINCT updated.queue) FILTER (WHERE updated.released AND updated.state = 'available')
    INTO ids, releases, woken_queues
    FROM updated;

    -- Wake the producers of queues that got available jobs, as River does
    -- after an insert (channel "<schema>.river_insert", payload {"queue"}).
    IF woken_queues IS NOT NULL THEN
        PERFORM pg_notify(
            (SELECT n.nspname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
             WHERE c.oid = '/* TEMPLATE: schema */river_job'::regclass) || '.river_insert',
            json_build_object('queue', q)::text
        )
        FROM unnest(woken_queues) AS q;
    END IF;

    RETURN QUERY SELECT * FROM unnest(ids, releases);
END;
$$;

-- River moves a job out of 'pending' or 'running' on its own paths: the
-- completer records a run's outcome (retryable, available, scheduled for a
-- snooze, or final), the rescuer retries stuck jobs, JobRetry makes a job
-- available, JobCancel cancels it. For a held job, a move to a state River
-- would fetch or schedule is turned back to 'pending', and the state it asked
-- for becomes the job's release_to (so a failure during a suspension is
-- retried, with its wait, only once the job is released; a JobRetry during a
-- suspension makes the job available when it is released). A move to a
-- final state ends the hold. The WHEN clause is evaluated without calling a
-- function: a job that is not held costs one comparison and a key lookup.
-- It is named to fire after river_bpmn_job_renew_unbounded (alphabetical
-- order), which must see the state River asked for.
CREATE FUNCTION /* TEMPLATE: schema */river_bpmn_job_state_hold()
RETURNS trigger
LANGUAGE plpgsql
AS $$
BEGIN
    IF jsonb_typeof(NEW.metadata) IS DISTINCT FROM 'object' THEN
        RETURN NEW;
    END IF;
    IF NEW.state IN ('completed', 'cancelled', 'discarded') THEN
        DELETE FROM /* TEMPLATE: schema */river_bpmn_hold WHERE job_id = NEW.id;
        NEW.metadata := NEW.metadata - 'bpmn_hold';
        RETURN NEW;
    END IF;
    NEW.metadata := NEW.metadata || jsonb_build_object('bpmn_hold',
        CASE WHEN jsonb_typeof(NEW.metadata -> 'bpmn_hold') = 'object' THEN NEW.metadata -> 'bpmn_hold' ELSE '{}'::jsonb END
        || jsonb_build_object('release_to', NEW.state::text));
    NEW.state := 'pending';
    RETURN NEW;
END;
$$;

CREATE TRIGGER river_bpmn_job_state_hold
    BEFORE UPDATE OF state ON /* TEMPLATE: schema */river_job
    FOR EACH ROW
    WHEN (NEW.state <> 'running' AND NEW.state <> 'pending' AND NEW.metadata ? 'bpmn_hold')
    EXECUTE FUNCTION /* TEMPLATE: schema */river_bpmn_job_state_hold();

-- A deleted job takes its reasons with it.
CREATE FUNCTION /* TEMPLATE: schema */river_bpmn_job_delete_hold()
RETURNS trigger
LANGUAGE plpgsql
AS $$
BEGIN
    DELETE FROM /* TEMPLATE: schema */river_bpmn_hold WHERE job_id = OLD.id;
    RETURN NULL;
END;
$$;

CREATE TRIGGER river_bpmn_job_delete_hold
    AFTER DELETE ON /* TEMPLATE: schema */river_job
    FOR EACH ROW
    WHEN (OLD.metadata ? 'bpmn_hold')
    EXECUTE FUNCTION /* TEMPLATE: schema */river_bpmn_job_delete_hold();

-- A job inserted held (by river_bpmn_job_insert_hold below) gets its reason
-- rows once it is really inserted: River's unique inserts may turn an insert
-- into an update of the existing job, after the BEFORE trigger ran.
CREATE FUNCTION /* TEMPLATE: schema */river_bpmn_job_record_hold()
RETURNS trigger
LANGUAGE plpgsql
AS $$
BEGIN
    IF jsonb_typeof(NEW.metadata -> 'bpmn_hold' -> 'reasons') = 'array' THEN
        INSERT INTO /* TEMPLATE: schema */river_bpmn_hold (job_id, reason)
        SELECT NEW.id, r
        FROM jsonb_array_elements_text(NEW.metadata -> 'bpmn_hold' -> 'reasons') AS r
        WHERE char_length(r) BETWEEN 1 AND 255
        ON CONFLICT (job_id, reason) DO NOTHING;
    END IF;
    RETURN NULL;
END;
$$;

CREATE TRIGGER river_bpmn_job_record_hold
    AFTER INSERT ON /* TEMPLATE: schema */river_job
    FOR EACH ROW
    WHEN (NEW.state = 'pending' AND NEW.metadata ? 'bpmn_hold')
    EXECUTE FUNCTION /* TEMPLATE: schema */river_bpmn_job_record_hold();

-- Suspension (package suspension). A suspended job definition, process
-- definition or process instance has a row here; its new jobs are inserted
-- held for reason 'suspended'. A process definition's suspension also
-- suspends each of its job definitions (rows of their own): a job with a job
-- definition follows its job definition, a job without one follows its
-- process definition, and every job follows its process instance.
CREATE TABLE /* TEMPLATE: schema */river_bpmn_suspension (
    target_type text NOT NULL CHECK (target_type IN ('job_definition', 'process_definition', 'process_instance')),
    target_id text NOT NULL CHECK (char_length(target_id) BETWEEN 1 AND 255),
    suspended_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (target_type, target_id)
);

-- One row, updated by every suspension and activation, so that an inserter
-- in REPEATABLE READ or SERIALIZABLE whose snapshot predates one gets a
-- serialization error instead of missing it (see the insert trigger).
CREATE TABLE /* TEMPLATE: schema */river_bpmn_suspension_epoch (
    only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    epoch bigint NOT NULL DEFAULT 0
);
INSERT INTO /* TEMPLATE: schema */river_bpmn_suspension_epoch DEFAULT VALUES;

-- Suspensions and activations due later (SuspendJobDefinition and
-- SuspendProcessDefinition with an At time), applied by a service on River's
-- elected leader when due, and kept with applied_at set.
CREATE TABLE /* TEMPLATE: schema */river_bpmn_suspension_schedule (
    id bigserial PRIMARY KEY,
    target_type text NOT NULL CHECK (target_type IN ('job_definition', 'process_definition')),
    target_id text NOT NULL CHECK (char_length(target_id) BETWEEN 1 AND 255),
    suspend boolean NOT NULL,
    include_jobs boolean NOT NULL,
    due_at timestamptz NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    applied_at timestamptz,
    applied_by text,
    jobs bigint,
    last_error text
);

CREATE INDEX river_bpmn_suspension_schedule_due
    ON /* TEMPLATE: schema */river_bpmn_suspension_schedule (due_at, id)
    WHERE applied_at IS NULL;

-- Inserts every new job with a job context held for 'suspended' when its
-- job definition (else its process definition) or its process instance is
-- suspended, whichever insert call wrote it, including inserts under way
-- when a suspension commits. It also drops a "bpmn_hold" mark copied from
-- another job's metadata: only the hold mechanism holds jobs.
--
-- Race-free the way the overriding priority is (migration 002), with
-- advisory locks (class 1380076879) held until the inserting transaction
-- ends, taken before reading, and taken exclusively by a suspension:
--
--   * The first job of a transaction takes the lock "<river_job oid>:any"
--     shared and reads whether anything at all is suspended. If nothing is,
--     the answer holds until the transaction ends, because suspending the
--     first target takes that lock exclusively (so it waits for this
--     transaction), and is remembered in a transaction-local setting
--     (riverbpmn.suspension_<river_job oid>): every further job of the
--     transaction costs one setting lookup. This is the path of a database
--     where nothing is suspended.
--   * Otherwise each job takes, shared, the lock of each of its targets and
--     reads the suspension rows. Targets share 32 locks per river_job table
--     (key hashtext("<river_job oid>:<bucket>"), bucket =
--     hashtext("<type>:<id>") & 31), so a transaction inserting jobs of
--     100,000 process instances holds at most 33 locks (PostgreSQL's lock
--     table is small). Suspending a target takes its bucket exclusively: it
--     waits for inserts of about 1/32 of all targets, for one short
--     transaction, and every later insert of the target sees it.
--
-- An inserter in REPEATABLE READ or SERIALIZABLE reads the epoch row FOR
-- SHARE (SKIP LOCKED, so it never waits for a suspension that waits for it)
-- for each job: if a suspension changed after its snapshot, or is being
-- changed, it gets a serialization error instead of missing it.
CREATE FUNCTION /* TEMPLATE: schema */river_bpmn_job_insert_hold()
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

CREATE TRIGGER river_bpmn_job_insert_hold
    BEFORE INSERT ON /* TEMPLATE: schema */river_job
    FOR EACH ROW
    WHEN (NEW.metadata ? 'bpmn' OR NEW.metadata ? 'bpmn_hold')
    EXECUTE FUNCTION /* TEMPLATE: schema */river_bpmn_job_insert_hold();
