-- riverbpmn migration line "riverbpmn", version 2: job definitions and their
-- overriding priority.
--
-- Job definitions are declared in code and upserted here when a client
-- starts; the row keeps their run-time state (the overriding priority, set
-- and cleared through the management API).
CREATE TABLE /* TEMPLATE: schema */river_bpmn_job_definition (
    id text PRIMARY KEY CHECK (char_length(id) BETWEEN 1 AND 255),
    process_definition_key text NOT NULL,
    activity_id text NOT NULL,
    kind text NOT NULL,
    overriding_priority bigint,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
);

-- Unfinished jobs of one job definition, for cascading an override.
CREATE INDEX river_bpmn_job_job_definition
    ON /* TEMPLATE: schema */river_job ((metadata -> 'bpmn' ->> 'job_definition_id'), id)
    WHERE metadata ? 'bpmn';

-- The overriding priority must reach every job inserted after the override
-- committed, whichever insert call (COPY included) wrote it. So it is applied
-- here, in the inserting transaction, rather than read from a cache:
--
--   * the trigger takes a shared advisory lock on the job definition, held
--     until the inserting transaction ends; setting an override takes it
--     exclusively, so it waits for every insert already under way (their
--     jobs are then committed and visible to the cascade) and every later
--     insert waits for the override to commit and then reads it;
--   * the row is read FOR SHARE so that a REPEATABLE READ inserter whose
--     snapshot predates the override fails with a serialization error
--     instead of silently missing it.
--
-- Only jobs whose job context carries a priority are touched: the engine
-- writes none when prioritised job creation is switched off.
CREATE FUNCTION /* TEMPLATE: schema */river_bpmn_job_apply_overriding_priority()
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

CREATE TRIGGER river_bpmn_job_apply_overriding_priority
    BEFORE INSERT ON /* TEMPLATE: schema */river_job
    FOR EACH ROW
    WHEN (NEW.metadata ? 'bpmn')
    EXECUTE FUNCTION /* TEMPLATE: schema */river_bpmn_job_apply_overriding_priority();
