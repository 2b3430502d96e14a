-- The exclusive key of the river_job row named river_job: the scope's key
-- expression (KEY_EXPRESSION, sql/exclusive_key_*.sql) for a job whose
-- resolved job context says it is exclusive; NULL otherwise (plain River
-- jobs, non-exclusive jobs, jobs of no instance).
CASE WHEN river_job.metadata -> 'bpmn' -> 'exclusive' = 'true'::jsonb
    THEN KEY_EXPRESSION
END
