-- The next occurrence: a copy of the firing job (args, kind, queue, River
-- priority, max_attempts, tags, and its metadata with the job context),
-- without River's per-run metadata, scheduled at its due date, in state $6
-- ('available' when near due: River's fetch takes it once scheduled_at has
-- passed). River's unique index makes (timer, occurrence) unique in every
-- state. Used for timers without a template.
INSERT INTO /* TEMPLATE: schema */river_job
    (args, created_at, kind, max_attempts, metadata, priority, queue, scheduled_at, state, tags, unique_key, unique_states)
SELECT
    args, $2, kind, max_attempts,
    (metadata - 'output' - 'snoozes' - 'cancel_attempted_at' - 'bpmn_progress' - 'bpmn_executed_due'
        - 'bpmn_lifecycle' - 'bpmn_dependents') || jsonb_build_object('bpmn_timer', $3::jsonb),
    priority, queue, $4, $6::/* TEMPLATE: schema */river_job_state, tags, $5::bytea, B'11111111'
FROM /* TEMPLATE: schema */river_job
WHERE id = $1
ON CONFLICT (unique_key)
    WHERE unique_key IS NOT NULL
        AND unique_states IS NOT NULL
        AND /* TEMPLATE: schema */river_job_state_in_bitmask(unique_states, state)
    DO NOTHING
RETURNING id;
