-- Held jobs go back where they were going: nothing holds them any more.
UPDATE /* TEMPLATE: schema */river_job
SET
    state = CASE
        WHEN state <> 'pending' THEN state
        WHEN metadata -> 'bpmn_hold' ->> 'release_to' IN ('available', 'scheduled', 'retryable', 'pending')
            THEN (metadata -> 'bpmn_hold' ->> 'release_to')::/* TEMPLATE: schema */river_job_state
        WHEN scheduled_at > now() THEN 'scheduled'::/* TEMPLATE: schema */river_job_state
        ELSE 'available'::/* TEMPLATE: schema */river_job_state
    END,
    metadata = metadata - 'bpmn_hold'
WHERE jsonb_typeof(metadata) = 'object' AND metadata ? 'bpmn_hold';
DROP TRIGGER IF EXISTS river_bpmn_job_insert_hold ON /* TEMPLATE: schema */river_job;
DROP FUNCTION IF EXISTS /* TEMPLATE: schema */river_bpmn_job_insert_hold();
DROP TABLE IF EXISTS /* TEMPLATE: schema */river_bpmn_suspension_schedule;
DROP TABLE IF EXISTS /* TEMPLATE: schema */river_bpmn_suspension_epoch;
DROP TABLE IF EXISTS /* TEMPLATE: schema */river_bpmn_suspension;
DROP TRIGGER IF EXISTS river_bpmn_job_record_hold ON /* TEMPLATE: schema */river_job;
DROP FUNCTION IF EXISTS /* TEMPLATE: schema */river_bpmn_job_record_hold();
DROP TRIGGER IF EXISTS river_bpmn_job_delete_hold ON /* TEMPLATE: schema */river_job;
DROP FUNCTION IF EXISTS /* TEMPLATE: schema */river_bpmn_job_delete_hold();
DROP TRIGGER IF EXISTS river_bpmn_job_state_hold ON /* TEMPLATE: schema */river_job;
DROP FUNCTION IF EXISTS /* TEMPLATE: schema */river_bpmn_job_state_hold();
DROP FUNCTION IF EXISTS /* TEMPLATE: schema */river_bpmn_hold_remove(bigint[], text);
DROP FUNCTION IF EXISTS /* TEMPLATE: schema */river_bpmn_hold_add(bigint[], text);
DROP FUNCTION IF EXISTS /* TEMPLATE: schema */river_bpmn_hold_reasons(bigint);
DROP TABLE IF EXISTS /* TEMPLATE: schema */river_bpmn_hold;
