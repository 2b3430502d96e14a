-- IncidentsOpen: the open incidents per job definition (served by
-- river_bpmn_incident_open, migration 004).
SELECT coalesce(job_definition_id, ''), count(*)
FROM /* TEMPLATE: schema */river_bpmn_incident
WHERE resolved_at IS NULL
GROUP BY 1;
