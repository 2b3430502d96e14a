-- Enabled: whether the trigger exists on the schema's river_job ($1, NULL
-- for the connection's current schema).
SELECT EXISTS (
    SELECT 1
    FROM pg_trigger t
    JOIN pg_class c ON c.oid = t.tgrelid
    JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE t.tgname = 'river_bpmn_job_event'
        AND c.relname = 'river_job'
        AND n.nspname = coalesce($1::text, current_schema())
);
