-- riverbpmn migration line "riverbpmn", version 3: job acquisition by
-- priority, timers first and due date.
--
-- The acquisition keys are read from the job context (metadata -> 'bpmn')
-- through these functions, which never fail: a job whose context holds a bad
-- value (a priority that is a string or not an integer, a job type or
-- deployment that is not a string) gets the default (priority 0, not a
-- timer, no deployment) instead of breaking inserts or fetches for the
-- whole table. They are IMMUTABLE so that indexes can use them.

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

-- Statistics on the priority and deployment keys, so that the planner
-- estimates a priority range and the deployment filter from real data: with
-- its default guesses it takes them for very selective and sorts all
-- candidates instead of reading an ordering index (TestFetchPlansUseIndexes).
CREATE STATISTICS /* TEMPLATE: schema */river_bpmn_job_priority
    ON (/* TEMPLATE: schema */river_bpmn_priority(metadata))
    FROM /* TEMPLATE: schema */river_job;
CREATE STATISTICS /* TEMPLATE: schema */river_bpmn_job_deployment
    ON (/* TEMPLATE: schema */river_bpmn_deployment(metadata))
    FROM /* TEMPLATE: schema */river_job;

-- One index per acquisition ordering, each matching its ORDER BY exactly
-- (enabled keys first, then River's own priority, scheduled_at, id), so a
-- fetch reads the first candidates off the index instead of sorting all of
-- them. Partial on available jobs: they cost nothing once a job is fetched.
CREATE INDEX river_bpmn_fetch_p ON /* TEMPLATE: schema */river_job
    (queue, /* TEMPLATE: schema */river_bpmn_priority(metadata) DESC, priority, scheduled_at, id)
    WHERE state = 'available';
CREATE INDEX river_bpmn_fetch_t ON /* TEMPLATE: schema */river_job
    (queue, /* TEMPLATE: schema */river_bpmn_is_timer(metadata) DESC, priority, scheduled_at, id)
    WHERE state = 'available';
CREATE INDEX river_bpmn_fetch_d ON /* TEMPLATE: schema */river_job
    (queue, scheduled_at, priority, id)
    WHERE state = 'available';
CREATE INDEX river_bpmn_fetch_pt ON /* TEMPLATE: schema */river_job
    (queue, /* TEMPLATE: schema */river_bpmn_priority(metadata) DESC, /* TEMPLATE: schema */river_bpmn_is_timer(metadata) DESC, priority, scheduled_at, id)
    WHERE state = 'available';
CREATE INDEX river_bpmn_fetch_pd ON /* TEMPLATE: schema */river_job
    (queue, /* TEMPLATE: schema */river_bpmn_priority(metadata) DESC, scheduled_at, priority, id)
    WHERE state = 'available';
CREATE INDEX river_bpmn_fetch_td ON /* TEMPLATE: schema */river_job
    (queue, /* TEMPLATE: schema */river_bpmn_is_timer(metadata) DESC, scheduled_at, priority, id)
    WHERE state = 'available';
CREATE INDEX river_bpmn_fetch_ptd ON /* TEMPLATE: schema */river_job
    (queue, /* TEMPLATE: schema */river_bpmn_priority(metadata) DESC, /* TEMPLATE: schema */river_bpmn_is_timer(metadata) DESC, scheduled_at, priority, id)
    WHERE state = 'available';
