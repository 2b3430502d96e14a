-- The running-key indexes of the running-row mechanism
-- (exclusive.RunningRow), one per exclusive scope: the running exclusive
-- jobs by key (exactly the key expression of
-- exclusive/sql/exclusive_key_*.sql), so that "does a job of this key run?"
-- is one index probe. Partial on running exclusive jobs: small, and a job
-- that is not running costs nothing in it. Created when a client of that
-- mechanism starts (Engine.EnableExclusiveRunningIndex). The predicate says
-- "(state = 'running') IS TRUE", as the fetch's probe does, so that the
-- probe is served by this index and never by River's fetch index.
--
-- One statement per index (CREATE INDEX CONCURRENTLY runs outside a
-- transaction).
CREATE INDEX CONCURRENTLY IF NOT EXISTS river_bpmn_job_exclusive_running_instance ON /* TEMPLATE: schema */river_job (
        (nullif(/* TEMPLATE: schema */river_bpmn_ctx_instance(metadata), ''))
    )
    WHERE (state = 'running') IS TRUE AND /* TEMPLATE: schema */river_bpmn_ctx_exclusive(metadata);

CREATE INDEX CONCURRENTLY IF NOT EXISTS river_bpmn_job_exclusive_running_root ON /* TEMPLATE: schema */river_job (
        (coalesce(nullif(/* TEMPLATE: schema */river_bpmn_ctx_root(metadata), ''),
            nullif(/* TEMPLATE: schema */river_bpmn_ctx_instance(metadata), '')))
    )
    WHERE (state = 'running') IS TRUE AND /* TEMPLATE: schema */river_bpmn_ctx_exclusive(metadata);
