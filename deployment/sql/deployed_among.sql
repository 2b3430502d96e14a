-- DeployedAmong: which of job definition ids $1 a deployment holds, and
-- which deployment.
SELECT id, deployment_id
FROM /* TEMPLATE: schema */river_bpmn_job_definition
WHERE id = ANY($1::text[]) AND deployment_id IS NOT NULL
ORDER BY id;
