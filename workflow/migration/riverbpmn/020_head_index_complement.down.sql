-- Back to migration 016's head-of-key indexes by priority (priority
-- descending).
DROP INDEX /* TEMPLATE: schema */river_bpmn_job_exclusive_instance_p;
DROP INDEX /* TEMPLATE: schema */river_bpmn_job_exclusive_root_p;

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
