-- JobDefinitionGet: the stored state of job definition $1.
SELECT id, process_definition_key, activity_id, kind, overriding_priority
FROM /* TEMPLATE: schema */river_bpmn_job_definition
WHERE id = $1::text;
