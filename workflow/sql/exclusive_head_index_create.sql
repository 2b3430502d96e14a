-- Exclusive head-of-key indexes of the orders with timers first (t) and/or
-- due date (d), by priority (p) or not: for each exclusive scope (instance:
-- exclusive.ProcessInstance, root: exclusive.RootProcessInstance), a key's
-- waiting exclusive jobs in the order of an exclusive client that fetches in
-- that order. Created by Engine.EnableExclusiveHeadIndexes (which a client's
-- start calls for its own order and the scope in force) rather than by a
-- migration: each takes an entry at every insert of an available exclusive
-- job, so a database whose exclusive clients fetch in River's order, or by
-- priority alone (migrations riverbpmn/005 and 020 hold those), pays nothing
-- for them.
--
-- Each holds the key (as jsonb, exactly the expression of
-- exclusive/sql/exclusive_key_jsonb_*.sql and of migration 020's indexes),
-- the queue, the order keys ascending (a priority as its complement
-- ~priority, timers first as NOT is_timer, the due date as scheduled_at),
-- then River's order (priority, scheduled_at, id) without a column already
-- there: the fetch plan's head order (fetchplan.Plan.HeadProbes), so that
-- "an earlier waiting job of the key" is one row comparison over the
-- index's columns, and the probe of a key's head reads the key's first
-- entry only.
--
-- Each is partial on river_bpmn_head_index(metadata, ORDER) as well
-- (migration 023 says why): the head probe of its order states that
-- condition, so that the planner reads that probe over this index only.
--
-- One statement per index (CREATE INDEX CONCURRENTLY runs outside a
-- transaction); the Go side splits this file on the blank-line-separated
-- statements and runs those of the indexes asked for.
CREATE INDEX CONCURRENTLY IF NOT EXISTS river_bpmn_job_exclusive_instance_t ON /* TEMPLATE: schema */river_job (
        (nullif(/* TEMPLATE: schema */river_bpmn_ctx_field(metadata, 0, 'process_instance_id'), '""'::jsonb)),
        queue, (NOT /* TEMPLATE: schema */river_bpmn_ctx_is_timer(metadata)), priority, scheduled_at, id
    )
    WHERE state = 'available' AND /* TEMPLATE: schema */river_bpmn_ctx_exclusive(metadata)
        AND /* TEMPLATE: schema */river_bpmn_head_index(metadata, 't');

CREATE INDEX CONCURRENTLY IF NOT EXISTS river_bpmn_job_exclusive_instance_d ON /* TEMPLATE: schema */river_job (
        (nullif(/* TEMPLATE: schema */river_bpmn_ctx_field(metadata, 0, 'process_instance_id'), '""'::jsonb)),
        queue, scheduled_at, priority, id
    )
    WHERE state = 'available' AND /* TEMPLATE: schema */river_bpmn_ctx_exclusive(metadata)
        AND /* TEMPLATE: schema */river_bpmn_head_index(metadata, 'd');

CREATE INDEX CONCURRENTLY IF NOT EXISTS river_bpmn_job_exclusive_instance_pt ON /* TEMPLATE: schema */river_job (
        (nullif(/* TEMPLATE: schema */river_bpmn_ctx_field(metadata, 0, 'process_instance_id'), '""'::jsonb)),
        queue, (~ /* TEMPLATE: schema */river_bpmn_ctx_priority(metadata)), (NOT /* TEMPLATE: schema */river_bpmn_ctx_is_timer(metadata)), priority, scheduled_at, id
    )
    WHERE state = 'available' AND /* TEMPLATE: schema */river_bpmn_ctx_exclusive(metadata)
        AND /* TEMPLATE: schema */river_bpmn_head_index(metadata, 'pt');

CREATE INDEX CONCURRENTLY IF NOT EXISTS river_bpmn_job_exclusive_instance_pd ON /* TEMPLATE: schema */river_job (
        (nullif(/* TEMPLATE: schema */river_bpmn_ctx_field(metadata, 0, 'process_instance_id'), '""'::jsonb)),
        queue, (~ /* TEMPLATE: schema */river_bpmn_ctx_priority(metadata)), scheduled_at, priority, id
    )
    WHERE state = 'available' AND /* TEMPLATE: schema */river_bpmn_ctx_exclusive(metadata)
        AND /* TEMPLATE: schema */river_bpmn_head_index(metadata, 'pd');

CREATE INDEX CONCURRENTLY IF NOT EXISTS river_bpmn_job_exclusive_instance_td ON /* TEMPLATE: schema */river_job (
        (nullif(/* TEMPLATE: schema */river_bpmn_ctx_field(metadata, 0, 'process_instance_id'), '""'::jsonb)),
        queue, (NOT /* TEMPLATE: schema */river_bpmn_ctx_is_timer(metadata)), scheduled_at, priority, id
    )
    WHERE state = 'available' AND /* TEMPLATE: schema */river_bpmn_ctx_exclusive(metadata)
        AND /* TEMPLATE: schema */river_bpmn_head_index(metadata, 'td');

CREATE INDEX CONCURRENTLY IF NOT EXISTS river_bpmn_job_exclusive_instance_ptd ON /* TEMPLATE: schema */river_job (
        (nullif(/* TEMPLATE: schema */river_bpmn_ctx_field(metadata, 0, 'process_instance_id'), '""'::jsonb)),
        queue, (~ /* TEMPLATE: schema */river_bpmn_ctx_priority(metadata)), (NOT /* TEMPLATE: schema */river_bpmn_ctx_is_timer(metadata)), scheduled_at, priority, id
    )
    WHERE state = 'available' AND /* TEMPLATE: schema */river_bpmn_ctx_exclusive(metadata)
        AND /* TEMPLATE: schema */river_bpmn_head_index(metadata, 'ptd');

CREATE INDEX CONCURRENTLY IF NOT EXISTS river_bpmn_job_exclusive_root_t ON /* TEMPLATE: schema */river_job (
        (coalesce(
            nullif(nullif(/* TEMPLATE: schema */river_bpmn_ctx_field(metadata, 10, 'root_process_instance_id'), 'null'::jsonb), '""'::jsonb),
            nullif(/* TEMPLATE: schema */river_bpmn_ctx_field(metadata, 0, 'process_instance_id'), '""'::jsonb))),
        queue, (NOT /* TEMPLATE: schema */river_bpmn_ctx_is_timer(metadata)), priority, scheduled_at, id
    )
    WHERE state = 'available' AND /* TEMPLATE: schema */river_bpmn_ctx_exclusive(metadata)
        AND /* TEMPLATE: schema */river_bpmn_head_index(metadata, 't');

CREATE INDEX CONCURRENTLY IF NOT EXISTS river_bpmn_job_exclusive_root_d ON /* TEMPLATE: schema */river_job (
        (coalesce(
            nullif(nullif(/* TEMPLATE: schema */river_bpmn_ctx_field(metadata, 10, 'root_process_instance_id'), 'null'::jsonb), '""'::jsonb),
            nullif(/* TEMPLATE: schema */river_bpmn_ctx_field(metadata, 0, 'process_instance_id'), '""'::jsonb))),
        queue, scheduled_at, priority, id
    )
    WHERE state = 'available' AND /* TEMPLATE: schema */river_bpmn_ctx_exclusive(metadata)
        AND /* TEMPLATE: schema */river_bpmn_head_index(metadata, 'd');

CREATE INDEX CONCURRENTLY IF NOT EXISTS river_bpmn_job_exclusive_root_pt ON /* TEMPLATE: schema */river_job (
        (coalesce(
            nullif(nullif(/* TEMPLATE: schema */river_bpmn_ctx_field(metadata, 10, 'root_process_instance_id'), 'null'::jsonb), '""'::jsonb),
            nullif(/* TEMPLATE: schema */river_bpmn_ctx_field(metadata, 0, 'process_instance_id'), '""'::jsonb))),
        queue, (~ /* TEMPLATE: schema */river_bpmn_ctx_priority(metadata)), (NOT /* TEMPLATE: schema */river_bpmn_ctx_is_timer(metadata)), priority, scheduled_at, id
    )
    WHERE state = 'available' AND /* TEMPLATE: schema */river_bpmn_ctx_exclusive(metadata)
        AND /* TEMPLATE: schema */river_bpmn_head_index(metadata, 'pt');

CREATE INDEX CONCURRENTLY IF NOT EXISTS river_bpmn_job_exclusive_root_pd ON /* TEMPLATE: schema */river_job (
        (coalesce(
            nullif(nullif(/* TEMPLATE: schema */river_bpmn_ctx_field(metadata, 10, 'root_process_instance_id'), 'null'::jsonb), '""'::jsonb),
            nullif(/* TEMPLATE: schema */river_bpmn_ctx_field(metadata, 0, 'process_instance_id'), '""'::jsonb))),
        queue, (~ /* TEMPLATE: schema */river_bpmn_ctx_priority(metadata)), scheduled_at, priority, id
    )
    WHERE state = 'available' AND /* TEMPLATE: schema */river_bpmn_ctx_exclusive(metadata)
        AND /* TEMPLATE: schema */river_bpmn_head_index(metadata, 'pd');

CREATE INDEX CONCURRENTLY IF NOT EXISTS river_bpmn_job_exclusive_root_td ON /* TEMPLATE: schema */river_job (
        (coalesce(
            nullif(nullif(/* TEMPLATE: schema */river_bpmn_ctx_field(metadata, 10, 'root_process_instance_id'), 'null'::jsonb), '""'::jsonb),
            nullif(/* TEMPLATE: schema */river_bpmn_ctx_field(metadata, 0, 'process_instance_id'), '""'::jsonb))),
        queue, (NOT /* TEMPLATE: schema */river_bpmn_ctx_is_timer(metadata)), scheduled_at, priority, id
    )
    WHERE state = 'available' AND /* TEMPLATE: schema */river_bpmn_ctx_exclusive(metadata)
        AND /* TEMPLATE: schema */river_bpmn_head_index(metadata, 'td');

CREATE INDEX CONCURRENTLY IF NOT EXISTS river_bpmn_job_exclusive_root_ptd ON /* TEMPLATE: schema */river_job (
        (coalesce(
            nullif(nullif(/* TEMPLATE: schema */river_bpmn_ctx_field(metadata, 10, 'root_process_instance_id'), 'null'::jsonb), '""'::jsonb),
            nullif(/* TEMPLATE: schema */river_bpmn_ctx_field(metadata, 0, 'process_instance_id'), '""'::jsonb))),
        queue, (~ /* TEMPLATE: schema */river_bpmn_ctx_priority(metadata)), (NOT /* TEMPLATE: schema */river_bpmn_ctx_is_timer(metadata)), scheduled_at, priority, id
    )
    WHERE state = 'available' AND /* TEMPLATE: schema */river_bpmn_ctx_exclusive(metadata)
        AND /* TEMPLATE: schema */river_bpmn_head_index(metadata, 'ptd');
