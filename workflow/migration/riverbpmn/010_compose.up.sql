-- riverbpmn migration line "riverbpmn", version 10: head-of-key indexes in
-- priority order, for exclusive clients that acquire by priority.
--
-- A fetch with exclusivity takes, of each key, only the first waiting job in
-- the client's order among the jobs the client may take (the key's head). It
-- asks "does an earlier job of this key wait?" per candidate. With River's
-- order the indexes of migration 005 answer in one index step. A client that
-- acquires by priority (Camunda's job executor) asks in priority order:
-- these indexes hold a key's waiting jobs by int64 priority (highest first),
-- then River's order, so that question is answered as quickly ("a waiting
-- job of the key with a higher priority?", "one with the same priority,
-- earlier in River's order?"), whatever the number of the key's waiting
-- jobs. Partial on available exclusive jobs, as in migration 005, so plain
-- River jobs and non-exclusive jobs cost nothing, and a job leaves them as it
-- starts.
--
-- The key is the same as in migration 005 but kept as jsonb (the JSON string
-- of the instance id; sql/exclusive_key_jsonb_*.sql), so that only the
-- priority-order probe, which asks by that expression, can use these
-- indexes: a probe in River's order always uses the index of migration 005,
-- whose order answers it in one step.
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
