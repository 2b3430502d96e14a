DROP TRIGGER IF EXISTS river_bpmn_job_incident ON /* TEMPLATE: schema */river_job;

CREATE TRIGGER river_bpmn_job_incident
    AFTER UPDATE OF state ON /* TEMPLATE: schema */river_job
    FOR EACH ROW
    WHEN ((OLD.state = 'discarded') IS DISTINCT FROM (NEW.state = 'discarded')
        AND (NEW.metadata ? 'bpmn' OR OLD.metadata ? 'bpmn'))
    EXECUTE FUNCTION /* TEMPLATE: schema */river_bpmn_job_incident();

DROP TABLE IF EXISTS /* TEMPLATE: schema */river_bpmn_client_session;
