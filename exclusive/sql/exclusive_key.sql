-- The exclusive key of the river_job row named river_job: the scope's key
-- expression (KEY_EXPRESSION, sql/exclusive_key_*.sql) for a job whose
-- resolved job context says it is exclusive (JSON true; the accessors are
-- migration riverbpmn/016's) and whose key fields
-- are JSON strings (KEY_GUARD); NULL otherwise (plain River jobs,
-- non-exclusive jobs, jobs of no instance, and rows whose instance id is not
-- a string: such a row cannot name an instance, so it never takes the key a
-- valid job needs). Go reads the same fields the same way
-- (workflow.ExclusiveKeyOf).
CASE WHEN /* TEMPLATE: schema */river_bpmn_ctx_exclusive(river_job.metadata)
    AND KEY_GUARD
    THEN KEY_EXPRESSION
END
