-- Jobs: one page of the jobs matching the filters, newest first (ORDER BY
-- id DESC) or oldest first, after the cursor, at most $1. Each filter is a
-- predicate of filters.sql, ANDed in; the states are inlined as constants so
-- that the planner can match them to migration 022's partial index.
--
-- Which index serves a page: the primary key, walked in id order, for a
-- page without a selective filter or with a dense one (the hot path's
-- states available and completed, a common kind); river_bpmn_job_state_sparse
-- (state, id) for one of the sparse states (pending, scheduled, retryable,
-- discarded, cancelled), in id order; River's GIN index on metadata for a
-- job definition, process definition or tenant (containment, a bitmap of
-- that target's jobs, sorted); river_job_kind for a rare kind. The planner
-- chooses from the statistics.
SELECT
    id,
    state::text,
    kind,
    queue,
    attempt,
    max_attempts,
    priority,
    created_at,
    scheduled_at,
    finalized_at,
    /* TEMPLATE: schema */river_bpmn_ctx_instance(metadata),
    /* TEMPLATE: schema */river_bpmn_ctx_definition(metadata),
    /* TEMPLATE: schema */river_bpmn_ctx_activity(metadata),
    /* TEMPLATE: schema */river_bpmn_ctx_job_definition(metadata),
    /* TEMPLATE: schema */river_bpmn_ctx_tenant(metadata),
    left(errors[array_upper(errors, 1)] ->> 'error', 300)
FROM
    /* TEMPLATE: schema */river_job
WHERE
    /* FILTERS */
ORDER BY
    id /* DIRECTION */
LIMIT $1::integer;
