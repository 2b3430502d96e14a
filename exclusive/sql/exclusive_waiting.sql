-- The condition "the river_job row named waiting is an available, due,
-- exclusive job of key KEY_VALUE". Written with the scope's key expression and the
-- predicate of its index (river_bpmn_job_exclusive_*, migration
-- riverbpmn/016), so the lookup is an index scan, and the key guard (the
-- key fields are strings), as the key itself has it (sql/exclusive_key.sql).
/* KEY_EXPRESSION: waiting */ = KEY_VALUE
AND /* KEY_GUARD: waiting */
AND waiting.state = 'available'
AND /* TEMPLATE: schema */river_bpmn_ctx_exclusive(waiting.metadata)
AND waiting.scheduled_at <= now()
