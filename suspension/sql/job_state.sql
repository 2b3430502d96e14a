-- SuspensionJobState: the state of job $1.
SELECT state::text FROM /* TEMPLATE: schema */river_job WHERE id = $1::bigint;
