-- Facts: what the database knows about why job $1 is not running, in one
-- row: the job's state, queue, kind, due time, last error and job context
-- fields; whether its queue is paused; its hold reasons with the time each
-- was added; the suspended targets that cover it (its process instance,
-- job definition or process definition); its metadata (for its expiration
-- time and hold); the client that ran its last attempt, and when. Every lookup
-- is by primary key or by the job's id.
SELECT
    j.state::text,
    j.queue,
    j.kind,
    j.scheduled_at,
    j.attempt,
    j.max_attempts,
    j.errors[array_upper(j.errors, 1)] ->> 'error',
    /* TEMPLATE: schema */river_bpmn_ctx_instance(j.metadata),
    /* TEMPLATE: schema */river_bpmn_ctx_definition(j.metadata),
    /* TEMPLATE: schema */river_bpmn_ctx_job_definition(j.metadata),
    /* TEMPLATE: schema */river_bpmn_ctx_deployment(j.metadata),
    CASE WHEN j.metadata ? 'bpmn' THEN /* TEMPLATE: schema */river_bpmn_ctx_priority(j.metadata) END,
    q.paused_at,
    coalesce((
        SELECT array_agg(h.reason ORDER BY h.reason)
        FROM /* TEMPLATE: schema */river_bpmn_hold AS h
        WHERE h.job_id = j.id
    ), '{}'::text[]),
    (
        SELECT min(h.created_at)
        FROM /* TEMPLATE: schema */river_bpmn_hold AS h
        WHERE h.job_id = j.id
    ),
    coalesce((
        SELECT array_agg(s.target_type || ':' || s.target_id ORDER BY s.target_type, s.target_id)
        FROM /* TEMPLATE: schema */river_bpmn_suspension AS s
        WHERE (s.target_type = 'process_instance' AND s.target_id = /* TEMPLATE: schema */river_bpmn_ctx_instance(j.metadata))
            OR (s.target_type = 'job_definition' AND s.target_id = /* TEMPLATE: schema */river_bpmn_ctx_job_definition(j.metadata))
            OR (s.target_type = 'process_definition' AND s.target_id = /* TEMPLATE: schema */river_bpmn_ctx_definition(j.metadata))
    ), '{}'::text[]),
    coalesce((
        SELECT array_agg(s.suspended_at ORDER BY s.target_type, s.target_id)
        FROM /* TEMPLATE: schema */river_bpmn_suspension AS s
        WHERE (s.target_type = 'process_instance' AND s.target_id = /* TEMPLATE: schema */river_bpmn_ctx_instance(j.metadata))
            OR (s.target_type = 'job_definition' AND s.target_id = /* TEMPLATE: schema */river_bpmn_ctx_job_definition(j.metadata))
            OR (s.target_type = 'process_definition' AND s.target_id = /* TEMPLATE: schema */river_bpmn_ctx_definition(j.metadata))
    ), '{}'::timestamptz[]),
    j.metadata,
    now(),
    j.attempted_by[array_upper(j.attempted_by, 1)],
    j.attempted_at
FROM
    /* TEMPLATE: schema */river_job AS j
    LEFT JOIN /* TEMPLATE: schema */river_queue AS q ON q.name = j.queue
WHERE
    j.id = $1::bigint;
