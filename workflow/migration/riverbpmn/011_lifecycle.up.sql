-- riverbpmn migration line "riverbpmn", version 11: job lifecycle (package
-- lifecycle): pending jobs queued later, jobs that wait for other jobs
-- (prerequisites), and expiration dates.
--
-- A job asks for any of them at insert with the metadata key
-- "bpmn_lifecycle" (package lifecycle writes it):
--
--   "bpmn_lifecycle": {"pending": true, "depends_on": [12, 13], "expires_at": "2026-...Z"}
--
-- Pending and waiting jobs are held (package hold, migration 007) for the
-- reasons 'pending' and 'prerequisites'; one reason never releases another
-- (nor a suspension). Every trigger below fires only for rows carrying
-- "bpmn_lifecycle" (inserts) or "bpmn_dependents" (a job other jobs wait
-- for): other jobs cost one key test in a WHEN clause, no function call.

-- One row per (dependent job, prerequisite job). done_at is set when the
-- prerequisite completes; blocked_state says the prerequisite ended
-- discarded or cancelled (cleared when an operator retries it).
CREATE TABLE /* TEMPLATE: schema */river_bpmn_dependency (
    job_id bigint NOT NULL,
    prerequisite_id bigint NOT NULL,
    done_at timestamptz,
    blocked_state text,
    -- false while the prerequisite could not be marked at insert (it was
    -- locked: being updated at that very moment); the leader's lifecycle
    -- service links it (river_bpmn_dependency_link).
    linked boolean NOT NULL DEFAULT true,
    PRIMARY KEY (job_id, prerequisite_id)
);

-- Rows still to link.
CREATE INDEX river_bpmn_dependency_unlinked
    ON /* TEMPLATE: schema */river_bpmn_dependency (prerequisite_id)
    WHERE NOT linked AND done_at IS NULL;

-- The dependents of one prerequisite.
CREATE INDEX river_bpmn_dependency_prerequisite
    ON /* TEMPLATE: schema */river_bpmn_dependency (prerequisite_id);

-- One row per job with prerequisites: how many it has, and how many have
-- not completed yet (so a completion knows in one row whether it was the
-- last, whatever the fan-in).
CREATE TABLE /* TEMPLATE: schema */river_bpmn_dependent (
    job_id bigint PRIMARY KEY,
    total integer NOT NULL,
    open integer NOT NULL
);

-- Jobs with an expiration date that may still be waiting; rows go once the
-- leader's expiry service has seen the job finished or expired.
CREATE TABLE /* TEMPLATE: schema */river_bpmn_expiry (
    job_id bigint PRIMARY KEY,
    expires_at timestamptz NOT NULL
);

CREATE INDEX river_bpmn_expiry_due
    ON /* TEMPLATE: schema */river_bpmn_expiry (expires_at, job_id);

-- Reads and checks "bpmn_lifecycle" of a new job; holds it for 'pending'
-- and/or 'prerequisites' (if any prerequisite has not completed). Its
-- prerequisites must exist: an unknown id is an insert error naming it. It
-- takes no lock (see river_bpmn_job_record_lifecycle). Fires after
-- river_bpmn_job_insert_hold (alphabetical order), so it merges its reasons
-- into a suspension's.
CREATE FUNCTION /* TEMPLATE: schema */river_bpmn_job_lifecycle_insert()
RETURNS trigger
LANGUAGE plpgsql
AS $$
DECLARE
    lc jsonb;
    reasons text[] := '{}';
    prereqs bigint[];
    missing bigint;
    waiting boolean;
    release_to text;
    expires timestamptz;
