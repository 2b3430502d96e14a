-- riverbpmn migration line "riverbpmn", version 4: failedJob incidents, and
-- the renewal of jobs with an unbounded retry cycle.
--
-- An incident is opened when a job with a job context (metadata ? 'bpmn') is
-- discarded, and resolved when it leaves 'discarded' (SetJobRetries, River's
-- JobRetry, any UPDATE) or is deleted (JobDelete, River's job cleaner). Both
-- happen in triggers, so that every path that discards a job records its
-- incident in the same transaction: River's completer, its rescuer (stuck
-- jobs past their last attempt), SetJobRetries with 0, a stock River client
-- on the same tables, a hand-written UPDATE. The triggers' WHEN clauses are
-- evaluated without calling a function, so other updates cost next to
-- nothing.
CREATE TABLE /* TEMPLATE: schema */river_bpmn_incident (
    id bigserial PRIMARY KEY,
    incident_type text NOT NULL DEFAULT 'failedJob' CHECK (incident_type IN ('failedJob')),
    job_id bigint NOT NULL,
    job_definition_id text,
    activity_id text,
    process_instance_id text,
    -- The job's last error, at most 4000 characters (as Camunda keeps it).
    message text,
    -- clock_timestamp(), not now(): the order of these times must be the
    -- order in which the changes happened, not the order their transactions
    -- began (a discard can wait on the row lock of a revive that began later).
    created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    resolved_at timestamptz,
    CONSTRAINT resolved_after_created CHECK (resolved_at IS NULL OR resolved_at >= created_at)
);

-- Never two open incidents for one job.
CREATE UNIQUE INDEX river_bpmn_incident_open_job
    ON /* TEMPLATE: schema */river_bpmn_incident (job_id)
    WHERE resolved_at IS NULL;

-- Open incidents, oldest first.
CREATE INDEX river_bpmn_incident_open
    ON /* TEMPLATE: schema */river_bpmn_incident (id)
    WHERE resolved_at IS NULL;

-- Every incident of one job.
CREATE INDEX river_bpmn_incident_job
    ON /* TEMPLATE: schema */river_bpmn_incident (job_id, id);

-- Opens (on discard) or resolves (on leaving 'discarded') the job's incident.
-- Reads metadata defensively: a malformed job context gives NULL columns,
-- never an error that would make River's UPDATE fail.
CREATE FUNCTION /* TEMPLATE: schema */river_bpmn_job_incident()
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

CREATE TRIGGER river_bpmn_job_incident
    AFTER UPDATE OF state ON /* TEMPLATE: schema */river_job
    FOR EACH ROW
    WHEN ((OLD.state = 'discarded') IS DISTINCT FROM (NEW.state = 'discarded')
        AND (NEW.metadata ? 'bpmn' OR OLD.metadata ? 'bpmn'))
    EXECUTE FUNCTION /* TEMPLATE: schema */river_bpmn_job_incident();

CREATE TRIGGER river_bpmn_job_incident_delete
    AFTER DELETE ON /* TEMPLATE: schema */river_job
    FOR EACH ROW
    WHEN (OLD.state = 'discarded' AND OLD.metadata ? 'bpmn')
    EXECUTE FUNCTION /* TEMPLATE: schema */river_bpmn_job_incident();

-- A job with an unbounded retry cycle (R/<duration>) has max_attempts 32767,
-- the most River's smallint holds. When one of its failures, at attempt 1000
-- or later, makes it retryable (or available, for a short wait), its attempt
-- is rewound to 0 and only its last 20 errors are kept, in the same UPDATE:
-- it never reaches max_attempts, and its errors never grow without bound.
-- Snoozes (state 'scheduled') and discards are left alone.
CREATE FUNCTION /* TEMPLATE: schema */river_bpmn_job_renew_unbounded()
RETURNS trigger
LANGUAGE plpgsql
AS $$
BEGIN
    NEW.attempt := 0;
    IF array_upper(NEW.errors, 1) > 20 THEN
        NEW.errors := NEW.errors[array_upper(NEW.errors, 1) - 19 : array_upper(NEW.errors, 1)];
    END IF;
    RETURN NEW;
END;
$$;

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
