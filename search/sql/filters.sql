-- The predicates jobs.sql and instances.sql AND into their WHERE clause,
-- one per filter, each after a line "-- filter: NAME". $? is the filter's
-- parameter (numbered when the query is built); "t." the table alias (none
-- in jobs.sql). The states filter is built from validated constants.

-- filter: before
t.id < $?::bigint
-- filter: after
t.id > $?::bigint
-- filter: kind
t.kind = $?::text
-- filter: job_definition
/* TEMPLATE: schema */river_bpmn_ctx_has_job_definition(t.metadata, $?::text)
-- filter: process_definition
/* TEMPLATE: schema */river_bpmn_ctx_has_definition(t.metadata, $?::text)
-- filter: tenant
/* TEMPLATE: schema */river_bpmn_ctx_has(t.metadata, 9, 'tenant_id', $?::text)
-- filter: instance_prefix
/* TEMPLATE: schema */river_bpmn_ctx_instance(t.metadata) LIKE $?::text
-- filter: held
EXISTS (
    SELECT 1 FROM /* TEMPLATE: schema */river_bpmn_hold h
    WHERE h.job_id = t.id AND h.reason = $?::text
)
-- filter: created_from
t.created_at >= $?::timestamptz
-- filter: created_to
t.created_at < $?::timestamptz
-- The same three, as accessors instead of containment: used with a filter
-- on sparse states only, whose partial index is the better start (the GIN
-- index's bitmap of a common definition or tenant costs far more than
-- walking the sparse states' jobs in id order; the planner does not see it).
-- filter: job_definition_walk
/* TEMPLATE: schema */river_bpmn_ctx_job_definition(t.metadata) = $?::text
-- filter: process_definition_walk
/* TEMPLATE: schema */river_bpmn_ctx_definition(t.metadata) = $?::text
-- filter: tenant_walk
/* TEMPLATE: schema */river_bpmn_ctx_tenant(t.metadata) = $?::text