BEGIN
    IF jsonb_typeof(NEW.metadata) IS DISTINCT FROM 'object' THEN
        RETURN NEW;
    END IF;
    lc := NEW.metadata -> 'bpmn_lifecycle';
    IF jsonb_typeof(lc) IS DISTINCT FROM 'object' THEN
        RAISE EXCEPTION 'riverbpmn: metadata.bpmn_lifecycle must be an object, not %', lc
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF lc ? 'pending' AND jsonb_typeof(lc -> 'pending') IS DISTINCT FROM 'boolean' THEN
        RAISE EXCEPTION 'riverbpmn: bpmn_lifecycle.pending must be a boolean, not %', lc -> 'pending'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF lc ? 'expires_at' THEN
        BEGIN
            expires := (lc ->> 'expires_at')::timestamptz;
        EXCEPTION WHEN others THEN
            RAISE EXCEPTION 'riverbpmn: bpmn_lifecycle.expires_at %: not a timestamp', lc -> 'expires_at'
                USING ERRCODE = 'invalid_parameter_value';
        END;
    END IF;
    IF lc ? 'depends_on' THEN
        IF jsonb_typeof(lc -> 'depends_on') IS DISTINCT FROM 'array'
            OR EXISTS (SELECT 1 FROM jsonb_array_elements(lc -> 'depends_on') AS e
                       WHERE jsonb_typeof(e) <> 'number' OR (e #>> '{}') !~ '^[0-9]+$') THEN
            RAISE EXCEPTION 'riverbpmn: bpmn_lifecycle.depends_on must be an array of job ids, not %', lc -> 'depends_on'
                USING ERRCODE = 'invalid_parameter_value';
        END IF;
        SELECT array_agg(DISTINCT (e #>> '{}')::bigint) INTO prereqs
        FROM jsonb_array_elements(lc -> 'depends_on') AS e;
    END IF;
    IF NEW.state NOT IN ('available', 'scheduled', 'pending') THEN
        RETURN NEW;
    END IF;

    IF prereqs IS NOT NULL THEN
        IF NEW.id = ANY(prereqs) THEN
            RAISE EXCEPTION 'riverbpmn: bpmn_lifecycle.depends_on: job % cannot depend on itself', NEW.id
                USING ERRCODE = 'invalid_parameter_value';
        END IF;
        SELECT p INTO missing FROM unnest(prereqs) AS p
        WHERE NOT EXISTS (SELECT 1 FROM /* TEMPLATE: schema */river_job WHERE id = p)
        ORDER BY p LIMIT 1;
        IF missing IS NOT NULL THEN
            RAISE EXCEPTION 'riverbpmn: bpmn_lifecycle.depends_on: job % does not exist', missing
                USING ERRCODE = 'foreign_key_violation';
        END IF;
        SELECT EXISTS (SELECT 1 FROM /* TEMPLATE: schema */river_job
                       WHERE id = ANY(prereqs) AND state <> 'completed') INTO waiting;
        IF waiting THEN
            reasons := reasons || 'prerequisites'::text;
        END IF;
    END IF;
    IF (lc -> 'pending') = 'true'::jsonb THEN
        reasons := reasons || 'pending'::text;
    END IF;
    IF cardinality(reasons) = 0 THEN
        RETURN NEW;
    END IF;

    IF jsonb_typeof(NEW.metadata -> 'bpmn_hold') = 'object' THEN
        release_to := NEW.metadata -> 'bpmn_hold' ->> 'release_to';
        SELECT array_agg(DISTINCT r ORDER BY r) INTO reasons
        FROM (SELECT jsonb_array_elements_text(NEW.metadata -> 'bpmn_hold' -> 'reasons') AS r
              UNION SELECT unnest(reasons)) AS u;
    ELSE
        release_to := NEW.state::text;
        SELECT array_agg(r ORDER BY r) INTO reasons FROM unnest(reasons) AS r;
    END IF;
    -- A riverbpmn pending job is queued to where it would have gone.
    IF release_to IS NULL OR release_to = 'pending' THEN
        release_to := CASE WHEN NEW.scheduled_at > now() THEN 'scheduled' ELSE 'available' END;
    END IF;
    NEW.metadata := NEW.metadata || jsonb_build_object('bpmn_hold', jsonb_build_object(
        'reasons', to_jsonb(reasons),
        'release_to', release_to,
        'since', coalesce(NEW.metadata -> 'bpmn_hold' -> 'since', to_jsonb(now()))
    ));
    NEW.state := 'pending';
    RETURN NEW;
END;
$$;

CREATE TRIGGER river_bpmn_job_lifecycle_insert
    BEFORE INSERT ON /* TEMPLATE: schema */river_job
    FOR EACH ROW
    WHEN (NEW.metadata ? 'bpmn_lifecycle')
    EXECUTE FUNCTION /* TEMPLATE: schema */river_bpmn_job_lifecycle_insert();

-- Once the job is really inserted (River's unique inserts may not insert
-- it): its dependency rows, the "bpmn_dependents" mark on each prerequisite
-- that has not completed, its count of open prerequisites, and its expiry
-- row. Named to fire after river_bpmn_job_record_hold (which records the
-- hold's reasons).
--
-- The inserting transaction never waits for a lock: it locks its
-- prerequisites FOR UPDATE SKIP LOCKED. A locked one is read at its latest
-- state: completed (done), or not (marked: a completion now waits for this
-- insert, then sees the mark and this job's rows). One it cannot lock
-- (being updated at this very moment, by River's completer for instance) is
-- recorded unlinked, and the leader's lifecycle service links it
-- (river_bpmn_dependency_link) within its interval. Waiting instead could
-- deadlock: River's completer updates many jobs in one statement in no
-- particular order, and an insert of many jobs locks their prerequisites
-- in no global order either. If every prerequisite turns out done, the job
-- is released at once.
CREATE FUNCTION /* TEMPLATE: schema */river_bpmn_job_record_lifecycle()
RETURNS trigger
LANGUAGE plpgsql
AS $$
DECLARE
    lc jsonb := NEW.metadata -> 'bpmn_lifecycle';
    open_count integer;
BEGIN
    IF jsonb_typeof(lc) IS DISTINCT FROM 'object' THEN
        RETURN NULL;
    END IF;
    IF jsonb_typeof(lc -> 'depends_on') = 'array' AND jsonb_array_length(lc -> 'depends_on') > 0
        AND NEW.state IN ('available', 'scheduled', 'pending') THEN
        WITH pre AS (
            SELECT DISTINCT (e #>> '{}')::bigint AS id FROM jsonb_array_elements(lc -> 'depends_on') AS e
        ), locked AS (
            SELECT j.id, j.state
            FROM /* TEMPLATE: schema */river_job AS j
            WHERE j.id IN (SELECT id FROM pre)
            ORDER BY j.id
            FOR UPDATE SKIP LOCKED
        ), marked AS (
            UPDATE /* TEMPLATE: schema */river_job AS j
            SET metadata = j.metadata || '{"bpmn_dependents": true}'::jsonb
            FROM locked
            WHERE j.id = locked.id
                AND locked.state <> 'completed'
                AND NOT j.metadata ? 'bpmn_dependents'
        ), inserted AS (
            INSERT INTO /* TEMPLATE: schema */river_bpmn_dependency (job_id, prerequisite_id, done_at, blocked_state, linked)
            SELECT NEW.id, pre.id,
                CASE WHEN locked.state = 'completed' THEN now() END,
                CASE WHEN locked.state IN ('discarded', 'cancelled') THEN locked.state::text END,
                locked.id IS NOT NULL
            FROM pre LEFT JOIN locked ON locked.id = pre.id
            ON CONFLICT DO NOTHING
            RETURNING done_at
        ), counted AS (
            INSERT INTO /* TEMPLATE: schema */river_bpmn_dependent (job_id, total, open)
            SELECT NEW.id, count(*), count(*) FILTER (WHERE done_at IS NULL) FROM inserted
            HAVING count(*) > 0
            ON CONFLICT (job_id) DO NOTHING
            RETURNING open
        )
        SELECT open INTO open_count FROM counted;
        IF open_count = 0 THEN
            PERFORM /* TEMPLATE: schema */river_bpmn_hold_remove(ARRAY[NEW.id], 'prerequisites');
        END IF;
    END IF;
    IF lc ? 'expires_at' AND NEW.state IN ('available', 'scheduled', 'pending', 'retryable') THEN
        INSERT INTO /* TEMPLATE: schema */river_bpmn_expiry (job_id, expires_at)
        VALUES (NEW.id, (lc ->> 'expires_at')::timestamptz)
        ON CONFLICT (job_id) DO UPDATE SET expires_at = EXCLUDED.expires_at;
    END IF;
    RETURN NULL;
END;
$$;

CREATE TRIGGER river_bpmn_job_record_lifecycle
    AFTER INSERT ON /* TEMPLATE: schema */river_job
    FOR EACH ROW
    WHEN (NEW.metadata ? 'bpmn_lifecycle')
    EXECUTE FUNCTION /* TEMPLATE: schema */river_bpmn_job_record_lifecycle();

-- Links up to max_prerequisites prerequisites with unlinked rows (see
-- river_bpmn_job_record_lifecycle): a completed one counts as done for its
-- dependents (releasing those it was the last of), another gets the
-- "bpmn_dependents" mark. Called by the leader's lifecycle service. Takes
-- the release lock first, then skips prerequisites locked by others (the
-- next call gets them), so it never waits for a row while holding it.
-- Returns how many rows it linked.
CREATE FUNCTION /* TEMPLATE: schema */river_bpmn_dependency_link(max_prerequisites integer)
RETURNS integer
LANGUAGE plpgsql
AS $$
DECLARE
    ready bigint[];
    linked_count integer;
BEGIN
    -- Nothing to link (the usual case): no lock taken.
    IF NOT EXISTS (SELECT 1 FROM /* TEMPLATE: schema */river_bpmn_dependency WHERE NOT linked AND done_at IS NULL) THEN
        RETURN 0;
    END IF;
    PERFORM pg_advisory_xact_lock(1380076880, hashtext('/* TEMPLATE: schema */river_job'::regclass::oid::text));
    WITH todo AS (
        SELECT DISTINCT prerequisite_id AS id
        FROM /* TEMPLATE: schema */river_bpmn_dependency
        WHERE NOT linked AND done_at IS NULL
        LIMIT max_prerequisites
    ), locked AS (
        SELECT j.id, j.state
        FROM /* TEMPLATE: schema */river_job AS j
        WHERE j.id IN (SELECT id FROM todo)
        ORDER BY j.id
        FOR UPDATE SKIP LOCKED
    ), marked AS (
        UPDATE /* TEMPLATE: schema */river_job AS j
        SET metadata = j.metadata || '{"bpmn_dependents": true}'::jsonb
        FROM locked
        WHERE j.id = locked.id
            AND locked.state <> 'completed'
            AND NOT j.metadata ? 'bpmn_dependents'
    ), linked AS (
        UPDATE /* TEMPLATE: schema */river_bpmn_dependency AS d
        SET linked = true,
            done_at = CASE WHEN locked.state = 'completed' THEN now() END,
            blocked_state = CASE WHEN locked.state IN ('discarded', 'cancelled') THEN locked.state::text END
        FROM locked
        WHERE d.prerequisite_id = locked.id AND NOT d.linked AND d.done_at IS NULL
        RETURNING d.job_id, d.done_at
    ), counted AS (
        UPDATE /* TEMPLATE: schema */river_bpmn_dependent AS c
        SET open = c.open - n.done
        FROM (SELECT job_id, count(*) FILTER (WHERE done_at IS NOT NULL) AS done FROM linked GROUP BY job_id) AS n
        WHERE c.job_id = n.job_id AND n.done > 0
        RETURNING c.job_id, c.open
    )
    SELECT (SELECT count(*) FROM linked), (SELECT array_agg(job_id ORDER BY job_id) FILTER (WHERE open <= 0) FROM counted)
    INTO linked_count, ready;
    IF ready IS NOT NULL THEN
        PERFORM /* TEMPLATE: schema */river_bpmn_hold_remove(ready, 'prerequisites');
    END IF;
    RETURN linked_count;
END;
$$;

-- A prerequisite that completes marks its rows done, counts them off its
-- dependents' open prerequisites (river_bpmn_dependent, one row per
-- dependent: O(1) whatever the fan-in) and releases those it was the last
-- of (hold reason 'prerequisites'), in its own transaction. The counter's
-- row lock makes exactly one completion see zero. Completions of jobs
-- other jobs wait for (and only those) are serialised by one
-- transaction-level advisory lock per river_job table (class 1380076880,
-- key hashtext(<river_job oid>)), so that no two of them lock dependents'
-- rows in opposite orders (River's completer updates many jobs in one
-- statement, in no particular order): no deadlock. The lock is taken after
-- the completer has locked its jobs; nothing that holds it waits for a job
-- a completer holds (dependents are pending, never in a completer's batch). A prerequisite ending discarded or cancelled marks its
-- dependents' rows blocked (they stay held); leaving that state (an
-- operator's retry) clears the mark, and a later completion releases them.
CREATE FUNCTION /* TEMPLATE: schema */river_bpmn_job_prerequisite_state()
RETURNS trigger
LANGUAGE plpgsql
AS $$
DECLARE
    ready bigint[];
BEGIN
    IF NEW.state = 'completed' THEN
        PERFORM pg_advisory_xact_lock(1380076880, hashtext(TG_RELID::text));
        WITH done AS (
            UPDATE /* TEMPLATE: schema */river_bpmn_dependency
            SET done_at = now(), blocked_state = NULL
            WHERE prerequisite_id = NEW.id AND done_at IS NULL
            RETURNING job_id
        ), counted AS (
            UPDATE /* TEMPLATE: schema */river_bpmn_dependent AS c
            SET open = c.open - d.n
            FROM (SELECT job_id, count(*) AS n FROM done GROUP BY job_id) AS d
            WHERE c.job_id = d.job_id
            RETURNING c.job_id, c.open
        )
        SELECT array_agg(job_id ORDER BY job_id) FILTER (WHERE open <= 0) INTO ready FROM counted;
        IF ready IS NOT NULL THEN
            PERFORM /* TEMPLATE: schema */river_bpmn_hold_remove(ready, 'prerequisites');
        END IF;
    ELSIF NEW.state IN ('discarded', 'cancelled') THEN
        UPDATE /* TEMPLATE: schema */river_bpmn_dependency
        SET blocked_state = NEW.state::text
        WHERE prerequisite_id = NEW.id AND done_at IS NULL;
    ELSE
        UPDATE /* TEMPLATE: schema */river_bpmn_dependency
        SET blocked_state = NULL
        WHERE prerequisite_id = NEW.id AND done_at IS NULL AND blocked_state IS NOT NULL;
    END IF;
    RETURN NULL;
END;
$$;

CREATE TRIGGER river_bpmn_job_prerequisite_state
    AFTER UPDATE OF state ON /* TEMPLATE: schema */river_job
    FOR EACH ROW
    WHEN (NEW.metadata ? 'bpmn_dependents' AND OLD.state IS DISTINCT FROM NEW.state
        AND (NEW.state IN ('completed', 'discarded', 'cancelled') OR OLD.state IN ('discarded', 'cancelled')))
    EXECUTE FUNCTION /* TEMPLATE: schema */river_bpmn_job_prerequisite_state();

-- A deleted job takes its dependency rows (as a dependent) and its expiry.
-- Rows naming it as a prerequisite stay: its unfinished dependents stay
-- held (package lifecycle documents what an operator does then).
CREATE FUNCTION /* TEMPLATE: schema */river_bpmn_job_delete_lifecycle()
RETURNS trigger
LANGUAGE plpgsql
AS $$
BEGIN
    DELETE FROM /* TEMPLATE: schema */river_bpmn_dependency WHERE job_id = OLD.id;
    DELETE FROM /* TEMPLATE: schema */river_bpmn_dependent WHERE job_id = OLD.id;
    DELETE FROM /* TEMPLATE: schema */river_bpmn_expiry WHERE job_id = OLD.id;
    RETURN NULL;
END;
$$;

CREATE TRIGGER river_bpmn_job_delete_lifecycle
    AFTER DELETE ON /* TEMPLATE: schema */river_job
    FOR EACH ROW
    WHEN (OLD.metadata ? 'bpmn_lifecycle')
    EXECUTE FUNCTION /* TEMPLATE: schema */river_bpmn_job_delete_lifecycle();

-- Queues jobs: removes hold reason 'pending'; a job River's own
-- InsertOpts.Pending left pending (not held) goes to available (scheduled
-- if due later); a held job whose release_to is 'pending' gets release_to
-- available/scheduled. Returns each existing job with its outcome:
-- 'queued' (runnable or scheduled now), 'still_held' (queued, but held for
-- other reasons, listed by hold), 'not_pending' (nothing to do). Rows are
-- locked in id order.
CREATE FUNCTION /* TEMPLATE: schema */river_bpmn_queue(job_ids bigint[])
RETURNS TABLE (job_id bigint, outcome text, state text)
LANGUAGE plpgsql
AS $$
#variable_conflict use_column
DECLARE
    held_ids bigint[];
    held_outcomes text[];
    plain_ids bigint[];
    requeued_ids bigint[];
    woken_queues text[];
BEGIN
    PERFORM 1 FROM /* TEMPLATE: schema */river_job WHERE id = ANY(job_ids) ORDER BY id FOR UPDATE;

    -- Held for 'pending': remove the reason (released, or still held for
    -- another reason such as 'suspended').
    SELECT array_agg(r.job_id), array_agg(CASE WHEN r.released THEN 'queued' ELSE 'still_held' END)
    INTO held_ids, held_outcomes
    FROM /* TEMPLATE: schema */river_bpmn_hold_remove(job_ids, 'pending') AS r;

    -- River's own pending jobs, not held.
    WITH queued AS (
        UPDATE /* TEMPLATE: schema */river_job
        SET state = CASE WHEN scheduled_at > now() THEN 'scheduled' ELSE 'available' END::/* TEMPLATE: schema */river_job_state
        WHERE id = ANY(job_ids)
            AND river_job.state = 'pending'
            AND NOT (metadata ? 'bpmn_hold')
            AND NOT (id = ANY(coalesce(held_ids, '{}')))
        RETURNING id, queue, river_job.state AS new_state
    )
    SELECT array_agg(id), array_agg(DISTINCT queue) FILTER (WHERE new_state = 'available')
    INTO plain_ids, woken_queues
    FROM queued;

    -- Held for other reasons, going back to River's pending when released:
    -- make them go where they would have gone.
    WITH requeued AS (
        UPDATE /* TEMPLATE: schema */river_job
        SET metadata = jsonb_set(metadata, '{bpmn_hold,release_to}',
            to_jsonb(CASE WHEN scheduled_at > now() THEN 'scheduled' ELSE 'available' END))
        WHERE id = ANY(job_ids)
            AND river_job.state = 'pending'
            AND metadata -> 'bpmn_hold' ->> 'release_to' = 'pending'
            AND NOT (id = ANY(coalesce(held_ids, '{}')))
        RETURNING id
    )
    SELECT array_agg(id) INTO requeued_ids FROM requeued;

    IF woken_queues IS NOT NULL THEN
        PERFORM pg_notify(
            (SELECT n.nspname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
             WHERE c.oid = '/* TEMPLATE: schema */river_job'::regclass) || '.river_insert',
            json_build_object('queue', q)::text
        )
        FROM unnest(woken_queues) AS q;
    END IF;

    RETURN QUERY
    WITH outcomes AS (
        SELECT h.id, h.outcome FROM unnest(held_ids, held_outcomes) AS h(id, outcome)
        UNION ALL SELECT p, 'queued' FROM unnest(plain_ids) AS p
        UNION ALL SELECT r, 'still_held' FROM unnest(requeued_ids) AS r
    )
    SELECT j.id, coalesce(o.outcome, 'not_pending'), j.state::text
    FROM /* TEMPLATE: schema */river_job AS j
    LEFT JOIN outcomes AS o ON o.id = j.id
    WHERE j.id = ANY(job_ids)
    ORDER BY j.id;
END;
$$;
