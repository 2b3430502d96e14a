-- SuspensionJobDefinitions: the stored job definitions of process
-- definition $1.
SELECT id
FROM /* TEMPLATE: schema */river_bpmn_job_definition
WHERE process_definition_key = $1::text
ORDER BY id;
