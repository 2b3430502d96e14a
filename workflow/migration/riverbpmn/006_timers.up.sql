-- riverbpmn migration line "riverbpmn", version 6: durable timers.
--
-- One row per timer (a timer event of a process instance, or its whole
-- cycle); its occurrences are River jobs. The row is locked by whatever
-- changes the timer (a firing that creates the next occurrence, moving a due
-- date, cancelling), so those never interleave. River jobs that are not
-- timers never touch this table: it costs the rest of River nothing.
--
-- "Exactly one next occurrence" is enforced by River's own unique index
-- (river_job_unique_idx): every occurrence after the first is inserted with
-- unique_key 'riverbpmn-timer:<timer id>:<occurrence>' unique in every state,
-- so a second insert of the same occurrence conflicts whatever Go does.
CREATE TABLE /* TEMPLATE: schema */river_bpmn_timer (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    -- 'date', 'duration' or 'cycle', and the definition as written
    -- (a cycle is an ISO-8601 repeating interval or a Spring cron expression).
    type text NOT NULL CHECK (type IN ('date', 'duration', 'cycle')),
    definition text NOT NULL,
    -- When the timer was created: the anchor of Rn/<duration> cycles.
    anchor timestamptz NOT NULL,
    -- Camunda's repeat offset: the sum of the moves of due dates made with
    -- cascade, added to every later occurrence of an ISO-8601 cycle.
    repeat_offset_us bigint NOT NULL DEFAULT 0,
    -- The latest occurrence created (1 = the first) and its job. Its due date
    -- is the job's scheduled_at.
    occurrence bigint NOT NULL DEFAULT 1,
    job_id bigint,
    -- Occurrences left after the latest one; NULL when unbounded.
    repetitions_left bigint,
    -- Jobs of this timer that may still run: the latest occurrence and
    -- earlier ones still retrying. Pruned whenever an occurrence is created.
    open_job_ids bigint[] NOT NULL DEFAULT '{}',
    -- Copied from the job context of the first occurrence, for listing.
    process_instance_id text,
    activity_id text,
    job_definition_id text,
    kind text NOT NULL,
    queue text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    -- Set when no further occurrence will be created: 'finished' (last
    -- repetition, end date or a single timer fired), 'beyond year 9999',
    -- or 'cancelled'.
    ended_at timestamptz,
    end_reason text,
    CHECK ((ended_at IS NULL) = (end_reason IS NULL))
);

CREATE INDEX river_bpmn_timer_process_instance
    ON /* TEMPLATE: schema */river_bpmn_timer (process_instance_id, id)
    WHERE process_instance_id IS NOT NULL;
