ALTER TABLE /* TEMPLATE: schema */river_bpmn_exclusive_lock
    DROP CONSTRAINT IF EXISTS river_bpmn_exclusive_lock_run_check,
    DROP COLUMN IF EXISTS run_attempts,
    DROP COLUMN IF EXISTS run_job_ids;
