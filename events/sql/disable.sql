-- Disable: drops the trigger; the outbox and subscriptions stay.
DROP TRIGGER IF EXISTS river_bpmn_job_event ON /* TEMPLATE: schema */river_job;
