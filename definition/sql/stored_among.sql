-- StoredAmong: which of the job definition ids $1 are stored (List merges
-- the declared ones that are not into its pages).
SELECT id
FROM /* TEMPLATE: schema */river_bpmn_job_definition
WHERE id = ANY($1::text[]);
