-- OpenOf: whether job $1 has an open incident.
SELECT EXISTS (
    SELECT 1 FROM /* TEMPLATE: schema */river_bpmn_incident
    WHERE job_id = $1 AND resolved_at IS NULL
);
