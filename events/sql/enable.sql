-- Enable: creates the statement trigger that records job status events
-- (function river_bpmn_job_event, migration riverbpmn/009). Idempotent and
-- safe when two callers race: a trigger that already exists is kept.
DO $do$
BEGIN
    CREATE TRIGGER river_bpmn_job_event
        AFTER UPDATE ON /* TEMPLATE: schema */river_job
        REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
        FOR EACH STATEMENT
        EXECUTE FUNCTION /* TEMPLATE: schema */river_bpmn_job_event();
EXCEPTION WHEN duplicate_object THEN
    NULL;
END;
$do$;
