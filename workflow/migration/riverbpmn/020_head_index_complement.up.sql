-- riverbpmn migration line "riverbpmn", version 20: the head-of-key indexes
-- by priority hold the priority as its complement, ascending.
--
-- An exclusive client that acquires by priority asks, for each candidate,
-- "does a job of this key come before it in my order?". Migration 010's
-- indexes held the priority descending, then River's order ascending: no
-- single row comparison spans those columns, so the probe was a range "at
-- least this priority" with the rest as a filter, and it read the heap row
-- of every job of the key at the head's priority, the head's followers
-- included (16.5 µs and 5.9 buffers a probe in the bench's camunda mode,
-- four times a probe in River's order). ~priority (= -priority - 1, which
-- cannot overflow, and river_bpmn_ctx_priority is never NULL) orders as
-- the priority descending, so "before" becomes one row comparison,
-- (~priority, priority, scheduled_at, id) < the candidate's, an index
-- condition: the probe of a head reads the key's first index entry, the
-- head itself, and stops (workflow/sql/job_get_available.sql, fetchplan's
-- HeadProbes). Same columns, same predicates, same number of entries.
--
-- The indexes are rebuilt in this migration's transaction, which blocks
-- writes to river_job while they build (as migrations 010 and 016 did).
DROP INDEX /* TEMPLATE: schema */river_bpmn_job_exclusive_instance_p;
DROP INDEX /* TEMPLATE: schema */river_bpmn_job_exclusive_root_p;

CREATE INDEX river_bpmn_job_exclusive_instance_p
    ON /* TEMPLATE: schema */river_job (
        (nullif(/* TEMPLATE: schema */river_bpmn_ctx_field(metadata, 0, 'process_instance_id'), '""'::jsonb)),
        queue, (~ /* TEMPLATE: schema */river_bpmn_ctx_priority(metadata)), priority, scheduled_at, id
    )
    WHERE state = 'available' AND /* TEMPLATE: schema */river_bpmn_ctx_exclusive(metadata);
CREATE INDEX river_bpmn_job_exclusive_root_p
    ON /* TEMPLATE: schema */river_job (
        (coalesce(
            nullif(nullif(/* TEMPLATE: schema */river_bpmn_ctx_field(metadata, 10, 'root_process_instance_id'), 'null'::jsonb), '""'::jsonb),
            nullif(/* TEMPLATE: schema */river_bpmn_ctx_field(metadata, 0, 'process_instance_id'), '""'::jsonb))),
        queue, (~ /* TEMPLATE: schema */river_bpmn_ctx_priority(metadata)), priority, scheduled_at, id
    )
    WHERE state = 'available' AND /* TEMPLATE: schema */river_bpmn_ctx_exclusive(metadata);
